"""Hostile seeded ledgers: every shape the readers must survive, at any size (benchmarks, tests).

:func:`generate_ledger` writes a metrics directory of ``n_sessions`` sessions and ``n_events``
event lines whose sessions overlap, touch, are rewritten (newest wins), backfilled by stubs or
carry a whitespace id; whose events are quality gates (red, full-gate, without exit code),
guard and loop events stamped with raw ids, dual-stamp lock events, malformed and non-object
lines, with timestamps in every accepted (and some rejected) form. The mutations an
incremental reader must follow are here too: :func:`append_sessions` (new sessions after
everything), :func:`append_late_events` (events inside old sessions' windows),
:func:`rotate_events` (the active file into ``_archive/`` behind a tombstone) and
:func:`rewrite_line` (an earlier line changed in place). Nothing here is real data.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "SEED",
    "append_late_events",
    "append_sessions",
    "generate_ledger",
    "rewrite_line",
    "rotate_events",
]

#: The seed of the benchmarks' ledger.
SEED = 20261001

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
    path: Path, n_sessions: int = 5_000, n_events: int = 500_000, seed: int = SEED
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


def _write_lines(path: Path, lines: Sequence[str], mode: str = "a") -> None:
    with open(path, mode, encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)


def append_sessions(ledger: Path, count: int, *, seed: int = SEED) -> list[str]:
    """Append ``count`` sessions, each with ten quality gates in its window; return their ids.

    They start a day after the latest session end in the ledger (at least a year after its
    start): after every session it holds, so no earlier window, and no earlier record's
    inputs, changes.
    """
    rng = random.Random(seed)
    ends = [end for _, _, end in _windows(ledger)]
    first = max([_BASE + timedelta(days=364), *ends]) + timedelta(days=1)
    ids = [f"appended-session-{seed}-{first:%Y%m%d}-{i}" for i in range(count)]
    sessions: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for i, sid in enumerate(ids):
        start = first + timedelta(days=i)
        sessions.append(
            {
                "session_id": sid,
                "started_at": _iso(start, rng, False),
                "completed_at": _iso(start + timedelta(hours=1), rng, False),
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
    _write_lines(ledger / "sessions.jsonl", [json.dumps(s) for s in sessions])
    _write_lines(ledger / "events.jsonl", [json.dumps(e) for e in events])
    return ids


def _windows(ledger: Path) -> list[tuple[str, datetime, datetime]]:
    """(id, start, end) of the sessions whose boundaries are in the plain ``...Z`` form."""
    out = []
    with open(ledger / "sessions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                bounds = [rec["started_at"], rec["completed_at"]]
                if not all(b.endswith("Z") and b[10] == "T" for b in bounds):
                    continue
                start, end = (datetime.fromisoformat(b.replace("Z", "+00:00")) for b in bounds)
            except (ValueError, KeyError, TypeError, AttributeError, IndexError):
                continue
            if end > start:
                out.append((str(rec["session_id"]), start, end))
    return out


def append_late_events(
    ledger: Path, count: int, *, sessions: int | None = None, seed: int = SEED
) -> list[str]:
    """Append ``count`` events stamped inside the windows of earlier sessions (late events).

    They fall into the windows of ``sessions`` sessions drawn at random (default: any
    session), quality gates (some red) and guard events; return the ids whose windows they
    were drawn in.
    """
    rng = random.Random(seed)
    spans = _windows(ledger)
    if not spans:
        return []
    chosen = rng.sample(spans, min(sessions, len(spans))) if sessions else spans
    events, touched = [], []
    for _ in range(count):
        sid, start, end = rng.choice(chosen)
        when = start + (end - start) * rng.random()
        event: dict[str, Any] = {"timestamp": _iso(when, rng, False)}
        if rng.random() < 0.7:
            event["event"] = "orchestrator.quality_gate.failed"
            event["variant"] = rng.choice(["incremental", "full-gate"])
            event["exit_code"] = rng.choice([0, 1])
        else:
            event["event"] = "orchestrator.destructive_guard.blocked"
        events.append(json.dumps(event))
        touched.append(sid)
    _write_lines(ledger / "events.jsonl", events)
    return list(dict.fromkeys(touched))


def rotate_events(ledger: Path, *, when: str = "2027-12-31T00:00:00.000Z") -> Path:
    """Move ``events.jsonl`` into ``_archive/`` and start a fresh one with the tombstone.

    As the orchestrator rotates (a rename, then a new file whose first line names the
    archive); returns the archive's path.
    """
    archive = ledger / "_archive"
    archive.mkdir(exist_ok=True)
    existing = len(list(archive.iterdir()))
    target = archive / f"events-20260701T000000Z_20271231T{existing:06d}Z.jsonl"
    os.rename(ledger / "events.jsonl", target)
    tombstone = {
        "timestamp": when,
        "event": "orchestrator.events.rotated",
        "archived_as": f"_archive/{target.name}",
    }
    _write_lines(ledger / "events.jsonl", [json.dumps(tombstone)], mode="w")
    return target


def rewrite_line(path: Path, number: int, text: str, *, in_place: bool = True) -> None:
    """Replace line ``number`` (1-based) of ``path`` by ``text``.

    ``in_place`` writes through the same inode (``r+``, the rest of the file shifted as
    needed), as an editor that truncates and rewrites does; otherwise a new file replaces it
    (a new inode, as ``sed -i`` does).
    """
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = text.encode("utf-8")
    data = b"\n".join(lines)
    if in_place:
        with open(path, "r+b") as fh:
            fh.write(data)
            fh.truncate()
        return
    fresh = path.with_name(path.name + ".new")
    fresh.write_bytes(data)
    os.replace(fresh, path)
