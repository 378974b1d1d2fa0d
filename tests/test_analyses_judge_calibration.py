"""The judge-calibration study's logic (``evalkit.analyses.calibration``, ``judge_consistency``):
model judges with repeats beside the rule judge, the synthetic default, and two leftovers of
issue 10 — ``registered`` asks the result's own repository, and ``study run --no-lock`` reaches
the calibrations the notebook runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import REPO_ROOT
from repo_layout import SET, make_repo

from evalkit.analyses import calibration as cal
from evalkit.analyses import judge_consistency as jcv
from evalkit.calibration import NO_LOCK, rule_judge_labels
from evalkit.calibration import register as register_calibration
from evalkit.calibration._inputs import RULE_JUDGE_NAME
from evalkit.files.escape import markdown_code
from evalkit.gold.sets import load
from evalkit.studies import run as studies

GOLD = REPO_ROOT / "gold" / SET / "v2"
N_RES = 200


@pytest.fixture(autouse=True)
def _no_runner_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(studies.NO_LOCK_ENV, raising=False)
    monkeypatch.delenv("EVALKIT_PREREG_LOCK", raising=False)


@pytest.fixture(scope="module")
def gold() -> Any:
    return load(GOLD)


@pytest.fixture(scope="module")
def default_study(gold: Any) -> Any:
    data = cal.load_model_judges("", gold)
    return cal.run_all(data, gold, n_resamples=N_RES)


def test_registered_asks_the_repository_the_result_belongs_to(tmp_path: Path) -> None:
    """Leftover: ``_registered`` asked the package's repository (``is_accepted`` without the
    result's root), so a calibration registered in the repository it was computed against
    showed as not registered (advisory) on the page."""
    repo = make_repo(tmp_path / "repo")
    gs = load(repo / "gold" / SET / "v2")
    labels = rule_judge_labels(gs)
    before = cal.run(labels, gs, n_resamples=N_RES, root=repo)
    assert before.result.graduates and not before.registered and before.advisory
    register_calibration(before.result)
    after = cal.run(labels, gs, n_resamples=N_RES, root=repo)
    assert after.registered and not after.advisory
    assert "Registered calibration" in cal.advisory_text(after)
    elsewhere = cal.run(labels, load(GOLD), n_resamples=N_RES)  # evalkit's own repository
    assert not elsewhere.registered


def test_no_lock_reaches_the_calibrations_from_the_runner(
    gold: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = rule_judge_labels(gold)
    assert cal.run(labels, gold, n_resamples=N_RES).result.preregistration != NO_LOCK
    monkeypatch.setenv(studies.NO_LOCK_ENV, "1")
    assert cal.study_no_lock()
    result = cal.run(labels, gold, n_resamples=N_RES).result
    assert result.preregistration == NO_LOCK and not result.mintable
    monkeypatch.setenv(studies.NO_LOCK_ENV, "0")
    assert cal.run(labels, gold, n_resamples=N_RES).result.preregistration != NO_LOCK


@pytest.mark.notebook
def test_study_run_no_lock_runs_the_notebook_calibrations_without_a_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leftover: `evalkit study run judge-calibration --no-lock` with no lock refused inside
    the notebook (calibrate still demanded one); the runner now passes no_lock through."""
    monkeypatch.setenv("EVALKIT_PREREG_LOCK", str(tmp_path / "no-such-lock.json"))
    run = studies.run_study(
        "judge-calibration", {"n_resamples": N_RES}, out_dir=tmp_path / "out", no_lock=True
    )
    assert run.ok, run.error
    res = run.results
    assert res["preregistration"]["status"] == "not pre-registered"
    assert res["calibration"]["preregistration"] == NO_LOCK
    assert res["rule_judge"]["preregistration"] == NO_LOCK
    assert res["calibration"]["mintable"] is False


def test_the_default_model_judge_is_the_synthetic_one_of_the_data_card(
    default_study: Any,
) -> None:
    data = default_study.data
    assert data.synthetic and len(data.judges) == 1 and data.judges[0].repeats == 5
    assert data.describe().startswith("**Synthetic data.**")
    [model] = default_study.model
    reps = model.result.repeats
    assert reps.calls["expected"] == 995 and reps.calls["cannot-parse"] == 23
    assert len(reps.majority_ties) == 14
    card = (REPO_ROOT / "docs" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "995 calls, 23 of them cannot-parse (2.3%), and 14 items whose" in card
    assert model.result.judge == "simulated-model-judge (synthetic)"
    assert default_study.rule.result.judge == cal.RULE_JUDGE == RULE_JUDGE_NAME
    assert default_study.rule.result.repeats is None


def test_views_of_the_default_study(default_study: Any) -> None:
    table = jcv.overview_frame(default_study)
    assert list(table.index) == ["simulated-model-judge (synthetic)", cal.RULE_JUDGE]
    row = table.iloc[0]
    reps = default_study.model[0].result.repeats
    assert row["Fleiss κ across repeats [95% CI], n items"].endswith(f"n = {reps.repeat_kappa.n}")
    assert "tie(s) left out" in row["κ vs gold, majority label [95% CI], n items"]
    assert table.iloc[1]["Fleiss κ across repeats [95% CI], n items"] == "n/a (deterministic)"
    assert "nan" not in table.to_string().lower()
    outcomes = jcv.outcomes_frame(default_study.model[0])
    assert list(outcomes["calls"]) == [972, 23, 0, 0]
    text = jcv.consistency_text(default_study.model[0])
    assert "K = 5 repeats per item" in text and "never broken" in text
    fig = jcv.plot_overview(default_study)
    assert len(fig.axes) == 4
    figures = cal.study_figures(default_study)
    assert figures["data"]["synthetic"] is True
    assert figures["kappa"] == figures["judges"][0]["kappa"]
    assert figures["consistency"]["repeats"] == 5
    assert figures["rule_judge"]["kind"] == "rule"
    json.dumps(figures)  # JSON-simple


def test_a_tied_majority_reads_as_a_tie_on_the_page_never_nan(default_study: Any) -> None:
    study = default_study.model[0]
    ties = set(study.result.repeats.majority_ties)
    assert ties  # the synthetic judge ties on some items (5 repeats, three labels)
    shown = cal.disagreements(study.result).frame  # folded under its summary on the page
    tied = shown[shown.index.isin(ties)]
    # "tie (2 of 5 each)": the top label's count among the item's calls
    assert len(tied) and all(re.fullmatch(r"tie \(\d of \d each\)", j) for j in tied["judge"])
    assert "nan" not in shown.to_string().lower()


@pytest.mark.slow
def test_a_labels_file_of_several_hostile_judges_is_calibrated_judge_by_judge(
    gold: Any, tmp_path: Path
) -> None:
    names = ["a `x` <b>bold</b>", "$\\frac{$ judge"]
    items = gold.items
    rows = [
        {"item_id": i, "repeat": r, "label": lab, "outcome": "ok", "judge": name}
        for name in names
        for i, lab in zip(items["item_id"], items["label"], strict=True)
        for r in (0, 1)
    ]
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    data = cal.load_model_judges(str(path), gold)
    assert [j.judge for j in data.judges] == names and not data.synthetic
    study = cal.run_all(data, gold, n_resamples=N_RES)
    assert [s.result.judge for s in study.model] == names
    # names reach Markdown only as code spans that no backtick in them can close
    assert markdown_code(names[0]) in jcv.consistency_text(study.model[0])
    assert markdown_code(names[0]) in data.describe()
    jcv.plot_overview(study)  # the mathtext name never breaks the figure
    cal.plot_confusion(study.model[1])
