"""Judge calibration against the frozen gold set: agreement, CIs, graduation, minted status.

Calibrations run in a temporary copy of the repository layout (``repo_layout.make_repo``: the
gold set and a lock for it), so a result is mintable there and nothing is ever written into
the repository's ``calibrations/``. Certificates themselves: ``test_calibration_certificates``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from record_factory import judge_block
from repo_layout import SET, clean_env, make_repo

from evalkit.calibration import (
    accepted_calibrations,
    calibrate,
    read_judge_labels,
    register,
    rule_judge_labels,
)
from evalkit.cli.main import main
from evalkit.errors import DegenerateDataWarning, EvalkitError, ValidationError
from evalkit.gold.sets import LABELS, load
from evalkit.record.calibration_status import ALLOWED_UNCALIBRATED, is_accepted, mint_status
from tests.conftest import REPO_ROOT

N_RES = 400  # enough for the assertions below; the pre-registered run uses the rule's 2000


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def gold(repo: Path):
    return load(repo / "gold" / SET / "v1")


GOLD_DIR = REPO_ROOT / "gold" / SET / "v1"


pytestmark = pytest.mark.usefixtures("no_lock_or_registry_env")


def _cal(labels: pd.DataFrame, gold, **kwargs):
    """calibrate() against the repository copy the gold set lives in (its lock, its root)."""
    return calibrate(labels, gold, root=gold.path.parents[2], **kwargs)


def _labels(ids, labels) -> pd.DataFrame:
    return pd.DataFrame({"item_id": list(ids), "label": list(labels)})


def _confusion_judge(gold_labels: list[str], q: float, rng: np.random.Generator) -> list[str]:
    """Keep the gold label with probability q, else draw from the gold marginal distribution."""
    cats = np.array(LABELS)
    p = np.array([np.mean(np.array(gold_labels) == c) for c in LABELS])
    keep = rng.random(len(gold_labels)) < q
    other = rng.choice(cats, size=len(gold_labels), p=p)
    return [g if k else str(o) for g, k, o in zip(gold_labels, keep, other, strict=True)]


def _population_kappa(gold_labels: list[str], q: float) -> float:
    """Kappa of the expected joint table of the confusion process (computed, not assumed)."""
    p = np.array([np.mean(np.array(gold_labels) == c) for c in LABELS])
    table = q * np.diag(p) + (1 - q) * np.outer(p, p)
    po = np.trace(table)
    pe = table.sum(axis=1) @ table.sum(axis=0)
    return float((po - pe) / (1 - pe))


def _kappa_by_hand(conf: pd.DataFrame) -> float:
    t = conf.to_numpy(dtype=float).copy()
    t /= t.sum()
    po, pe = np.trace(t), t.sum(axis=1) @ t.sum(axis=0)
    return float((po - pe) / (1 - pe))


# --------------------------------------------------------------------------- the acceptance


def test_a_judge_identical_to_gold_graduates(gold) -> None:
    items = gold.items
    res = _cal(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert res.kappa.statistic == pytest.approx(1.0)
    assert res.kappa_ci.low == pytest.approx(1.0)
    assert res.n == len(items) and res.n_missing == 0
    assert res.graduates
    assert res.calibration_status.startswith("calibrated:instruction-adherence-v1:")
    assert res.calibration_status.endswith(res.calibration_ref[:8])
    assert len(res.calibration_ref) == 64
    assert res.disagreements.empty
    assert (res.per_class["sensitivity"] == 1).all() and (res.per_class["specificity"] == 1).all()


def test_a_random_judge_has_kappa_ci_around_zero_and_does_not_graduate(gold) -> None:
    rng = np.random.default_rng(7)
    items = gold.items
    res = _cal(_labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES)
    assert res.kappa_ci.low < 0 < res.kappa_ci.high
    assert abs(res.kappa.statistic) < 0.15
    assert not res.graduates
    assert res.calibration_status == "uncalibrated"
    assert "lower bound" in res.graduation_reason


@pytest.mark.parametrize(("q", "seed"), [(0.3, 11), (0.6, 12), (0.9, 13)])
def test_simulated_judges_recover_their_population_kappa(gold, q: float, seed: int) -> None:
    items = gold.items
    gold_labels = list(items["label"])
    kappa_pop = _population_kappa(gold_labels, q)
    assert kappa_pop == pytest.approx(q)  # the process keeps both marginals at the gold's
    judge = _confusion_judge(gold_labels, q, np.random.default_rng(seed))
    res = _cal(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
    assert res.kappa_ci.low <= kappa_pop <= res.kappa_ci.high, (kappa_pop, res.kappa_ci)
    # graduation follows the pre-registered rule: only the lower bound >= 0.6 graduates
    assert res.graduates == (res.kappa_ci.low >= 0.6)


@pytest.mark.slow
@pytest.mark.parametrize("q", [0.3, 0.6, 0.9])
def test_simulated_judges_ci_coverage(gold, q: float) -> None:
    """Across 60 simulated judges, the 95% BCa interval covers the population kappa >= 85%."""
    items = gold.items
    gold_labels = list(items["label"])
    kappa_pop = _population_kappa(gold_labels, q)
    rng = np.random.default_rng(2026)
    hits = 0
    reps = 60
    for r in range(reps):
        judge = _confusion_judge(gold_labels, q, rng)
        res = _cal(_labels(items["item_id"], judge), gold, n_resamples=300, rng=r)
        hits += res.kappa_ci.low <= kappa_pop <= res.kappa_ci.high
    assert hits / reps >= 0.85, hits


# --------------------------------------------------------------------------- the figures


def test_figures_agree_with_a_second_computation(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.7, np.random.default_rng(3))
    res = _cal(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
    conf = res.confusion
    assert list(conf.index) == list(LABELS) and list(conf.columns) == list(LABELS)
    assert int(conf.to_numpy().sum()) == res.n
    assert res.kappa.statistic == pytest.approx(_kappa_by_hand(conf))
    t = conf.to_numpy(dtype=float)
    n = t.sum()
    po = np.trace(t) / n
    assert res.pabak.statistic == pytest.approx((3 * po - 1) / 2)  # Byrt et al. (1993), q = 3
    for c, label in enumerate(LABELS):
        a = t[c, c]
        b = t[c].sum() - a
        cc = t[:, c].sum() - a
        d = n - a - b - cc
        row = res.prevalence_bias.set_index("class").loc[label]
        assert row["prevalence_index"] == pytest.approx(abs(a - d) / n)
        assert row["bias_index"] == pytest.approx(abs(b - cc) / n)
        assert row["pabak_low"] <= row["pabak"] <= row["pabak_high"]
        pc = res.per_class.set_index("class").loc[label]
        assert pc["sensitivity"] == pytest.approx(a / (a + b))
        assert pc["specificity"] == pytest.approx(d / (d + cc))
        assert pc["sensitivity_low"] <= pc["sensitivity"] <= pc["sensitivity_high"]
    assert res.prevalence_index[LABELS[0]] == res.prevalence_bias.loc[0, "prevalence_index"]
    per_rule = res.per_rule.set_index("rule")
    assert set(per_rule.index) == set(items["rule"])
    assert int(per_rule["n"].sum()) == res.n
    assert len(res.disagreements) == res.n - int(np.trace(conf.to_numpy()))
    for est in (res.kappa_ci, res.ac1_ci, res.pabak_ci):
        assert est.low <= est.statistic <= est.high


def test_to_dict_is_json_simple_and_every_figure_has_its_ci(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.8, np.random.default_rng(5))
    d = _cal(_labels(items["item_id"], judge), gold, n_resamples=N_RES).to_dict()
    json.dumps(d, allow_nan=False)
    for key in ("kappa", "ac1", "pabak"):
        assert set(d[key]["ci"]) == {"low", "high", "level"} and d[key]["ci"]["low"] is not None
    for row in d["per_class"]:
        assert row["sensitivity_low"] is not None and row["specificity_high"] is not None
    for row in d["per_rule"]:
        assert row["agreement_low"] is not None
    for row in d["prevalence_bias_one_vs_rest"]:
        assert row["bias_index_high"] is not None
    assert d["gold"]["sha256"] == gold.sha256
    assert d["calibration_status"] in ("uncalibrated",) or d["calibration_status"].startswith(
        "calibrated:"
    )


def test_items_needed_for_width(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.6, np.random.default_rng(9))
    res = _cal(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
    n10, n20 = res.items_needed_for_width(0.1), res.items_needed_for_width(0.2)
    assert n10 > n20 > 0
    assert n10 == pytest.approx(4 * n20, rel=0.05)  # width scales as 1 / sqrt(n)
    # a perfect judge has zero large-sample variance: no finite plan, said as None
    perfect = _cal(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert perfect.items_needed_for_width(0.1) is None


def test_the_calibration_ref_is_deterministic_and_bound_to_the_gold(gold, tmp_path: Path) -> None:
    items = gold.items
    lab = _labels(items["item_id"], items["label"])
    a = _cal(lab, gold, n_resamples=N_RES)
    b = _cal(lab, gold, n_resamples=N_RES)
    assert a.calibration_ref == b.calibration_ref and a.calibration_status == b.calibration_status
    core = a.to_dict()
    assert core["gold"]["sha256"] == gold.sha256  # the hashed body carries the gold's hash
    other = _cal(lab.iloc[::-1].reset_index(drop=True), gold, n_resamples=N_RES, rng=1)
    assert other.calibration_ref != a.calibration_ref  # another run (seed) is another result


# --------------------------------------------------------------------------- inputs


def test_missing_items_are_counted_never_guessed(gold) -> None:
    items = gold.items
    labels = list(items["label"])
    for i in range(0, 20, 2):
        labels[i] = None
    res = _cal(_labels(items["item_id"], labels), gold, n_resamples=N_RES)
    assert res.n_missing == 10 and res.n == len(items) - 10
    assert set(res.missing) == set(items["item_id"].iloc[0:20:2])
    assert res.kappa.statistic == pytest.approx(1.0)
    assert not res.graduates and "unlabeled" in res.graduation_reason
    # items absent from the frame are missing too
    res2 = _cal(_labels(items["item_id"][5:], items["label"][5:]), gold, n_resamples=N_RES)
    assert res2.n_missing == 5


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"item_id": ["nope"], "label": ["pass"]}), "not in the gold set"),
        (pd.DataFrame({"item_id": ["ia-001"], "label": ["PASS"]}), "not one of"),
        (pd.DataFrame({"item_id": ["ia-001", "ia-001"], "label": ["pass", "pass"]}), "twice"),
        (pd.DataFrame({"item": ["ia-001"], "label": ["pass"]}), "item_id"),
    ],
)
def test_bad_judge_labels_are_refused(gold, frame: pd.DataFrame, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        _cal(frame, gold, n_resamples=N_RES)


def test_rule_judge_labels_every_item(gold) -> None:
    lab = rule_judge_labels(gold)
    assert list(lab["item_id"]) == list(gold.items["item_id"])
    assert set(lab["label"]) <= set(LABELS)
    res = _cal(lab[["item_id", "label"]], gold, n_resamples=N_RES)
    assert res.n_missing == 0
    for row in res.disagreements.to_dict("records"):
        assert row["gold"] != row["judge"] and row["rationale"]


def test_calibration_refuses_when_the_locked_gold_changed(
    gold, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "lock.json"
    lock.write_text(
        json.dumps(
            {"schema": 1, "entries": [{"kind": "gold", "name": "instruction-adherence/v1",
                                       "path": "gold/instruction-adherence/v1", "sha256": "0" * 64}]}
        ),
        encoding="utf-8",
    )  # fmt: skip
    monkeypatch.setenv("EVALKIT_PREREG_LOCK", str(lock))
    items = gold.items
    with pytest.raises(EvalkitError, match=r"instruction-adherence/v1.*evalkit gold freeze"):
        _cal(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)


# --------------------------------------------------------------------------- status & minting


def _record(judge_dim: dict) -> dict:
    dims = [
        {"id": "verification-evidence", "method": "deterministic", "status": "pass",
         "evidence": "attribution: time-window. 1 quality_gate event(s) in window, all exit_code=0."},
        judge_dim,
    ]  # fmt: skip
    return {
        "schema_version": 1,
        "record_kind": "session-eval",
        "run_id": "main-2026-10-01-session-1-eval-20261001T000000000Z",
        "session_id": "main-2026-10-01-session-1",
        "standard_version": "aiat-llm-eval/1.0",
        "rubric_version": "rubric-v2",
        "provenance": {"rubric_sha256": "a" * 64, "engine_commit": None},
        "model": {"id": "test-model", "source": "config"},
        "harness": {"plugin_version": "0", "platform": "linux", "host_class": None,
                    "hostname_hash": None},
        "kpis": {k: None for k in ("duration_seconds", "total_waves", "total_agents",
                                   "token_input", "token_output", "carryover")},
        "dimensions": dims,
        "handle": None,
        "anonymized": True,
        "timestamp": "2026-10-01T00:00:00.000Z",
    }  # fmt: skip


def _base_judge_dim() -> dict:
    return {"id": "instruction-adherence", "method": "judge", "status": "pass",
            "evidence": "rule 6: no named deviation", "advisory": True}  # fmt: skip


def test_a_graduating_calibration_is_not_accepted_until_registered(
    gold, repo: Path, tmp_path: Path
) -> None:
    """No in-process memory: calibrate() mints nothing; only a registered certificate does."""
    from evalkit import validate_record

    items = gold.items
    res = _cal(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert res.graduates and res.mintable
    status, ref = res.calibration_status, res.calibration_ref
    assert status.startswith(f"calibrated:{SET}-v1:") and status.endswith(ref[:8])
    dim = {**_base_judge_dim(), "calibration_status": status, "calibration_ref": ref}
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(_record(dim))  # the graduating calibrate() above is not remembered
    assert "uncalibrated" in ALLOWED_UNCALIBRATED
    assert accepted_calibrations(repo).entries == frozenset()
    assert not is_accepted(
        "instruction-adherence", status, ref, accepted=accepted_calibrations(repo)
    )
    cert = register(res)
    try:
        accepted = accepted_calibrations(repo)
        assert accepted.entries == {("instruction-adherence", status, ref)} == {cert.entry}
        # these labels came from a table, not from a judge: no judge identity can claim them
        assert cert.origin == "file" and cert.identity is None
        for judge in (None, judge_block()):
            with pytest.raises(ValidationError, match="is not an accepted calibration status"):
                validate_record(_record({**dim, "judge": judge}), accepted=accepted)
        with pytest.raises(ValidationError, match=r"\(report-quality\)\.calibration_status"):
            validate_record(_record({**dim, "id": "report-quality"}), accepted=accepted)
        wrong = ref[:-1] + ("0" if ref[-1] != "0" else "1")  # same hash8, another reference
        for other in (wrong, ref[:8], None):
            assert not is_accepted("instruction-adherence", status, other, accepted=accepted)
        assert not is_accepted("instruction-adherence", "calibrated", ref, accepted=accepted)
    finally:
        assert cert.path is not None
        cert.path.unlink()  # the module's repository copy stays without certificates


def test_register_refuses_a_judge_that_did_not_graduate(gold, repo: Path) -> None:
    items = gold.items
    rng = np.random.default_rng(1)
    res = _cal(_labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES)
    assert not res.graduates and res.calibration_status == "uncalibrated"
    with pytest.raises(EvalkitError, match="did not graduate"):
        register(res)
    assert not list((repo / "calibrations").glob("*.json"))


def test_a_non_graduating_calibration_mints_nothing_validate_record_accepts(
    gold, repo: Path
) -> None:
    from evalkit import validate_record

    items = gold.items
    rng = np.random.default_rng(1)
    res = _cal(_labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES)
    assert not res.graduates and res.calibration_status == "uncalibrated"
    forged = mint_status(gold.tag, res.calibration_ref)  # the status it would have minted
    dim = {**_base_judge_dim(), "calibration_status": forged,
           "calibration_ref": res.calibration_ref}  # fmt: skip
    with pytest.raises(ValidationError, match=r"calibration_status: .* is not an accepted"):
        validate_record(_record(dim), accepted=accepted_calibrations(repo))


# --------------------------------------------------------------------------- CLI


def _write_labels(path: Path, ids, labels) -> Path:
    rows = zip(ids, labels, strict=True)
    path.write_text(
        "".join(json.dumps({"item_id": i, "label": x}) + "\n" for i, x in rows), "utf-8"
    )
    return path


def test_calibrate_cli_writes_json(gold, tmp_path: Path) -> None:
    items = gold.items
    labels_file = _write_labels(tmp_path / "judge.jsonl", items["item_id"], items["label"])
    assert read_judge_labels(labels_file).shape == (len(items), 2)
    out = tmp_path / "result.json"
    argv = ["calibrate", "--labels", str(labels_file), "--gold", str(GOLD_DIR), "--out", str(out),
            "--n-resamples", str(N_RES), "--no-lock"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    # --no-lock: nothing pre-registered was checked, so it is shown and never graduates
    assert result["graduates"] is False and result["n"] == len(items)
    assert result["graduation_reason"].startswith("not pre-registered: run with --no-lock")
    assert math.isclose(result["kappa"]["statistic"], 1.0)
    assert result["mintable"] is False and result["calibration_ref"] is None
    # a labels file names no judge, and never a local path
    assert result["judge_info"] == {"identity": None, "identity_sha256": None, "origin": "file",
                                    "base_url_host": None, "run_log_sha256": None,
                                    "source": "judge.jsonl"}  # fmt: skip
    assert result["judge"] == "judge.jsonl"


def test_calibrate_cli_register_refuses_non_graduate(gold, tmp_path: Path) -> None:
    items = gold.items
    csv = tmp_path / "judge.csv"
    pd.DataFrame({"item_id": items["item_id"], "label": ["pass"] * len(items)}).to_csv(
        csv, index=False
    )
    argv = ["calibrate", "--labels", str(csv), "--gold", str(gold.path), "--n-resamples", "200",
            "--out", str(tmp_path / "r.json"), "--register", "--no-lock"]  # fmt: skip
    assert main(argv) == 1  # EvalkitError -> exit 1
    assert (tmp_path / "r.json").exists()  # computed and shown, never minted


def test_a_gold_copy_outside_the_repository_is_computed_never_minted(
    repo: Path, tmp_path: Path
) -> None:
    import shutil

    copy_dir = tmp_path / "elsewhere" / SET
    shutil.copytree(repo / "gold" / SET / "v1", copy_dir / "v1")
    shutil.copy(repo / "gold" / SET / "DECISION_RULE.json", copy_dir)
    other = load(copy_dir)
    items = other.items
    res = calibrate(_labels(items["item_id"], items["label"]), other, n_resamples=N_RES, root=repo)
    assert res.graduates and not res.mintable
    assert "outside the repository" in res.mint_reason
    assert res.calibration_status == "uncalibrated" and res.calibration_ref is None


def test_pabak_carries_per_class_indices_and_the_judge_is_named(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.7, np.random.default_rng(4))
    res = _cal(_labels(items["item_id"], judge), gold, judge="sim-0.7", n_resamples=N_RES)
    assert res.pabak.prevalence_index_per_class == res.prevalence_index
    assert res.pabak.bias_index_per_class == res.bias_index
    assert res.to_dict()["judge"] == "sim-0.7"
    renamed = _cal(_labels(items["item_id"], judge), gold, judge="other", n_resamples=N_RES)
    assert renamed.calibration_ref != res.calibration_ref


def test_a_lone_version_copy_uses_the_repository_decision_rule(tmp_path: Path) -> None:
    import shutil

    from evalkit.gold.sets import resolve

    newest = resolve(GOLD_DIR.parent)
    lone = tmp_path / "lone" / newest.name
    shutil.copytree(newest, lone)
    gs = load(lone)
    items = gs.items
    res = calibrate(_labels(items["item_id"], items["label"]), gs, n_resamples=N_RES, no_lock=True)
    repo_rule = json.loads((GOLD_DIR.parent / "DECISION_RULE.json").read_text(encoding="utf-8"))
    assert res.decision_rule["graduate_if"] == repo_rule["graduate_if"]
    assert res.decision_rule["sha256"] == gs.manifest["decision_rules"]["DECISION_RULE.json"]


def test_graduation_is_judged_on_the_pre_registered_interval_whatever_is_displayed(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.62, np.random.default_rng(21))
    lab = _labels(items["item_id"], judge)
    pre = _cal(lab, gold)  # the decision rule's own level, resamples and seed
    shown = _cal(lab, gold, level=0.5, n_resamples=N_RES, rng=5)
    assert shown.kappa_ci.level == 0.5
    assert shown.kappa_ci.high - shown.kappa_ci.low < pre.kappa_ci.high - pre.kappa_ci.low
    assert shown.graduates == pre.graduates
    assert shown.graduation_reason == pre.graduation_reason


def test_a_calibrations_path_that_is_not_a_folder_is_an_evalkit_error(gold, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "calibrations").write_text("not a folder", encoding="utf-8")
    gs = load(repo / "gold" / SET / "v1")
    items = gs.items
    res = _cal(_labels(items["item_id"], items["label"]), gs, n_resamples=N_RES)
    with pytest.raises(EvalkitError, match=r"calibrations.*not a folder"):
        register(res)
    assert (repo / "calibrations").read_text(encoding="utf-8") == "not a folder"


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging: a read that blocks (a FIFO) raises after 30 s."""

    def timeout(*_: object) -> None:
        raise TimeoutError("blocked on a read: the reader waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_fifo_or_folder_among_the_certificates_is_refused_never_waited_on(
    tmp_path: Path, alarm: None
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "calibrations").mkdir()
    fifo = repo / "calibrations" / ("a" * 64 + ".json")
    os.mkfifo(fifo)
    (repo / "calibrations" / ("b" * 64 + ".json")).mkdir()
    accepted = accepted_calibrations(repo)
    assert accepted.entries == frozenset()
    reasons = dict(accepted.refused)
    assert "named pipe (FIFO)" in reasons[fifo.name]
    assert "directory" in reasons["b" * 64 + ".json"]


