"""Judge calibration against the frozen gold set: agreement, CIs, graduation, minted status."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.calibration import calibrate, read_judge_labels, register, rule_judge_labels
from evalkit.calibration_status import ALLOWED_UNCALIBRATED, REGISTRY_ENV, is_accepted
from evalkit.cli.main import main
from evalkit.errors import EvalkitError, ValidationError
from evalkit.gold import LABELS, load
from tests.conftest import REPO_ROOT

GOLD_DIR = REPO_ROOT / "gold" / "instruction-adherence" / "v1"
N_RES = 400  # enough for the assertions below; the pre-registered run uses the rule's 2000


@pytest.fixture(scope="module")
def gold():
    return load(GOLD_DIR)


@pytest.fixture(autouse=True)
def _no_repo_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # tests never read or write the repository's lock or registry
    monkeypatch.setenv("EVALKIT_PREREG_LOCK", str(tmp_path / "no-lock.json"))
    monkeypatch.setenv(REGISTRY_ENV, str(tmp_path / "registry.jsonl"))


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
    res = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
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
    res = calibrate(
        _labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES
    )
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
    res = calibrate(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
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
        res = calibrate(_labels(items["item_id"], judge), gold, n_resamples=300, rng=r)
        hits += res.kappa_ci.low <= kappa_pop <= res.kappa_ci.high
    assert hits / reps >= 0.85, hits


# --------------------------------------------------------------------------- the figures


def test_figures_agree_with_a_second_computation(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.7, np.random.default_rng(3))
    res = calibrate(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
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
    d = calibrate(_labels(items["item_id"], judge), gold, n_resamples=N_RES).to_dict()
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
    res = calibrate(_labels(items["item_id"], judge), gold, n_resamples=N_RES)
    n10, n20 = res.items_needed_for_width(0.1), res.items_needed_for_width(0.2)
    assert n10 > n20 > 0
    assert n10 == pytest.approx(4 * n20, rel=0.05)  # width scales as 1 / sqrt(n)
    # a perfect judge has zero large-sample variance: no finite plan, said as None
    perfect = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert perfect.items_needed_for_width(0.1) is None


def test_the_calibration_ref_is_deterministic_and_bound_to_the_gold(gold, tmp_path: Path) -> None:
    items = gold.items
    lab = _labels(items["item_id"], items["label"])
    a = calibrate(lab, gold, n_resamples=N_RES)
    b = calibrate(lab, gold, n_resamples=N_RES)
    assert a.calibration_ref == b.calibration_ref and a.calibration_status == b.calibration_status
    core = a.to_dict()
    assert core["gold"]["sha256"] == gold.sha256  # the hashed body carries the gold's hash
    other = calibrate(lab.iloc[::-1].reset_index(drop=True), gold, n_resamples=N_RES, rng=1)
    assert other.calibration_ref != a.calibration_ref  # another run (seed) is another result


# --------------------------------------------------------------------------- inputs


def test_missing_items_are_counted_never_guessed(gold) -> None:
    items = gold.items
    labels = list(items["label"])
    for i in range(0, 20, 2):
        labels[i] = None
    res = calibrate(_labels(items["item_id"], labels), gold, n_resamples=N_RES)
    assert res.n_missing == 10 and res.n == len(items) - 10
    assert set(res.missing) == set(items["item_id"].iloc[0:20:2])
    assert res.kappa.statistic == pytest.approx(1.0)
    assert not res.graduates and "unlabeled" in res.graduation_reason
    # items absent from the frame are missing too
    res2 = calibrate(_labels(items["item_id"][5:], items["label"][5:]), gold, n_resamples=N_RES)
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
        calibrate(frame, gold, n_resamples=N_RES)


def test_rule_judge_labels_every_item(gold) -> None:
    lab = rule_judge_labels(gold)
    assert list(lab["item_id"]) == list(gold.items["item_id"])
    assert set(lab["label"]) <= set(LABELS)
    res = calibrate(lab[["item_id", "label"]], gold, n_resamples=N_RES)
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
        calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)


# --------------------------------------------------------------------------- status & registry


def test_is_accepted_only_with_a_registered_matching_reference(gold, tmp_path: Path) -> None:
    registry = tmp_path / "reg.jsonl"
    items = gold.items
    res = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    status, ref = res.calibration_status, res.calibration_ref
    assert "uncalibrated" in ALLOWED_UNCALIBRATED
    assert is_accepted("instruction-adherence", "uncalibrated", None, registry=registry)
    assert not is_accepted("instruction-adherence", status, ref, registry=registry)  # unregistered
    register(res, registry, date="2026-11-30")
    assert is_accepted("instruction-adherence", status, ref, registry=registry)
    wrong = ref[:-1] + ("0" if ref[-1] != "0" else "1")  # same hash8, another reference
    assert not is_accepted("instruction-adherence", status, wrong, registry=registry)
    assert not is_accepted("instruction-adherence", status, None, registry=registry)
    assert not is_accepted("report-quality", status, ref, registry=registry)
    assert not is_accepted("instruction-adherence", "calibrated", ref, registry=registry)
    entry = json.loads(registry.read_text(encoding="utf-8").splitlines()[0])
    assert entry["gold_sha256"] == gold.sha256 and entry["calibration_ref"] == ref
    assert entry["graduated"] is True and entry["calibration_status"] == status


def test_register_refuses_a_judge_that_did_not_graduate(gold, tmp_path: Path) -> None:
    items = gold.items
    rng = np.random.default_rng(1)
    res = calibrate(
        _labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES
    )
    with pytest.raises(EvalkitError, match="did not graduate"):
        register(res, tmp_path / "reg.jsonl")
    assert not (tmp_path / "reg.jsonl").exists()


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


_CHILD_VALIDATE = """
import json, sys
from evalkit import validate_record
from evalkit.errors import ValidationError
try:
    validate_record(json.load(sys.stdin))
