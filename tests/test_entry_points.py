"""The public entry points refuse what is not a metrics directory with an EvalkitError."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit
from evalkit.scoring.engine import SAMPLE_METRICS_DIR


@pytest.mark.parametrize("bad", [None, 42, 3.5, ["a"], {"dir": "x"}])
@pytest.mark.parametrize(
    "call",
    [
        lambda d: evalkit.resolve_session(d),
        lambda d: evalkit.score_session(d),
        lambda d: evalkit.score_ledger(d),
    ],
    ids=["resolve_session", "score_session", "score_ledger"],
)
def test_a_non_path_is_an_evalkit_error(call, bad) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(evalkit.EvalkitError, match="metrics_dir must be a path"):
        call(bad)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: evalkit.resolve_session(d),
        lambda d: evalkit.score_session(d),
        lambda d: evalkit.score_ledger(d),
    ],
    ids=["resolve_session", "score_session", "score_ledger"],
)
def test_a_missing_directory_is_named(call, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "no-such-metrics"
    with pytest.raises(evalkit.SessionResolutionError, match="metrics directory not found") as exc:
        call(missing)
    assert str(missing) in str(exc.value)


def test_an_existing_directory_without_sessions_is_not_a_missing_directory(tmp_path: Path) -> None:
    # absent sessions.jsonl in an existing folder: no session to resolve, an empty batch table
    with pytest.raises(evalkit.SessionResolutionError) as exc:
        evalkit.score_session(tmp_path)
    assert "metrics directory not found" not in str(exc.value)
    assert evalkit.score_ledger(tmp_path).empty


def test_the_sample_ledger_still_scores() -> None:
    assert not evalkit.score_ledger(SAMPLE_METRICS_DIR).empty
