"""score_ledger gives, for every session, exactly what score_session gives one at a time.

Checked on seeded generated ledgers (overlaps, touching windows, rewrites, stubs, dual stamps,
malformed and non-object lines, odd timestamps) and on every conformance ledger, under both
rubrics: same sessions, same dimensions in the same order, same status, score and evidence.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import conformance_cases, require_shared

from evalkit.errors import ValidationError
from evalkit.js.timestamps import parse_timestamps, timestamp_ms
from evalkit.resolve import canonical_sessions
from evalkit.scoring.engine import LEDGER_COLUMNS, score_ledger, score_session
from evalkit.simulate.hostile_ledgers import generate_ledger

RUBRICS = ("rubric-v1", "rubric-v2")
TIMESTAMP = "2026-10-01T00:00:00.000Z"


def _score(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _one_at_a_time(metrics: Path, rubric: str, session_id: str) -> list[tuple[Any, ...]]:
    record = score_session(metrics, session_id, rubric, timestamp=TIMESTAMP)
    return [
        (d.id, str(d.status), _score(d.to_dict().get("score")), d.evidence)
        for d in record.dimensions
    ]


def _assert_batch_equals_single(metrics: Path, rubric: str) -> int:
    frame = score_ledger(metrics, rubric)
    assert list(frame.columns) == list(LEDGER_COLUMNS)
    from evalkit.ledger.reader import read_metrics_dir

    ids = [
        r["session_id"]
        for r in canonical_sessions(read_metrics_dir(metrics).sessions.values).records
    ]
    scored = list(dict.fromkeys(frame["session_id"]))
    assert scored == [i for i in ids if i.strip()]
    for sid in ids:
        if not sid.strip():
            with pytest.raises(ValidationError):
                score_session(metrics, sid, rubric, timestamp=TIMESTAMP)
            assert sid in frame.attrs["skipped"]
            continue
        rows = frame[frame["session_id"] == sid]
        batch = [(r.dimension, r.status, _score(r.score), r.evidence) for r in rows.itertuples()]
        assert batch == _one_at_a_time(metrics, rubric, sid), sid
    return len(scored)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("rubric", RUBRICS)
@pytest.mark.slow
def test_generated_ledgers(tmp_path: Path, seed: int, rubric: str) -> None:
    metrics = tmp_path / "metrics"
    generate_ledger(metrics, n_sessions=70, n_events=2500, seed=seed)
    assert _assert_batch_equals_single(metrics, rubric) >= 60


@pytest.mark.parametrize("case", conformance_cases())
@pytest.mark.parametrize("rubric", RUBRICS)
def test_conformance_ledgers(case: str, rubric: str) -> None:
    metrics = require_shared("conformance", *case.split("/"))
    _assert_batch_equals_single(metrics, rubric)


@pytest.mark.parametrize("rubric", RUBRICS)
def test_inverted_window_counts_no_event(tmp_path: Path, rubric: str) -> None:
    # completed_at before started_at: no timestamp is both >= start and <= end, so every
    # window count is 0 (the reference's filter); a bisection span must not go negative.
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    sessions = [
        '{"session_id":"s1","status":"completed","started_at":"2026-09-19T10:00:00.000Z",'
        '"completed_at":"2026-09-19T08:00:00.000Z","total_files_changed":2,'
        '"waves":[{"role":"Impl"}],"total_waves":1}'
    ]
    events = [
        f'{{"timestamp":"2026-09-19T0{h}:00:00.000Z","event":"{name}"{extra}}}'
        for h, name, extra in [
            (9, "orchestrator.quality_gate.failed", ',"variant":"full-gate","exit_code":1'),
            (9, "orchestrator.loop.warning", ""),
            (9, "orchestrator.destructive_guard.blocked", ""),
        ]
    ]
    (metrics / "sessions.jsonl").write_text("\n".join(sessions) + "\n")
    (metrics / "events.jsonl").write_text("\n".join(events) + "\n")
    _assert_batch_equals_single(metrics, rubric)
    evidence = " ".join(score_ledger(metrics, rubric)["evidence"])
    assert "=-" not in evidence
    assert "0 quality_gate events in window" in evidence
    assert "but 0 full-gate events in window" in evidence
    if rubric == "rubric-v1":
        assert "(0 blocked, 0 spiral, 0 loop.warning)" in evidence
    else:
        assert "blocked=0, destructive_guard.warned=0, loop.warning=0" in evidence


def test_empty_ledger_gives_empty_frame(tmp_path: Path) -> None:
    frame = score_ledger(tmp_path)
    assert isinstance(frame, pd.DataFrame)
    assert frame.empty and list(frame.columns) == list(LEDGER_COLUMNS)


def test_bulk_timestamp_parse_equals_single(tmp_path: Path) -> None:
    values: list[Any] = [
        "2026-09-19T08:00:00.000Z",
        "2026-02-30T08:00:00.000Z",  # day overflow: 2 March
        "2026-09-19T24:00:00.000Z",  # hour 24: next day
        "2026-09-19T08:00:60.000Z",  # second 60: NaN in JavaScript
        "2026-9-19T08:00:00.000Z",  # unpadded month with a time: NaN
        "1600-01-01T00:00:00.123Z",  # outside pandas' range
        "2026-09-19T10:00:00+02:00",
        "2026-09-19",
        None,
        5,
        ["2026-09-19"],
    ]
    assert parse_timestamps(values) == [timestamp_ms(v) for v in values]
