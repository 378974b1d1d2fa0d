"""score_records: every session's record in one pass, each equal to score_session's.

Issue 13 acceptance: records from ``score_records`` equal ``score_session``'s, field for field,
on generated ledgers (the benchmark's generator and ``evalkit.simulate``) and on every
conformance ledger under both rubrics; the sessions ``score_session`` refuses are reported,
never raised.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import conformance_cases, require_shared

import evalkit
from evalkit.errors import EvalkitError
from evalkit.ledger.reader import read_metrics_dir
from evalkit.resolve import canonical_sessions
from evalkit.scoring.engine import score_records, score_session
from evalkit.simulate import simulate_metrics_dir
from evalkit.simulate.hostile_ledgers import generate_ledger

RUBRICS = ("rubric-v1", "rubric-v2")
TIMESTAMP = "2026-10-01T00:00:00.000Z"
RUN = {"timestamp": TIMESTAMP, "model_id": "m-1", "model_source": "config", "handle": "ada"}


def _assert_records_equal_sessions(metrics: Path, rubric: str) -> int:
    """Every record of score_records equals score_session's; every refusal is what
    score_session raises; nothing else. Returns the number of records."""
    batch = score_records(metrics, rubric, **RUN)
    records = list(batch)
    ids = [
        r["session_id"]
        for r in canonical_sessions(read_metrics_dir(metrics).sessions.values).records
    ]
    assert batch.sessions == tuple(ids)
    refused = {r.session_id: r for r in batch.refused}
    assert [r.session_id for r in records] == [i for i in ids if i not in refused]
    by_id = {r.session_id: r for r in records}
    for sid in ids:
        try:
            one = score_session(metrics, sid, rubric, **RUN)
        except EvalkitError as exc:
            assert sid in refused and refused[sid].reason == str(exc), sid
            assert refused[sid].error == type(exc).__name__
            continue
        assert by_id[sid] == one, sid  # every field of the dataclass
        assert by_id[sid].to_dict() == one.to_dict(), sid  # and the record, seal included
        assert by_id[sid].resolution == one.resolution
    return len(records)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("rubric", RUBRICS)
@pytest.mark.slow
def test_generated_ledgers(tmp_path: Path, seed: int, rubric: str) -> None:
    metrics = tmp_path / "metrics"
    generate_ledger(metrics, n_sessions=70, n_events=2500, seed=seed)
    assert _assert_records_equal_sessions(metrics, rubric) >= 60


@pytest.mark.parametrize("rubric", RUBRICS)
def test_simulated_ledgers(tmp_path: Path, rubric: str) -> None:
    ledger = simulate_metrics_dir(tmp_path / "sim", n_sessions=25, seed=7, score=False)
    assert _assert_records_equal_sessions(ledger.metrics_dir, rubric) >= 20


@pytest.mark.parametrize("case", conformance_cases())
@pytest.mark.parametrize("rubric", RUBRICS)
def test_conformance_ledgers(case: str, rubric: str) -> None:
    metrics = require_shared("conformance", *case.split("/"))
    _assert_records_equal_sessions(metrics, rubric)


def test_refusals_are_reported_never_raised(tmp_path: Path) -> None:
    metrics = tmp_path / "m"
    metrics.mkdir()
    (metrics / "sessions.jsonl").write_text(
        '{"session_id":"a","status":"completed","completed_at":"2026-09-19T10:00:00Z"}\n'
        '{"session_id":"   ","status":"completed","completed_at":"2026-09-19T11:00:00Z"}\n',
        encoding="utf-8",
    )
    batch = evalkit.score_records(metrics, session_ids=["   ", "nope", "a"], timestamp=TIMESTAMP)
    assert [r.session_id for r in batch] == ["a"]  # ledger order, whatever order was asked
    assert [(r.session_id, r.error) for r in batch.refused] == [
        ("nope", "SessionResolutionError"),
        ("   ", "ValidationError"),
    ]
    assert batch.refused[0].reason == "session not found: nope"
    with pytest.raises(EvalkitError, match="not one string"):
        evalkit.score_records(metrics, session_ids="a")


def test_a_batch_is_iterated_once(tmp_path: Path) -> None:
    metrics = tmp_path / "m"
    generate_ledger(metrics, n_sessions=5, n_events=50, seed=1)
    batch = score_records(metrics, timestamp=TIMESTAMP)
    assert len(list(batch)) == len(batch) - len(batch.refused)
    with pytest.raises(EvalkitError, match="iterated once"):
        list(batch)


def test_batch_arguments_are_checked_before_anything_is_scored(tmp_path: Path) -> None:
    with pytest.raises(EvalkitError, match="metrics directory not found"):
        score_records(tmp_path / "none")
    with pytest.raises(EvalkitError, match="timestamp"):
        score_records(tmp_path, timestamp="yesterday")
    with pytest.raises(EvalkitError, match=r"model\.source"):
        score_records(tmp_path, model_source="guess")