except ValidationError as exc:
    print("refused:", exc)
else:
    print("accepted")
"""


def _validate_in_another_process(record: dict, registry: Path) -> str:
    """validate_record in a fresh interpreter: it knows only the persistent registry."""
    import os
    import subprocess
    import sys

    env = {**os.environ, REGISTRY_ENV: str(registry)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD_VALIDATE],
        input=json.dumps(record),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return out.stdout.strip()


def _base_judge_dim() -> dict:
    return {"id": "instruction-adherence", "method": "judge", "status": "pass",
            "evidence": "rule 6: no named deviation", "advisory": True}  # fmt: skip


def test_validate_record_accepts_a_minted_status_only_with_the_matching_reference(
    gold, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit import validate_record
    from evalkit.calibration_status import forget_in_process

    registry = tmp_path / "registry.jsonl"
    monkeypatch.setenv(REGISTRY_ENV, str(registry))
    base = _base_judge_dim()
    validate_record(_record({**base, "calibration_status": "uncalibrated"}))

    forget_in_process()
    items = gold.items
    res = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    minted = {
        **base,
        "calibration_status": res.calibration_status,
        "calibration_ref": res.calibration_ref,
    }
    # In this process the graduating calibrate() suffices (issue 7); nothing was persisted.
    validate_record(_record(copy.deepcopy(minted)))
    assert not registry.exists()
    bad_ref = {**minted, "calibration_ref": "0" * 64}
    with pytest.raises(ValidationError, match="calibration_status"):
        validate_record(_record(bad_ref))
    same_hash8 = {**minted, "calibration_ref": res.calibration_ref[:8] + "0" * 56}
    with pytest.raises(ValidationError, match="calibration_status"):
        validate_record(_record(same_hash8))  # forged: right prefix, wrong reference
    prefix = {**minted, "calibration_ref": res.calibration_ref[:8]}
    with pytest.raises(ValidationError, match="calibration_status"):
        validate_record(_record(prefix))
    no_ref = {k: v for k, v in minted.items() if k != "calibration_ref"}
    with pytest.raises(ValidationError, match="calibration_status"):
        validate_record(_record(no_ref))

    # Another process sees only the persistent registry: refused until register().
    child = _validate_in_another_process(_record(copy.deepcopy(minted)), registry)
    assert child.startswith("refused: dimensions[1] (instruction-adherence).calibration_status")
    register(res, registry)
    assert _validate_in_another_process(_record(copy.deepcopy(minted)), registry) == "accepted"


def test_graduating_calibrate_is_accepted_in_process_for_its_dimension_only(
    gold, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """QA: validate_record accepted a minted status only after an explicit register()."""
    from evalkit import validate_record
    from evalkit.calibration_status import forget_in_process, in_process_graduated

    monkeypatch.setenv(REGISTRY_ENV, str(tmp_path / "never-written.jsonl"))
    forget_in_process()
    items = gold.items
    res = calibrate(
        _labels(items["item_id"], items["label"]),
        gold,
        n_resamples=N_RES,
        dimension_id="instruction-adherence",
    )
    assert res.graduates
    assert in_process_graduated() == {
        ("instruction-adherence", res.calibration_status, res.calibration_ref)
    }
    dim = {**_base_judge_dim(), "calibration_status": res.calibration_status,
           "calibration_ref": res.calibration_ref}  # fmt: skip
    assert validate_record(_record(dim))["dimensions"][1]["calibration_ref"] == res.calibration_ref
    with pytest.raises(ValidationError, match=r"\(report-quality\)\.calibration_status"):
        validate_record(_record({**dim, "id": "report-quality"}))  # another dimension
    # the persistent question ("is it registered?") is unchanged by the in-process record
    assert not is_accepted("instruction-adherence", res.calibration_status, res.calibration_ref)
    assert not (tmp_path / "never-written.jsonl").exists()
    forget_in_process()
    with pytest.raises(ValidationError, match="calibration_status"):
        validate_record(_record(dim))


def test_a_non_graduating_calibration_mints_nothing_validate_record_accepts(
    gold, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit import validate_record
    from evalkit.calibration_status import forget_in_process, in_process_graduated, mint_status

    monkeypatch.setenv(REGISTRY_ENV, str(tmp_path / "registry.jsonl"))
    forget_in_process()
    items = gold.items
    rng = np.random.default_rng(1)
    res = calibrate(
        _labels(items["item_id"], rng.choice(LABELS, len(items))), gold, n_resamples=N_RES
    )
    assert not res.graduates and res.calibration_status == "uncalibrated"
    assert in_process_graduated() == frozenset()
    forged = mint_status(gold.tag, res.calibration_ref)  # the status it would have minted
    dim = {**_base_judge_dim(), "calibration_status": forged,
           "calibration_ref": res.calibration_ref}  # fmt: skip
    with pytest.raises(ValidationError, match=r"calibration_status: .* is not an accepted"):
        validate_record(_record(dim))


# --------------------------------------------------------------------------- CLI


def test_calibrate_cli_writes_json_and_registers(gold, tmp_path: Path) -> None:
    items = gold.items
    labels_file = tmp_path / "judge.jsonl"
    labels_file.write_text(
        "".join(json.dumps({"item_id": i, "label": lab}) + "\n" for i, lab in zip(items["item_id"], items["label"], strict=True)),
        encoding="utf-8",
    )  # fmt: skip
    assert read_judge_labels(labels_file).shape == (len(items), 2)
    out, registry = tmp_path / "result.json", tmp_path / "reg.jsonl"
    argv = ["calibrate", "--labels", str(labels_file), "--gold", str(GOLD_DIR), "--out", str(out),
            "--n-resamples", str(N_RES), "--register", "--registry", str(registry)]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["graduates"] is True and result["n"] == len(items)
    entry = json.loads(registry.read_text(encoding="utf-8"))
    assert entry["calibration_ref"] == result["calibration_ref"]
    assert math.isclose(result["kappa"]["statistic"], 1.0)


def test_calibrate_cli_register_refuses_non_graduate(gold, tmp_path: Path) -> None:
    items = gold.items
    csv = tmp_path / "judge.csv"
    pd.DataFrame({"item_id": items["item_id"], "label": ["pass"] * len(items)}).to_csv(
        csv, index=False
    )
    argv = ["calibrate", "--labels", str(csv), "--gold", str(GOLD_DIR), "--n-resamples", "200",
            "--out", str(tmp_path / "r.json"), "--register", "--registry", str(tmp_path / "reg.jsonl")]  # fmt: skip
    assert main(argv) == 1  # EvalkitError -> exit 1
    assert not (tmp_path / "reg.jsonl").exists()


def test_a_gold_copy_outside_the_repository_is_not_checked_against_the_lock(
    gold, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from evalkit import prereg

    monkeypatch.setattr(prereg, "_said", set())
    lock = tmp_path / "lock.json"
    lock.write_text(
        json.dumps({"schema": 1, "entries": [{"kind": "gold", "name": "instruction-adherence/v1",
                                              "path": "gold/instruction-adherence/v1",
                                              "sha256": "0" * 64}]}),
        encoding="utf-8",
    )  # fmt: skip
    monkeypatch.setenv("EVALKIT_PREREG_LOCK", str(lock))
    copy_dir = tmp_path / "elsewhere" / "instruction-adherence"
    shutil.copytree(GOLD_DIR, copy_dir / "v1")
    shutil.copy(GOLD_DIR.parent / "DECISION_RULE.json", copy_dir)
    other = load(copy_dir)
    items = other.items
    res = calibrate(_labels(items["item_id"], items["label"]), other, n_resamples=N_RES)
    assert res.graduates
    assert "not a pre-registered input" in capsys.readouterr().err


def test_pabak_carries_per_class_indices_and_the_judge_is_named(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.7, np.random.default_rng(4))
    res = calibrate(_labels(items["item_id"], judge), gold, judge="sim-0.7", n_resamples=N_RES)
    assert res.pabak.prevalence_index_per_class == res.prevalence_index
    assert res.pabak.bias_index_per_class == res.bias_index
    assert res.to_dict()["judge"] == "sim-0.7"
    renamed = calibrate(_labels(items["item_id"], judge), gold, judge="other", n_resamples=N_RES)
    assert renamed.calibration_ref != res.calibration_ref


def test_a_lone_version_copy_uses_the_repository_decision_rule(tmp_path: Path) -> None:
    import shutil

    from evalkit.gold import resolve

    newest = resolve(GOLD_DIR.parent)
    lone = tmp_path / "lone" / newest.name
    shutil.copytree(newest, lone)
    gs = load(lone)
    items = gs.items
    res = calibrate(_labels(items["item_id"], items["label"]), gs, n_resamples=N_RES)
    repo_rule = json.loads((GOLD_DIR.parent / "DECISION_RULE.json").read_text(encoding="utf-8"))
    assert res.decision_rule["graduate_if"] == repo_rule["graduate_if"]
    assert res.decision_rule["sha256"] == gs.manifest["decision_rules"]["DECISION_RULE.json"]


def test_graduation_is_judged_on_the_pre_registered_interval_whatever_is_displayed(gold) -> None:
    items = gold.items
    judge = _confusion_judge(list(items["label"]), 0.62, np.random.default_rng(21))
    lab = _labels(items["item_id"], judge)
    pre = calibrate(lab, gold)  # the decision rule's own level, resamples and seed
    shown = calibrate(lab, gold, level=0.5, n_resamples=N_RES, rng=5)
    assert shown.kappa_ci.level == 0.5
    assert shown.kappa_ci.high - shown.kappa_ci.low < pre.kappa_ci.high - pre.kappa_ci.low
    assert shown.graduates == pre.graduates
    assert shown.graduation_reason == pre.graduation_reason


def test_register_into_a_directory_is_an_evalkit_error_naming_it(gold, tmp_path: Path) -> None:
    """QA: calibration.register(result, <a directory>) raised a raw IsADirectoryError."""
    items = gold.items
    res = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert res.graduates
    with pytest.raises(EvalkitError, match=rf"calibration registry '{tmp_path}': is a directory"):
        register(res, tmp_path)
    with pytest.raises(IsADirectoryError):
        register(res, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_registry_env_naming_a_directory_is_a_clear_error_from_validate_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """QA: EVALKIT_CALIBRATION_REGISTRY pointing at a directory gave a raw IsADirectoryError."""
    from evalkit import validate_record

    monkeypatch.setenv(REGISTRY_ENV, str(tmp_path))
    ref = "ab" * 32
    dim = {"id": "instruction-adherence", "method": "judge", "status": "pass",
           "evidence": "rule 6", "advisory": True,
           "calibration_status": f"calibrated:instruction-adherence-v1:{ref[:8]}",
           "calibration_ref": ref}  # fmt: skip
    with pytest.raises(
        EvalkitError,
        match=rf"calibration registry '{tmp_path}': is a directory.*EVALKIT_CALIBRATION_REGISTRY",
    ):
        validate_record(_record(dim))
    # an uncalibrated judge never needs the registry, so it still validates
    validate_record(_record({**dim, "calibration_status": "uncalibrated"}))


def test_missing_judge_labels_file_is_an_evalkit_error(tmp_path: Path) -> None:
    for name in ("missing.csv", "missing.jsonl"):
        with pytest.raises(EvalkitError, match=rf"judge labels file '.*{name}': no such file"):
            read_judge_labels(tmp_path / name)


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
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0  # the result was written; the judge simply does not graduate
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        "kappa undefined (chance agreement is 1: gold and judge use one label only on the "
        "50 labeled items); CI undefined n=50" in err
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["kappa"]["statistic"] is None and result["kappa"]["ci"]["low"] is None
    assert result["graduates"] is False and result["calibration_status"] == "uncalibrated"


def test_describe_kappa_formats_a_defined_kappa_and_an_undefined_interval(gold) -> None:
    from evalkit.cli.calibrate import describe_kappa

    items = gold.items
    res = calibrate(_labels(items["item_id"], items["label"]), gold, n_resamples=N_RES)
    assert describe_kappa(res) == f"{res.kappa_ci.statistic:.3f} [1.000, 1.000]"
    half = dataclasses.replace(res, kappa_ci=dataclasses.replace(res.kappa_ci, low=None))
    assert describe_kappa(half) == "1.000 [CI undefined (the bootstrap is degenerate)]"