def test_missing_judge_labels_file_is_an_evalkit_error(tmp_path: Path) -> None:
    for name in ("missing.csv", "missing.jsonl"):
        with pytest.raises(EvalkitError, match=rf"judge labels file '.*{name}': no such file"):
            read_judge_labels(tmp_path / name)


def test_a_lone_surrogate_in_a_labels_line_is_an_error_naming_line_and_field(
    tmp_path: Path,
) -> None:
    """Hypothesis found it: pandas' string columns raised UnicodeEncodeError on ``\\ud800``."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"item_id": "a", "label": "pass"}\n\n{"item_id": "b", "label": "pass", '
        '"run_id": "s\\ud800-1"}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        EvalkitError, match=r"labels\.jsonl:3: field 'run_id' holds a lone surrogate"
    ):
        read_judge_labels(labels)


def test_calibrate_cli_prints_undefined_kappa_instead_of_crashing(
    gold, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QA: 50 items, gold and judge all 'pass' -> kappa None -> TypeError formatting None."""
    items = gold.items
    ids = list(items.loc[items["label"] == "pass", "item_id"])[:50]
    assert len(ids) == 50
    csv = tmp_path / "labels50.csv"
    pd.DataFrame({"item_id": ids, "label": ["pass"] * 50}).to_csv(csv, index=False)
    out = tmp_path / "r.json"
    argv = ["calibrate", "--labels", str(csv), "--gold", str(GOLD_DIR), "--n-resamples", "200",
            "--out", str(out), "--no-lock"]  # fmt: skip
    assert main(argv) == 0  # the result was written; the judge simply does not graduate
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        "kappa undefined (chance agreement is 1: gold and judge use one label only on the "
        "50 labeled items); CI undefined (95% BCa, 200 resamples, seed 0); graduation judged "
        "on the pre-registered interval (95% BCa, 2000 resamples, seed 0): lower bound "
        "undefined; n=50" in err
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["kappa"]["statistic"] is None and result["kappa"]["ci"]["low"] is None
    assert result["graduates"] is False and result["calibration_status"] == "uncalibrated"


