"""``calibrate`` with K repeats per item: its figures, its verdict, and its certificates.

The figures are checked against the consistency statistics they are built from
(:mod:`evalkit.judge.consistency`, themselves tested against published values and a coverage
simulation) and against a second implementation (statsmodels' Cohen and Fleiss kappa). The
certificates of a model judge embed every call; the forgeries below are each refused.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT
from record_factory import make_record
from repo_layout import SET, labels_sha256, make_repo
from repo_layout import only_certificate as _cert
from repo_layout import plant_certificate as _plant
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from evalkit import validate_record
from evalkit.calibration import (
    CertificateError,
    accepted_calibrations,
    calibrate,
    is_registered,
    labels_from_frame,
    register,
    verify_certificate,
)
from evalkit.errors import EvalkitError, ValidationError
from evalkit.gold.sets import LABELS, load
from evalkit.judge.consistency import (
    flip_rate,
    kappa_vs_gold,
    majority_labels,
    outcome_rates,
    repeat_kappa,
)
from evalkit.judge.parse import DIMENSION_STATUSES
from evalkit.simulate import SimulatedModelJudge

N_RES = 300
GOLD = REPO_ROOT / "gold" / SET / "v2"


@pytest.fixture(autouse=True)
def _no_lock_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_PREREG_LOCK", raising=False)


@pytest.fixture(scope="module")
def gold() -> Any:
    return load(GOLD)


@pytest.fixture(scope="module")
def simulated(gold: Any) -> tuple[pd.DataFrame, Any]:
    items = gold.items
    frame = SimulatedModelJudge(parse_failure_rate=0.05).label(
        list(items["label"]), list(items["item_id"]), repeats=4, rng=11
    )
    return frame, calibrate(frame, gold, n_resamples=N_RES)


def _gold_map(gold: Any) -> dict[str, str]:
    return dict(zip(gold.items["item_id"], gold.items["label"], strict=True))


def test_the_figures_are_the_consistency_statistics_and_match_statsmodels(
    gold: Any, simulated: tuple[pd.DataFrame, Any]
) -> None:
    frame, res = simulated
    reps = res.repeats
    ok = frame[frame["outcome"] == "ok"]
    gmap = _gold_map(gold)
    # Cohen's kappa on every labelled call: the 4 x 4 table of (gold, judge) call counts
    table = np.zeros((4, 4))
    for item, label in zip(ok["item_id"], ok["label"], strict=True):
        table[DIMENSION_STATUSES.index(gmap[item]), DIMENSION_STATUSES.index(label)] += 1
    assert res.kappa.statistic == pytest.approx(sm_cohens_kappa(table).kappa, abs=1e-12)
    assert res.kappa_ci.n == len(ok) and "resampling items" in res.kappa_ci.method
    clustered = kappa_vs_gold(frame, gmap)
    assert (res.kappa_ci.low, res.kappa_ci.high) == tuple(
        clustered.confidence_interval(level=0.95, n_resamples=N_RES, rng=0)
    )
    # the pre-registered interval is the rule's own: 2000 resamples, whatever is displayed
    assert "2000 resamples" in res.decision_kappa_ci.method
    assert res.decision_kappa_ci.statistic == res.kappa_ci.statistic
    # majority label: ties counted and left out, never broken
    maj = majority_labels(frame)
    assert reps.majority_ties == maj.ties and len(maj.ties) > 0
    assert reps.kappa_majority.statistic == pytest.approx(
        kappa_vs_gold(frame, gmap, majority=True).statistic
    )
    assert reps.kappa_majority.n == maj.n
    # Fleiss kappa across repeats over the items with >= 2 labelled repeats (their number of
    # labels varies with the parse failures; statsmodels' check below needs equal numbers)
    assert reps.repeat_kappa.statistic == repeat_kappa(frame).statistic
    multi = [g for _, g in ok.groupby("item_id") if len(g) >= 2]
    assert reps.repeat_kappa.n == len(multi)
    # flip rate, by hand
    flips = sum(g["label"].nunique() > 1 for g in multi)
    assert (reps.flips, reps.flip_rate.n) == (flips, len(multi))
    assert reps.flip_rate.statistic == pytest.approx(flip_rate(frame).statistic)
    # calls: every outcome with its n, of the calls the design asked for
    rates = outcome_rates(frame, expected=4 * len(gmap))
    assert reps.calls == {k: rates[k].k for k in ("ok", "cannot-parse", "error", "not-run")} | {
        "expected": 4 * len(gmap)
    }
    assert reps.calls["cannot-parse"] == int((frame["outcome"] == "cannot-parse").sum()) > 0
    assert reps.failed_calls.statistic == pytest.approx(1 - len(ok) / (4 * len(gmap)))
    # tables: every labelled call in the confusion matrix; per class on the majority labels
    assert int(res.confusion.to_numpy().sum()) == len(ok)
    assert int(res.per_class["n_gold"].sum()) == maj.n
    assert res.to_dict()["repeats"]["categories"] == list(LABELS)


@pytest.mark.slow
def test_fleiss_kappa_across_repeats_matches_statsmodels(gold: Any) -> None:
    items = gold.items
    frame = SimulatedModelJudge(parse_failure_rate=0.0).label(
        list(items["label"]), list(items["item_id"]), repeats=5, rng=3
    )
    res = calibrate(frame, gold, n_resamples=N_RES)
    counts = np.array(
        [
            [list(g["label"]).count(s) for s in DIMENSION_STATUSES]
            for _, g in frame.groupby("item_id")
        ]
    )
    assert counts.sum(axis=1).tolist() == [5] * len(items)
    assert res.repeats.repeat_kappa.statistic == pytest.approx(
        sm_fleiss_kappa(counts, method="fleiss"), abs=1e-12
    )
    assert res.repeats.repeat_kappa.n == len(items) and res.repeats.calls["cannot-parse"] == 0


def test_the_simulated_judge_is_recovered_not_flattered(
    simulated: tuple[pd.DataFrame, Any],
) -> None:
    """Known behaviour of the synthetic judge: its consistency is far from perfect, so the
    model-judge rule does not graduate it, and the reason names each failing figure."""
    _, res = simulated
    reps = res.repeats
    assert 0.3 < reps.repeat_kappa.statistic < 0.7 and reps.flip_rate.statistic > 0.4
    assert reps.kappa_majority.statistic > res.kappa.statistic  # the majority smooths noise
    assert not res.graduates
    assert "pre-registered Fleiss kappa across repeats CI lower bound" in res.graduation_reason
    assert "calls without a label" in res.graduation_reason  # 5% parse failures > 2%
    assert res.decision_rule["path"] == "DECISION_RULE-model-judge.json"


def _frame(gmap: dict[str, str], k: int = 3, **changes: Any) -> pd.DataFrame:
    """K calls per gold item, each saying the gold label, with ``changes``:
    ``flip_every`` (every n-th item's last repeat says another class), ``fail`` (item ids
    whose first call is cannot-parse), ``drop`` (item ids without any call), ``na`` (item ids
    whose last repeat says not-applicable)."""
    rows = []
    for n, (item, label) in enumerate(sorted(gmap.items())):
        if item in changes.get("drop", ()):
            continue
        for r in range(k):
            said, outcome = label, "ok"
            every = changes.get("flip_every")
            if every and n % every == 0 and r == k - 1:
                said = LABELS[(LABELS.index(label) + 1) % 3]
            if item in changes.get("na", ()) and r == k - 1:
                said = "not-applicable"
            if item in changes.get("fail", ()) and r == 0:
                said, outcome = None, "cannot-parse"
            rows.append({"item_id": item, "repeat": r, "label": said, "outcome": outcome})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_each_condition_of_the_model_judge_rule_decides(gold: Any) -> None:
    gmap = _gold_map(gold)
    items = sorted(gmap)
    good = calibrate(_frame(gmap, flip_every=10), gold, n_resamples=N_RES)
    assert good.graduates, good.graduation_reason
    assert "Fleiss kappa across repeats CI lower bound" in good.graduation_reason
    # 3% of the calls without a label: over the 2% the rule allows
    failing = calibrate(_frame(gmap, fail=items[:18]), gold, n_resamples=N_RES)
    assert not failing.graduates
    assert failing.graduation_reason == (
        "does not graduate: calls without a label 18/597 = 3.0% > 2%"
    )
    # repeats that disagree: every item's last repeat says another class
    noisy = calibrate(_frame(gmap, flip_every=1), gold, n_resamples=N_RES)
    assert "Fleiss kappa across repeats CI lower bound" in noisy.graduation_reason
    assert not noisy.graduates and noisy.repeats.flip_rate.statistic == 1.0
    # an item without a single call: missing, and its calls were never made
    gone = calibrate(_frame(gmap, drop=items[:1]), gold, n_resamples=N_RES)
    assert gone.missing == (items[0],) and gone.repeats.calls["not-run"] == 3
    assert "1 gold item(s) unlabeled > 0" in gone.graduation_reason


def test_not_applicable_is_a_fourth_category_and_always_a_disagreement(gold: Any) -> None:
    gmap = _gold_map(gold)
    na = sorted(gmap)[::7]
    res = calibrate(_frame(gmap, na=na), gold, n_resamples=N_RES)
    assert res.repeats.categories == (*LABELS, "not-applicable")
    assert list(res.confusion.columns) == [*LABELS, "not-applicable"]
    assert int(res.confusion["not-applicable"].sum()) == len(na)
    table = np.zeros((4, 4))
    for g, j in [(gmap[i], gmap[i]) for i in gmap for _ in range(3)]:
        table[DIMENSION_STATUSES.index(g), DIMENSION_STATUSES.index(j)] += 1
    for i in na:
        table[DIMENSION_STATUSES.index(gmap[i]), DIMENSION_STATUSES.index(gmap[i])] -= 1
        table[DIMENSION_STATUSES.index(gmap[i]), DIMENSION_STATUSES.index("not-applicable")] += 1
    assert res.kappa.statistic == pytest.approx(sm_cohens_kappa(table).kappa, abs=1e-12)
    assert set(res.disagreements["item_id"]) == set(na)


def test_which_rule_applies(gold: Any) -> None:
    gmap = _gold_map(gold)
    once = _frame(gmap, k=1)
    single = calibrate(once, gold, n_resamples=N_RES)  # K = 1 from a frame: the rule judge's rule
    assert single.repeats is None and single.decision_rule["path"] == "DECISION_RULE.json"
    as_model = calibrate(labels_from_frame(once, model_judge=True), gold, n_resamples=N_RES)
    assert as_model.decision_rule["path"] == "DECISION_RULE-model-judge.json"
    assert as_model.repeats.repeat_kappa.statistic is None and not as_model.graduates
    rule = GOLD.parent / "DECISION_RULE-model-judge.json"
    forced = calibrate(once.drop(columns=["repeat"]), gold, decision_rule=rule, n_resamples=N_RES)
    assert forced.repeats is not None and not forced.graduates
    with pytest.raises(EvalkitError, match="holds 2 judges"):
        two = pd.concat([once.assign(judge="a"), once.assign(judge="b")])
        calibrate(two, gold, n_resamples=N_RES)
    named = calibrate(pd.concat([once.assign(judge="a"), once.assign(judge="b")]), gold,
                      judge="b", n_resamples=N_RES)  # fmt: skip
    assert named.judge == "b"


# --------------------------------------------------------------------------- certificates


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = make_repo(tmp_path_factory.mktemp("repo"))
    gs = load(repo / "gold" / SET / "v2")
    gmap = _gold_map(gs)
    frame = _frame(gmap, flip_every=10, fail=sorted(gmap)[:1]).assign(judge="openai:m")
    result = calibrate(frame, gs, n_resamples=N_RES, root=repo)
    return {"repo": repo, "result": result, "cert": register(result)}


@pytest.fixture
def repo_with_cert(minted: dict[str, Any], tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(minted["repo"], dest)
    return dest


def _relabel(body: dict[str, Any]) -> None:
    body["labels"]["sha256"] = labels_sha256(body["labels"]["items"])


def test_a_model_judge_certificate_embeds_every_call_and_re_checks(
    minted: dict[str, Any],
) -> None:
    repo, result, cert = minted["repo"], minted["result"], minted["cert"]
    body = json.loads(_cert(repo).read_text(encoding="utf-8"))
    assert body["labels"]["form"] == "repeats"
    items = body["labels"]["items"]
    assert len(items) == 3 * 199 and set(items[0]) == {"item_id", "repeat", "label", "outcome"}
    assert {i["outcome"] for i in items} == {"ok", "cannot-parse"}
    assert body["decision_rule"]["path"] == f"gold/{SET}/DECISION_RULE-model-judge.json"
    assert body["result"]["repeats"]["calls"]["cannot-parse"] == 1
    assert body["result"]["graduation"]["repeat_kappa"]["ci"]["low"] >= 0.8
    assert cert.judge == "openai:m" and is_registered(result)
    accepted = accepted_calibrations(repo)
    assert accepted.entries == {cert.entry}  # it re-checks ...
    # ... but its calls came from a table naming a judge, not from that judge's run log: it
    # has no judge identity, so no record's judge (whatever its block says) can claim it
    assert body["judge"]["origin"] == "file" and body["judge"]["identity"] is None
    rec = make_record()
    rec["dimensions"][-1].update(
        calibration_status=cert.calibration_status, calibration_ref=cert.calibration_ref
    )
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(rec, accepted=accepted)


def _drop_call(body: dict[str, Any]) -> None:
    del body["labels"]["items"][5]


def _flip_call(body: dict[str, Any]) -> None:
    call = next(i for i in body["labels"]["items"] if i["label"] == "fail")
    call["label"] = "pass"


def _hide_failure(body: dict[str, Any]) -> None:
    call = next(i for i in body["labels"]["items"] if i["outcome"] == "cannot-parse")
    gold = next(i for i in body["labels"]["items"] if i["item_id"] == call["item_id"])
    call.update(outcome="ok", label=gold["label"] if gold["label"] else "pass")


def _call_as_single(body: dict[str, Any]) -> None:
    del body["labels"]["form"]


def _other_rule(body: dict[str, Any]) -> None:
    body["decision_rule"]["path"] = f"gold/{SET}/DECISION_RULE.json"


def _better_consistency(body: dict[str, Any]) -> None:
    body["result"]["repeats"]["repeat_kappa"]["statistic"] = 0.999


def _huge_repeat(body: dict[str, Any]) -> None:
    body["labels"]["items"][0]["repeat"] = 10**6


def _extra_key(body: dict[str, Any]) -> None:
    body["labels"]["items"][0]["weight"] = 2


def _other_form(body: dict[str, Any]) -> None:
    body["labels"]["form"] = "majority"


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (_drop_call, "does not reproduce it"),
        (_flip_call, "does not reproduce it"),
        (_hide_failure, "does not reproduce it"),
        (_call_as_single, r"labels\.items\[0\] is not \{item_id, label\}"),
        (_other_rule, "does not reproduce it"),
        (_better_consistency, r"does not reproduce it \(result\.repeats\.repeat_kappa"),
        (_huge_repeat, r"repeat \(0\.\.999\)"),
        (_extra_key, r"labels\.items\[0\] is not \{item_id, repeat"),
        (_other_form, "labels.form must be 'repeats'"),
    ],
)
@pytest.mark.slow
def test_a_tampered_model_judge_certificate_is_refused(
    repo_with_cert: Path, tamper: Any, reason: str
) -> None:
    body = json.loads(_cert(repo_with_cert).read_text(encoding="utf-8"))
    changed = copy.deepcopy(body)
    tamper(changed)
    _relabel(changed)  # the labels hash is recomputed, as a forger would
    assert changed != body
    path = _plant(repo_with_cert, changed)
    with pytest.raises(CertificateError, match=rf"{path.name}: refused: .*{reason}"):
        verify_certificate(path, root=repo_with_cert)
    assert len(accepted_calibrations(repo_with_cert).entries) == 1  # only the real one


def test_a_model_judge_rule_that_changed_refuses_its_certificates(repo_with_cert: Path) -> None:
    rule = repo_with_cert / "gold" / SET / "DECISION_RULE-model-judge.json"
    body = json.loads(rule.read_text(encoding="utf-8"))
    body["graduate_if"]["repeat_kappa_ci_low_at_least"] = 0.5
    rule.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    with pytest.raises(CertificateError, match=r"DECISION_RULE-model-judge\.json"):
        verify_certificate(_cert(repo_with_cert), root=repo_with_cert)
