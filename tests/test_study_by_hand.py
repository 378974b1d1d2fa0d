"""A study notebook run by hand (papermill, JupyterLab) states its pre-registration itself.

``evalkit study run`` checks a run before its kernel starts and opens the page with the
statement; a notebook executed directly has no runner, so its first cell after the parameters
runs the same check (:mod:`evalkit.studies.by_hand`) and prints the same statement or the
deviation warning at the top of its output. Under the runner that cell's output is dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.prereg.lock import LOCK_ENV
from evalkit.studies import by_hand
from evalkit.studies import run as studies
from evalkit.studies.lock import BY_HAND_NO_REASON
from tests.by_hand import execute_by_hand
from tests.real_ledgers import journaled_real_ledger


def _by_hand(name: str, tmp_path: Path, parameters: dict[str, Any]) -> list[str]:
    """Execute the notebook as papermill does by hand; the Markdown of its outputs, in order."""
    outputs = execute_by_hand(name, tmp_path, cwd=tmp_path, parameters=parameters)
    return [o.get("data", {}).get("text/markdown", "") for o in outputs]


@pytest.fixture
def no_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a person runs it: no runner environment, the repository's notebooks and lock."""
    for var in (studies.RESULTS_ENV, "EVALKIT_NOTEBOOKS", LOCK_ENV):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.notebook
@pytest.mark.usefixtures("no_runner")
def test_papermill_by_hand_with_a_changed_design_prints_the_deviation_first(
    tmp_path: Path,
) -> None:
    shown = _by_hand("agreement-study", tmp_path, {"n_resamples": 20, "n_items": 8})
    first = shown[0]
    assert first.startswith("> **Deviation from the pre-registration.** 2 locked design")
    assert "> - `n_items`: locked `40`, this run `8` (given)" in first
    assert "> - `n_resamples`: locked `500`, this run `20` (given)" in first
    assert BY_HAND_NO_REASON in first
    assert "entry `agreement-study`, version 1" in first
    assert "Data card." in shown[1]  # then the page, as `study run` shows it


@pytest.mark.notebook
@pytest.mark.usefixtures("no_runner")
def test_the_monitor_run_by_hand_on_a_real_ledger_states_its_deviation_and_data(
    tmp_path: Path,
) -> None:
    metrics = journaled_real_ledger("ledger-2026-04-13", tmp_path / "april" / "metrics")
    shown = _by_hand("monitor", tmp_path, {"metrics_dir": str(metrics), "ceiling": 0.2})
    first = shown[0]
    assert first.startswith("> **Deviation from the pre-registration.** 1 locked design")
    assert "> - `ceiling`: locked `0.1`, this run `0.2` (given)" in first
    assert "entry `monitor`, version 1" in first and BY_HAND_NO_REASON in first
    assert "Data card." in shown[1] and "(not a preset)" in shown[1]
    assert str(tmp_path) not in "\n".join(shown)  # no machine path in what the page shows


def test_the_statement_of_the_locked_design_is_the_pre_registered_banner() -> None:
    declared = studies.declared_parameters("threshold-study")
    defaults = {k: p.default for k, p in declared.items()}
    text = by_hand.statement("threshold-study", defaults)
    assert text.startswith("> **Pre-registered:** entry `threshold-study`, version 1")
    # an int given for a float parameter is the runner's float, never a deviation
    assert by_hand.statement("threshold-study", {**defaults, "ceiling": 0}) != text
    assert "`ceiling`: locked `0.1`, this run `0.0`" in by_hand.statement(
        "threshold-study", {**defaults, "ceiling": 0}
    )


def test_a_lock_it_cannot_check_is_said_without_a_machine_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "deep" / "lock.json"
    monkeypatch.setenv(LOCK_ENV, str(missing))
    text = by_hand.statement("threshold-study", {})
    assert text.startswith("> **Not checked against the pre-registration:**")
    assert "exploratory" in text and "…/lock\\.json" in text  # escaped Markdown
    assert str(tmp_path) not in text


@pytest.mark.parametrize("name", studies.STUDIES)
def test_every_study_notebook_checks_itself_right_after_its_parameters(name: str) -> None:
    import nbformat  # deferred: seconds to import (jsonschema)

    nb = nbformat.read(str(studies.notebook_path(name)), as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    first = next(i for i, t in enumerate(tags) if "parameters" in t)
    check = [i for i, t in enumerate(tags) if by_hand.CELL_TAG in t]
    assert check == [first + 1], name  # one check, before anything the page computes
    assert f"statement({name!r}, globals())" in nb.cells[check[0]].source