def test_describe_kappa_formats_a_defined_kappa_and_an_undefined_interval(gold) -> None:
    from evalkit.cli.calibrate import describe_kappa

    items = gold.items
    res = _cal(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert describe_kappa(res) == f"{res.kappa_ci.statistic:.3f} [1.000, 1.000]"
    half = dataclasses.replace(res, kappa_ci=dataclasses.replace(res.kappa_ci, low=None))
    assert describe_kappa(half) == "1.000 [CI undefined (the bootstrap is degenerate)]"


# --------------------------------------------------------------------------- labels files


def test_a_labels_fifo_is_refused_never_waited_on(tmp_path: Path, alarm: None) -> None:
    """Finding 12 (calibrate --labels): a FIFO as the labels file is refused at once."""
    for name in ("labels.csv", "labels.jsonl"):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        with pytest.raises(EvalkitError, match=rf"judge labels file .*{name}.*named pipe"):
            read_judge_labels(fifo)


def test_calibrate_cli_with_a_labels_fifo_exits_1_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "labels.csv"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "evalkit", "calibrate", "--labels", str(fifo), "--gold",
            str(GOLD_DIR), "--no-lock"]  # fmt: skip
    env = clean_env(PYTHONPATH=str(REPO_ROOT))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert out.returncode == 1 and "named pipe" in out.stderr and "Traceback" not in out.stderr


