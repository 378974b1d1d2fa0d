"""Judged records in a stream (issue 19): the next batch's calls run while a batch is written.

``score --journal --judge`` hands records to the judge a batch at a time. Each batch used to
run its calls to the end before the next began, so the calls in flight fell to zero at every
batch's end and while its records were journaled; a batch smaller than ``--concurrency`` never
used it. Through :class:`evalkit.judge.call_stream.CallStream` the next batch queues behind the
one in flight: more calls than one batch holds are in flight at once, never more than the
concurrency. The official ``openai`` SDK against a loopback server, real HTTP.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evalkit.judge.model_judge import build_judges
from evalkit.judge.record_judge import ModelRecordJudge
from evalkit.judge.scripted_server import ScriptedServer, rules_reply
from evalkit.judge.specs import parse_spec
from evalkit.scoring.engine import score_records
from evalkit.simulate.hostile_ledgers import generate_ledger

STAMP = "2026-10-01T00:00:00.000Z"


class _InFlight:
    """A server script that answers as the rule judge after 50 ms, counting requests at once."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> Any:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.05)
        with self._lock:
            self.now -= 1
        return rules_reply(request)


def _judged(tmp_path: Path, *, batch_size: int, concurrency: int) -> tuple[int, list[Any], Any]:
    metrics = tmp_path / "metrics"
    generate_ledger(metrics, n_sessions=24, n_events=240)
    script = _InFlight()
    with ScriptedServer(script) as server:
        spec = parse_spec(f"openai:stream,base_url={server.base_url('openai')}")
        [handle], redact = build_judges([spec])
        judge = ModelRecordJudge(
            handle,
            repeats=1,
            run_log=tmp_path / "eval.judge.jsonl",
            journal=tmp_path / "eval.jsonl",
            concurrency=concurrency,
            redact=redact,
            batch_size=batch_size,
        )
        with judge:
            records = list(score_records(metrics, timestamp=STAMP, judge=judge))
    return script.most, records, judge


def test_the_next_batch_is_in_flight_while_one_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    most, records, judge = _judged(tmp_path, batch_size=2, concurrency=4)
    assert len(records) == 24 and judge.held_back == 0
    assert all(any(d.get("method") == "judge" for d in r.to_dict()["dimensions"]) for r in records)
    # batches of 2: more than 2 calls at once means a second batch ran beside the first
    assert 2 < most <= 4, most
    assert judge.summary.calls == 24 and judge.summary.outcomes["ok"] == 24


def test_never_more_calls_in_flight_than_the_concurrency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    most, records, judge = _judged(tmp_path, batch_size=16, concurrency=3)
    assert len(records) == 24 and judge.summary.calls == 24
    assert most == 3, most
