"""Batch speed on a seeded ledger of 5,000 sessions and 500,000 events (issue 13).

In one run, each against a baseline measured in the same run: ``score_ledger`` against merely
parsing the ledger's files with the fast parser; ``evalkit score --all --journal`` against a
loop of ``score_session`` + journal append (timed on a random sample, extrapolated, saying
so); the incremental rerun with nothing new; ``evalkit verify --all`` against a loop of
``verify_record`` (sampled and extrapolated the same way); the incremental rerun again after a
few sessions are appended. The commands run in a fresh interpreter each, start-up included.
The sample's verdicts are checked against the batch's.

``generate_ledger`` is also used by the tests (tests/test_engine_batch.py) to build ledgers
with overlaps, duplicates, stubs, dual stamps, bad lines and odd timestamps.
"""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal
from evalkit.ledger.parse import gc_paused
from evalkit.ledger.reader import read_metrics_dir
from evalkit.scoring.engine import score_ledger, score_session
from evalkit.verify.rescore import verify_record

N_SESSIONS = 5_000
N_EVENTS = 500_000
SAMPLE = 12
APPENDED = 3  # sessions appended before the last incremental rerun
SEED = 20261001
TIMESTAMP = "2026-10-01T00:00:00.000Z"

_BASE = datetime(2026, 7, 1, tzinfo=UTC)