def test_invalid_utf8_in_a_labels_csv_names_the_file_and_line(tmp_path: Path) -> None:
    """Finding 13 (calibrate --labels): a clear error, never a UnicodeDecodeError."""
    csv = tmp_path / "labels.csv"
    csv.write_bytes(b"item_id,label\nia-001,pass\nia-002,p\xffss\n")
    with pytest.raises(EvalkitError, match=r"labels\.csv'?: line 3: invalid UTF-8"):
        read_judge_labels(csv)
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_bytes(b'{"item_id": "ia-001", "label": "pass"}\n{"item_id": "\xff"}\n')
    with pytest.raises(EvalkitError, match=r"labels\.jsonl:2: .*invalid UTF-8"):
        read_judge_labels(jsonl)
    argv = ["calibrate", "--labels", str(csv), "--gold", str(GOLD_DIR), "--no-lock"]
    assert main(argv) == 1


def test_a_deeply_nested_labels_line_is_a_clear_error(tmp_path: Path) -> None:
    """Finding 11 (calibrate): one line of '[' x 100000 is named, never a RecursionError."""
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text('{"item_id": "ia-001", "label": "pass"}\n' + "[" * 100_000 + "\n", "utf-8")
    with pytest.raises(EvalkitError, match=r"labels\.jsonl:2: .*nested too deeply"):
        read_judge_labels(jsonl)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "not a readable CSV"), (b'item_id,label\n"ia-001,pass\n', "not a readable CSV"),
     (b"a,b\n1,2\n", "column 'item_id' missing")],
)  # fmt: skip
def test_a_malformed_labels_csv_is_a_clear_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    csv = tmp_path / "labels.csv"
    csv.write_bytes(content)
    with pytest.raises(EvalkitError, match=message):
        read_judge_labels(csv)


