"""Calibration trust, round 2 (issue 24 #9, #13, #14, #16; issue 19's certificate forgeries).

Every test works in a temporary copy of the repository layout (``repo_layout.make_repo``):
the repository's own ``calibrations/``, gold sets and lock are never written.
"""

from __future__ import annotations

import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from repo_layout import (
    RULE_JUDGE,
    SET,
    make_repo,
    mint_rule_judge,
    plant_certificate,
    relabelled_freeze,
    write_lock,
)

from evalkit.calibration import (
    CertificateError,
    calibrate,
    is_registered,
    register,
    repository_calibrations,
    rule_judge_labels,
    verify_certificate,
)
from evalkit.calibration import certificate_check as check_module
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.gold.sets import LABELS, freeze, load

pytestmark = pytest.mark.usefixtures("no_lock_or_registry_env")
N_RES = 300


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = make_repo(tmp_path_factory.mktemp("repo"))
    result, cert = mint_rule_judge(repo, N_RES)
    return {"repo": repo, "result": result, "cert": cert}


@pytest.fixture
def repo(minted: dict[str, Any], tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(minted["repo"], dest)
    return dest


def _cert(repo: Path) -> tuple[Path, dict[str, Any]]:
    [path] = sorted((repo / "calibrations").glob("*.json"))
    return path, json.loads(path.read_text(encoding="utf-8"))


def _random_labels(gold: Any, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = list(gold.items["item_id"])
    return pd.DataFrame({"item_id": ids, "label": rng.choice(LABELS, size=len(ids))})


WEAK_RULE = {
    "dimension_id": "instruction-adherence",
    "ci": {"method": "bca", "level": 0.95, "n_resamples": 200, "rng": 0},
    "graduate_if": {"kappa_ci_low_at_least": -1.0, "n_at_least": 1, "missing_at_most": 999},
    "otherwise": "uncalibrated",
}


def _copy_with_weak_rule(repo: Path, tmp: Path, name: str = SET) -> Any:
    """A gold set outside the repository, frozen beside a weakened DECISION_RULE.json."""
    elsewhere = tmp / "elsewhere"
    (elsewhere / name).mkdir(parents=True)
    (elsewhere / name / "DECISION_RULE.json").write_text(json.dumps(WEAK_RULE), "utf-8")
    work = tmp / "work"
    shutil.copytree(repo / "gold" / SET / "v2", work)
    (work / "MANIFEST.json").unlink()
    return load(freeze(work, elsewhere, name, date="2026-12-01").path)


# ------------------------------------------------------------------------ #9: the locked rule


def test_a_gold_copy_outside_the_repository_brings_no_rule_of_its_own(
    repo: Path, tmp_path: Path
) -> None:
    copy = _copy_with_weak_rule(repo, tmp_path)
    result = calibrate(_random_labels(copy), copy, judge="random", n_resamples=N_RES, root=repo)
    # judged under the repository's locked DECISION_RULE.json, never the copy's
    assert result.decision_rule["graduate_if"]["kappa_ci_low_at_least"] == 0.6
    assert not result.graduates and result.pre_registered
    assert not result.mintable
    assert result.gold_tag.startswith(f"{SET}-v1@sha256:")  # never the locked set's tag
    assert result.gold_tag != f"{SET}-v1"
    from evalkit.analyses.calibration import gold_text

    assert f"`{result.gold_tag}`" in gold_text(copy, root=repo)  # the page names it so too


def test_a_set_the_repository_has_no_rule_for_is_not_pre_registered_wherever_it_appears(
    repo: Path, tmp_path: Path
) -> None:
    from evalkit.analyses.calibration import CalibrationStudy, advisory_text, decision_text

    copy = _copy_with_weak_rule(repo, tmp_path, name="other-set")
    result = calibrate(_random_labels(copy), copy, judge="random", n_resamples=N_RES, root=repo)
    assert not result.graduates  # a random judge, under the copy's own weakened rule
    assert result.graduation_reason.startswith("not pre-registered: ")
    assert not result.pre_registered
    page = advisory_text(CalibrationStudy(result)) + decision_text(CalibrationStudy(result))
    assert "not pre-registered" in page
    assert "under its pre-registered rule" not in page
    assert "**graduates**" not in page


def test_no_lock_is_not_pre_registered_and_never_graduates(minted: dict[str, Any]) -> None:
    gold = load(minted["repo"] / "gold" / SET / "v2")
    result = calibrate(rule_judge_labels(gold), gold, n_resamples=N_RES, no_lock=True,
                       root=minted["repo"])  # fmt: skip
    assert not result.graduates and "not pre-registered" in result.graduation_reason


# ------------------------------------------------------------------ the dimension is the rule's


def test_a_calibration_of_another_dimension_is_refused(minted: dict[str, Any], repo: Path) -> None:
    gold = load(repo / "gold" / SET / "v2")
    with pytest.raises(EvalkitError, match="is not the dimension of the decision rule"):
        calibrate(rule_judge_labels(gold), gold, dimension_id="report-quality",
                  n_resamples=N_RES, root=repo)  # fmt: skip
    # a certificate planted for another dimension does not re-check either
    _, obj = _cert(repo)
    obj["result"]["dimension_id"] = "report-quality"
    planted = plant_certificate(repo, obj)
    with pytest.raises(CertificateError, match="is not the dimension"):
        verify_certificate(planted, root=repo)


# ------------------------------------------------------- #13: nothing in a certificate is malleable


def test_a_changed_evalkit_version_is_refused(repo: Path) -> None:
    path, obj = _cert(repo)
    obj["evalkit_version"] = "0.0.0-forged"
    path.unlink()
    planted = plant_certificate(repo, obj)
    with pytest.raises(CertificateError, match="evalkit_version"):
        verify_certificate(planted, root=repo)


def test_a_certificate_on_an_older_locked_version_says_it_is_superseded(
    repo: Path, tmp_path: Path
) -> None:
    path, obj = _cert(repo)
    fresh = verify_certificate(path, root=repo)
    assert fresh.superseded_by is None
    relabelled_freeze(repo / "gold" / SET / "v2", tmp_path / "v3src", repo / "gold")
    write_lock(repo)  # v3 locked too
    old = verify_certificate(path, root=repo)
    assert old.superseded_by == f"{SET}-v3"
    lookup = repository_calibrations(repo).for_judge(fresh.dimension_id, obj["judge"]["identity"])
    assert lookup.status == "uncalibrated" and "superseded by" in lookup.reason


# -------------------------------------------------------------- #14: bounded before any compute


def test_a_certificate_asking_for_too_much_work_is_refused_before_any_compute(
    repo: Path,
) -> None:
    _, obj = _cert(repo)
    obj["result"]["bootstrap"]["n_resamples"] = 100_000  # 199 calls x 102,000 resamples
    planted = plant_certificate(repo, obj)
    started = time.monotonic()
    with pytest.raises(CertificateError, match="over the bound"):
        verify_certificate(planted, root=repo)
    assert time.monotonic() - started < 10


def test_running_out_of_memory_is_a_refusal(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _cert(repo)
    check_module._CACHE.clear()

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(check_module, "_rescore", exhausted)
    with pytest.raises(CertificateError, match="ran out of memory"):
        verify_certificate(path, root=repo)


def test_one_hostile_unclaimed_file_never_breaks_a_study(
    minted: dict[str, Any], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.analyses import calibration as study

    _path, obj = _cert(repo)
    obj["result"]["n"] = 1  # another (hostile) certificate beside the real one
    hostile = plant_certificate(repo, obj)
    real = check_module._rescore
    checked = []

    def rescore(obj: Any, claim: Any, ref: str, base: Path) -> Any:
        checked.append(ref)
        if ref == hostile.stem:
            raise MemoryError  # what a re-check of a hostile file did to every study
        return real(obj, claim, ref, base)

    check_module._CACHE.clear()
    monkeypatch.setattr(check_module, "_rescore", rescore)
    gold = load(repo / "gold" / SET / "v2")
    result = calibrate(rule_judge_labels(gold), gold, judge=RULE_JUDGE, n_resamples=N_RES,
                       root=repo)  # fmt: skip
    assert is_registered(result)
    ran = study.run(study.judge_labels(gold), gold, n_resamples=N_RES, root=repo, name=RULE_JUDGE)
    assert ran.registered
    assert hostile.stem not in checked  # only what the result names is re-checked


def test_register_refuses_a_certificate_whose_re_check_would_exceed_the_bound(
    minted: dict[str, Any],
) -> None:
    gold = load(minted["repo"] / "gold" / SET / "v2")
    result = calibrate(rule_judge_labels(gold), gold, judge=RULE_JUDGE, n_resamples=40_000,
                       root=minted["repo"])  # fmt: skip
    with pytest.raises(EvalkitError, match="over the bound"):
        register(result)


# ------------------------------------------------------ #16: one-line diagnostics at most


def test_re_checking_a_perfect_labels_certificate_warns_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    relabelled_freeze(repo / "gold" / SET / "v2", tmp_path / "v3src", repo / "gold")
    write_lock(repo)
    gold = load(repo / "gold" / SET / "v3")
    result = calibrate(rule_judge_labels(gold), gold, judge=RULE_JUDGE, n_resamples=N_RES,
                       root=repo)  # fmt: skip
    assert result.graduates and result.kappa.statistic == 1.0  # a perfect judge
    path = repo / "calibrations" / f"{register(result).calibration_ref}.json"
    check_module._CACHE.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        verify_certificate(path, root=repo)
    assert [w for w in caught if issubclass(w.category, DegenerateDataWarning)] == []


def test_calibrate_says_a_perfect_judge_s_degenerate_interval_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gold labels as a judge's: every interval is a point. The command line says so in
    one line per statistic, never as a Python warning with a source path."""
    from conftest import REPO_ROOT

    from evalkit.cli.main import main

    gold = REPO_ROOT / "gold" / SET / "v2"
    labels = tmp_path / "labels.jsonl"
    shutil.copy(gold / "labels.jsonl", labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["calibrate", "--labels", str(labels), "--gold", str(gold),
                     "--n-resamples", "200", "--out", str(tmp_path / "result.json")])  # fmt: skip
    assert code == 0
    assert [w for w in caught if issubclass(w.category, DegenerateDataWarning)] == []
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("evalkit calibrate: note: ")]
    assert "evalkit calibrate: note: Cohen's kappa: every bootstrap resample gives 1; the " \
        "interval is that point" in notes  # fmt: skip
    assert len(notes) == len(set(notes))  # each said once
    assert "Warning" not in err and ".py:" not in err


# ----------------------------- issue 19: a certificate says what it proves and what it cannot


def test_a_certificate_says_what_it_proves_and_cannot_and_no_more(repo: Path) -> None:
    from evalkit.analyses.calibration import CalibrationStudy, decision_text
    from evalkit.calibration.certificate import STATEMENT

    _path, obj = _cert(repo)
    assert obj["statement"] == STATEMENT
    assert "Cannot prove: that a provider really ran the model" in obj["statement"]
    assert "agree with the frozen gold labels under the locked rule" in obj["statement"]
    obj["statement"] = "Proves: a provider ran this model, signed."  # a certificate claiming more
    planted = plant_certificate(repo, obj)
    with pytest.raises(CertificateError, match="field statement"):
        verify_certificate(planted, root=repo)
    gold = load(repo / "gold" / SET / "v2")
    result = calibrate(rule_judge_labels(gold), gold, judge=RULE_JUDGE, n_resamples=N_RES,
                       root=repo)  # fmt: skip
    assert "no provider signs its replies" in decision_text(CalibrationStudy(result))