def _iso(t: datetime, rng: random.Random, odd: bool) -> str:
    if odd:
        variant = rng.randrange(5)
        if variant == 0:
            return (t + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
        if variant == 1:
            return t.strftime("%Y-%m-%dT%H:%M:%S")  # no zone: UTC
        if variant == 2:
            return t.strftime("%Y-%m-%d %H:%M:%S.%fZ")
        if variant == 3:
            return "not a timestamp"
        return t.strftime("%a, %d %b %Y %H:%M:%S GMT")
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _session(rng: random.Random, i: int, start: datetime, minutes: int) -> dict[str, Any]:
    odd = rng.random() < 0.03
    rec: dict[str, Any] = {
        "session_id": f"main-{start:%Y-%m-%d}-session-{i}",
        "started_at": _iso(start, rng, odd),
        "completed_at": _iso(start + timedelta(minutes=minutes), rng, odd and rng.random() < 0.5),
    }
    if rng.random() < 0.03:
        del rec[rng.choice(["started_at", "completed_at"])]
    roll = rng.random()
    if roll < 0.08:
        rec["status"] = "abandoned"
    elif roll < 0.2:
        rec["status"] = "completed"
    waves = rng.choice([0, 0, 1, 2, 3, 5])
    if rng.random() < 0.9:
        rec["total_waves"] = waves
    if rng.random() < 0.1:
        rec["waves"] = [{"role": "Housekeeping", "coordinator_direct": True}]
    elif waves:
        rec["waves"] = [{"wave": w + 1, "role": "Impl-Core"} for w in range(waves)]
    if rng.random() < 0.9:
        rec["total_files_changed"] = rng.choice([0, 0, 1, 4, 12])
    if rng.random() < 0.85:
        rec["total_agents"] = rng.randrange(0, 9)
    if rng.random() < 0.8:
        rec["agent_summary"] = {
            "complete": rng.randrange(0, 6),
            "spiral": rng.choice([0] * 12 + [1, 2, "1"]),
        }
    if rng.random() < 0.8:
        eff: dict[str, Any] = {"planned_issues": rng.choice([0, 1, 3, 5])}
        if rng.random() < 0.8:
            eff["completion_rate"] = rng.choice([0, 0.5, 0.79, 0.8, 1, 1.0])
        if rng.random() < 0.7:
            eff["carryover"] = rng.randrange(0, 3)
        rec["effectiveness"] = eff
    if rng.random() < 0.5:
        rec["total_token_input"] = rng.randrange(1000, 400_000)
        rec["total_token_output"] = rng.randrange(1000, 400_000)
    if rng.random() < 0.3:
        rec["duration_seconds"] = minutes * 60
    return rec


def generate_ledger(
    path: Path, n_sessions: int = N_SESSIONS, n_events: int = N_EVENTS, seed: int = SEED
) -> list[str]:
    """Write a seeded metrics dir to ``path``; return the distinct session ids written.

    Sessions follow each other with random gaps and lengths, so some overlap and some touch;
    a few records are rewritten (newest wins), some are backfill stubs or carry a duplicate id.
    Events: quality gates (some red, some full-gate, some without exit_code), guard and loop
    events stamped with raw ids, dual-stamp lock events for about half of the sessions,
    malformed and non-object lines, and timestamps in every accepted (and some rejected) form.
    """
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    sessions: list[dict[str, Any]] = []
    spans: list[tuple[datetime, datetime, str]] = []
    t = _BASE
    for i in range(n_sessions):
        t += timedelta(minutes=rng.choice([-30, 0, 5, 20, 60, 90]))
        minutes = rng.choice([0, 15, 45, 90, 120])
        rec = _session(rng, i, t, minutes)
        sessions.append(rec)
        spans.append((t, t + timedelta(minutes=minutes), rec["session_id"]))
        if rng.random() < 0.03:  # a rewrite of the same session: the later record wins
            sessions.append({**rec, "total_files_changed": rng.randrange(0, 5)})
        if rng.random() < 0.01:  # a backfill stub appended after the real record
            sessions.append(
                {"session_id": rec["session_id"], "_backfill_source": "hook", "status": "abandoned"}
            )
    if n_sessions > 3:
        sessions.append(
            {"session_id": "   ", "completed_at": "2026-07-01T00:00:00Z", "status": "completed"}
        )

    raw_of = {sid: f"{rng.getrandbits(64):016x}-raw" for _, _, sid in spans}
    lines: list[str] = []
    for sid, raw in raw_of.items():
        if rng.random() < 0.5:
            lines.append(
                json.dumps(
                    {
                        "timestamp": "2026-07-01T00:00:00.000Z",
                        "event": "orchestrator.session.lock.acquired",
                        "session_id": raw,
                        "semantic_session_id": sid,
                    }
                )
            )
    gate_names = ["orchestrator.quality_gate.passed", "orchestrator.quality_gate.failed"]
    guard_names = [
        "orchestrator.destructive_guard.blocked",
        "orchestrator.destructive_guard.warned",
        "orchestrator.loop.warning",
    ]
    while len(lines) < n_events:
        start, end, sid = spans[rng.randrange(len(spans))]
        span = max((end - start).total_seconds(), 1.0)
        when = start + timedelta(seconds=rng.uniform(-0.1 * span, 1.1 * span))
        if rng.random() < 0.02:  # land exactly on a boundary (inclusive window)
            when = rng.choice([start, end])
        when = when.replace(microsecond=(when.microsecond // 1000) * 1000)
        roll = rng.random()
        event: dict[str, Any] = {"timestamp": _iso(when, rng, rng.random() < 0.01)}
        if roll < 0.45:
            event["event"] = rng.choice(gate_names)
            event["variant"] = rng.choice(["baseline", "incremental", "full-gate"])
            if rng.random() < 0.97:
                event["exit_code"] = rng.choice([0, 0, 0, 1, 2])
        elif roll < 0.7:
            event["event"] = rng.choice(guard_names)
            event["session_id"] = raw_of[sid] if rng.random() < 0.9 else sid
        elif roll < 0.995:
            event["event"] = "orchestrator.wave.completed"
        elif roll < 0.998:
            lines.append('{"timestamp": "2026-07-0')
            continue
        else:
            lines.append("[1, 2, 3]")
            continue
        lines.append(json.dumps(event))
    with open(path / "sessions.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(s) + "\n" for s in sessions)
    with open(path / "events.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
    return list(dict.fromkeys(s["session_id"] for s in sessions))


def _append_sessions(ledger: Path, count: int) -> list[str]:
    """Append ``count`` sessions, each with ten quality gates in its window, a year after the
    ledger's start (after every session it holds: no earlier window, so no earlier record's
    inputs, changes); return their ids."""
    rng = random.Random(SEED)  # unused by the writer's own form, which _iso gives here
    ids = [f"appended-session-{i}" for i in range(count)]
    sessions, events = [], []
    for i, sid in enumerate(ids):
        start = _BASE + timedelta(days=365 + i)
        end = start + timedelta(hours=1)
        sessions.append(
            {
                "session_id": sid,
                "started_at": _iso(start, rng, False),
                "completed_at": _iso(end, rng, False),
                "status": "completed",
                "total_waves": 2,
            }
        )
        events.extend(
            {
                "timestamp": _iso(start + timedelta(minutes=minute), rng, False),
                "event": "orchestrator.quality_gate.passed",
                "variant": "incremental",
                "exit_code": 0,
            }
            for minute in range(0, 60, 6)
        )
    with open(ledger / "sessions.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(s) + "\n" for s in sessions)
    with open(ledger / "events.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in events)
    return ids


def _timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _cli(*argv: str) -> float:
    """Wall time of one ``evalkit`` command in a fresh interpreter (start-up included)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evalkit", *argv], check=True, capture_output=True)
    return time.perf_counter() - t0


def _parse_only(ledger: Path) -> float:
    """Reading the ledger's files and parsing every line with the fast parser, nothing else:
    the floor a reader of these files cannot go below."""
    import orjson  # deferred: the fast extra; generate_ledger (used by the tests) needs none

    def parse() -> int:
        values = []
        for name in ("sessions.jsonl", "events.jsonl"):
            for line in (ledger / name).read_bytes().split(b"\n"):
                if line.strip():
                    with contextlib.suppress(orjson.JSONDecodeError):
                        values.append(orjson.loads(line))
        return len(values)

    # with the cyclic collector paused, as score_ledger runs: the floor gets the same help
    with gc_paused():
        return min(_timed(parse)[0] for _ in range(3))


def _verdicts(ledger: Path, rubric: str, sample: list[str], frame: Any) -> tuple[float, int]:
    """(seconds per score_session + append, sessions whose verdicts equal score_ledger's)."""
    scratch = ledger.parent / "loop.jsonl"
    t0 = time.perf_counter()
    identical = 0
    for sid in sample:
        try:
            record = score_session(ledger, sid, rubric, timestamp=TIMESTAMP)
        except EvalkitError:
            continue
        journal.append(scratch, record.to_dict())
        one = [
            (d.id, str(d.status), d.to_dict().get("score"), d.evidence) for d in record.dimensions
        ]
        rows = frame[frame["session_id"] == sid]
        many = [
            (r.dimension, r.status, None if pd.isna(r.score) else r.score, r.evidence)
            for r in rows.itertuples()
        ]
        identical += one == many
    return (time.perf_counter() - t0) / len(sample), identical


def _target(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    """Generate the ledger once, then time every path and print each figure with its ratio."""
    rubric = "rubric-v2"
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
        ledger = Path(tmp) / "metrics"
        seconds, ids = _timed(lambda: generate_ledger(ledger))
        print(
            f"generated {N_SESSIONS} sessions / {N_EVENTS} events in {seconds:.1f} s "
            f"({len(ids)} distinct ids incl. rewrites)"
        )
        parse_only = _parse_only(ledger)
        reading = _timed(lambda: read_metrics_dir(ledger))[0]
        # best of 3, as the parse-only floor is: both ratios' terms are measured alike
        runs = [_timed(lambda: score_ledger(ledger, rubric)) for _ in range(3)]
        batch, frame = min(t for t, _ in runs), runs[-1][1]
        scored = int(frame["session_id"].nunique())
        print(
            f"score_ledger: {scored} sessions, {len(frame)} rows in {batch:.2f} s (best of 3); "
            f"reading the ledger alone {reading:.2f} s; merely parsing its files with the fast "
            f"parser {parse_only:.2f} s (best of 3): score_ledger is {batch / parse_only:.1f}x "
            f"that (target <= 3x: {_target(batch <= 3 * parse_only)})"
        )

        sample = random.Random(SEED).sample(sorted(frame["session_id"].unique()), SAMPLE)
        single, identical = _verdicts(ledger, rubric, sample, frame)
        loop = single * scored
        print(
            f"score_session (+ journal append) one at a time: {single:.2f} s per session on a "
            f"random sample of {SAMPLE}, extrapolated to {scored} sessions: {loop:.0f} s; "
            f"identical verdicts on the sample: {identical}/{SAMPLE}"
        )
        print(f"ratio (one at a time / score_ledger): {loop / batch:.0f}x")

        md = str(ledger)
        journal_all = _cli("score", "--all", "--journal", "--metrics-dir", md, "--no-progress",
                           "--timestamp", TIMESTAMP, "--out", str(Path(tmp) / "table.csv"))  # fmt: skip
        records = journal.read(ledger / "eval.jsonl").records
        print(
            f"score --all --journal: {len(records)} records in {journal_all:.2f} s, "
            f"{loop / journal_all:.0f}x the loop of score_session "
            f"(target <= 10 s and >= 100x: {_target(journal_all <= 10 and loop / journal_all >= 100)})"
        )
        again = _cli("score", "--all", "--journal", "--metrics-dir", md, "--no-progress",
                     "--out", str(Path(tmp) / "again.csv"))  # fmt: skip
        unchanged = len(journal.read(ledger / "eval.jsonl").records) == len(records)
        print(
            f"incremental rerun with nothing new: {again:.2f} s, nothing appended: {unchanged} "
            f"(target <= 3 s: {_target(again <= 3 and unchanged)})"
        )
        verify_all = _cli(
            "verify", "--all", "--metrics-dir", md, "--no-progress", "--format", "csv"
        )
        picked = random.Random(SEED).sample([r["run_id"] for r in records], SAMPLE)
        per_verify = _timed(lambda: [verify_record(rid, ledger) for rid in picked])[0] / SAMPLE
        verify_loop = per_verify * len(records)
        print(
            f"verify --all: {len(records)} records in {verify_all:.2f} s; verify one at a time "
            f"{per_verify:.2f} s per record (sample of {SAMPLE}), extrapolated {verify_loop:.0f} s: "
            f"{verify_loop / verify_all:.0f}x (target <= 10 s: {_target(verify_all <= 10)})"
        )
        new_ids = _append_sessions(ledger, APPENDED)
        appended = _cli("score", "--all", "--journal", "--metrics-dir", md, "--no-progress",
                        "--out", str(Path(tmp) / "appended.csv"))  # fmt: skip
        added = [
            r["session_id"] for r in journal.read(ledger / "eval.jsonl").records[len(records) :]
        ]
        print(
            f"incremental rerun with {APPENDED} sessions appended: {appended:.2f} s, appended "
            f"exactly those: {added == new_ids} (target <= 3 s: "
            f"{_target(appended <= 3 and added == new_ids)})"
        )


if __name__ == "__main__":
    sys.exit(main())