def test_two_labelled_items_give_no_interval_and_say_why(gold) -> None:
    # two items in perfect agreement: kappa 1 with a standard error of 0 from two items, which
    # would be the zero-width interval [1, 1]; too few items, so the interval is undefined
    from evalkit.cli.calibrate import describe_kappa

    items = gold.items
    first = items.drop_duplicates("label").head(2)
    labels = [
        lab if iid in set(first["item_id"]) else None
        for iid, lab in zip(items["item_id"], items["label"], strict=True)
    ]
    with pytest.warns(DegenerateDataWarning, match="only 2 items"):
        res = _cal(_labels(items["item_id"], labels), gold, n_resamples=N_RES)
    assert res.n == 2 and res.kappa.statistic == 1.0 and res.kappa.few_items
    assert (res.kappa_ci.low, res.kappa_ci.high) == (None, None)
    assert describe_kappa(res) == (
        "1.000 [CI undefined (2 items, whose standard error is 0 or undefined)]"
    )
    assert not res.graduates


def test_calibrate_itself_refuses_an_unlocked_rule(tmp_path: Path) -> None:
    # the library call, not only the command line: a rule the lock does not hold never decides
    gold = load(REPO_ROOT / "gold" / SET)
    rule = REPO_ROOT / "gold" / SET / "DECISION_RULE.json"
    lax = tmp_path / "DECISION_RULE-lax.json"
    body = json.loads(rule.read_text(encoding="utf-8"))
    body["graduate_if"]["kappa_ci_low_at_least"] = 0.1
    lax.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(EvalkitError, match="not a locked decision rule"):
        calibrate(rule_judge_labels(gold), gold, decision_rule=lax, n_resamples=50)
    # the locked rule, named explicitly, is accepted
    locked = calibrate(rule_judge_labels(gold), gold, decision_rule=rule, n_resamples=50)
    assert json.loads(locked.to_json())["decision_rule"]["path"] == "DECISION_RULE.json"
