"""Incremental by the bytes: a rerun parses only what was appended, with the records of a full rescore.

The journal's cursor (:mod:`evalkit.journal.cursor`) remembers how far each event source was
read and the sha256 of those bytes. The differential test drives a seeded ledger through
generated sequences of appends (new sessions, late events inside old windows), rotations,
rewrites and truncations, and after every step compares the incremental journal's latest
record of each session with a full rescore of the same ledger into a fresh journal.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit import journal
from evalkit.journal.batch import JournalingResult, journal_ledger
from evalkit.journal.cursor import cursor_path, file_sha256, load_cursor
from evalkit.ledger.reader import ReadPoint, read_jsonl
from evalkit.scoring.measure import EventDigest
from evalkit.simulate import hostile_ledgers

STEPS = (
    *("sessions", "late", "rotate", "rewrite", "replace", "truncate", "torn", "nothing"),
    *("overlap", "named", "started"),
)
#: outside every generated session's window
_LATE = "2031-01-01T00:00:00.000Z"


def _stamps() -> Iterator[str]:
    day = 0
    while True:
        day += 1
        yield f"2026-10-{day:02d}T00:00:00.000Z"


def _latest(path: Path) -> dict[str, dict[str, Any]]:
    return journal.latest_records(journal.read(path).records)


def _step(ledger: Path, step: str, rng: random.Random) -> None:
    events = ledger / "events.jsonl"
    if step == "sessions":
        hostile_ledgers.append_sessions(ledger, rng.randint(1, 3), seed=rng.randrange(1000))
    elif step == "late":
        hostile_ledgers.append_late_events(ledger, 40, sessions=4, seed=rng.randrange(1000))
    elif step == "rotate":
        hostile_ledgers.rotate_events(ledger)
    elif step in ("rewrite", "replace"):
        n = len(events.read_bytes().split(b"\n")) - 1
        if n >= 1:
            line = rng.randint(1, n)
            text = '{"timestamp": "2026-07-01T00:00:00.000Z", "event": "orchestrator.loop.warning"}'
            hostile_ledgers.rewrite_line(events, line, text, in_place=step == "rewrite")
    elif step == "truncate":
        data = events.read_bytes()
        cut = data.rfind(b"\n", 0, max(len(data) - 1, 0))
        events.write_bytes(data[: cut + 1] if cut >= 0 else b"")
    elif step in ("overlap", "named", "started"):
        _touch_old_session(ledger, step, rng)
    elif step == "torn":  # a writer mid-line: the next step completes it (or not)
        with open(events, "ab") as fh:
            fh.write(b'{"timestamp": "2026-07-02T00:00:00.000Z", "event": "orch')


def _touch_old_session(ledger: Path, step: str, rng: random.Random) -> None:
    """Append what changes an old session without an event inside its window.

    ``overlap``: a new session whose window overlaps it (a new peer); ``named``: a guard event
    stamped with its id, outside every window (attributed to it by id); ``started``: a
    ``session.started`` event at its start, with a host class.
    """
    old = [
        json.loads(line)
        for line in (ledger / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.startswith('{"session_id": "main-')
    ]
    rec = rng.choice(
        [r for r in old if str(r.get("started_at", "")).endswith("Z") and "completed_at" in r]
    )
    if step == "overlap":
        line = {
            "session_id": f"peer-{rng.randrange(10**9)}",
            "started_at": rec["started_at"],
            "completed_at": rec["completed_at"],
            "status": "completed",
        }
        with open(ledger / "sessions.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
        return
    if step == "named":
        event = {"timestamp": _LATE, "event": "orchestrator.destructive_guard.blocked"}
        event["session_id"] = rec["session_id"]
    else:
        event = {"timestamp": rec["started_at"], "event": "orchestrator.session.started"}
        event["host_class"] = f"class-{rng.randrange(100)}"
    with open(ledger / "events.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.slow
def test_every_rerun_has_the_records_of_a_full_rescore(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ledger = tmp_path / "m"
    hostile_ledgers.generate_ledger(ledger, 120, 6_000, seed=seed)
    inc = tmp_path / "inc" / "eval.jsonl"
    stamps = _stamps()
    journal_ledger(ledger, inc, timestamp=next(stamps))
    for i in range(10):
        step = rng.choice(STEPS)
        _step(ledger, step, rng)
        result = journal_ledger(ledger, inc, timestamp=next(stamps))
        full = tmp_path / f"full-{i}" / "eval.jsonl"
        journal_ledger(ledger, full, timestamp=next(stamps), rescore=True)
        assert _latest(inc) == _latest(full), (seed, i, step, result.reading)


@dataclass
class _Run:
    """A seeded ledger journaled once: where it is, its journal, the next timestamps."""

    ledger: Path
    journal: Path
    stamps: Iterator[str]
    first: JournalingResult

    @property
    def events(self) -> Path:
        return self.ledger / "events.jsonl"

    def again(self) -> JournalingResult:
        return journal_ledger(self.ledger, self.journal, timestamp=next(self.stamps))


def _journaled(tmp_path: Path, sessions: int) -> _Run:
    ledger = tmp_path / "m"
    hostile_ledgers.generate_ledger(ledger, sessions, sessions * 50)
    inc, stamps = tmp_path / "eval.jsonl", _stamps()
    return _Run(ledger, inc, stamps, journal_ledger(ledger, inc, timestamp=next(stamps)))


def test_an_append_is_read_from_where_the_last_batch_stopped(tmp_path: Path) -> None:
    run = _journaled(tmp_path, 60)
    assert run.first.resumed == () and run.first.reading == ()
    size = run.events.stat().st_size
    again = run.again()
    assert again.resumed == ((str(run.events), size),) and again.scored == 0
    assert len(again.unchanged) == run.first.scored
    added = hostile_ledgers.append_sessions(run.ledger, 2)
    late = run.again()
    assert late.resumed == ((str(run.events), size),)
    assert sorted(r["session_id"] for r in late.appended) == sorted(added)


def test_the_cursor_holds_the_journal_s_own_hash_after_each_append(tmp_path: Path) -> None:
    """The hash of the journal left by a batch that resumed is continued from the prefix the
    cursor checked, not read again: it must still be the file's sha256, or the next batch
    would read the journal whole (records the same, the speed lost)."""
    run = _journaled(tmp_path, 30)
    for n in (2, 0, 3):
        if n:
            hostile_ledgers.append_sessions(run.ledger, n)
        result = run.again()
        assert result.reading == (), result.reading  # the cursor was used, not refused
        cursor, _ = load_cursor(run.journal)
        assert cursor is not None and cursor.journal is not None
        assert cursor.journal.end == run.journal.stat().st_size
        assert cursor.journal.sha256 == file_sha256(run.journal)


def test_a_changed_prefix_is_read_whole_and_says_why(tmp_path: Path) -> None:
    run = _journaled(tmp_path, 40)
    events = run.events
    # longer than the line it replaces: the file grows, but its start changed
    text = json.dumps(
        {"timestamp": "2026-07-01T00:00:00.000Z", "event": "orchestrator.loop.warning"}
        | {"pad": "x" * 400}
    )
    hostile_ledgers.rewrite_line(events, 3, text)
    result = run.again()
    assert result.resumed == ()
    assert any("changed (rewritten or rotated)" in note for note in result.reading)
    data = events.read_bytes()
    events.write_bytes(data[: len(data) // 2])
    result = run.again()
    assert any("is shorter" in note for note in result.reading)


def test_a_journal_changed_behind_the_cursor_is_read_whole(tmp_path: Path) -> None:
    run = _journaled(tmp_path, 30)
    # another writer drops the last record: its session must be scored again
    lines = run.journal.read_bytes().splitlines(keepends=True)
    dropped = json.loads(lines[-1])["session_id"]
    run.journal.write_bytes(b"".join(lines[:-1]))
    result = run.again()
    assert "cursor: the journal changed since the cursor was written" in result.reading[0]
    assert [r["session_id"] for r in result.appended] == [dropped]


def test_a_moved_ledger_is_read_whole_and_says_why(tmp_path: Path) -> None:
    """The cursor names its files by path: a ledger moved (or reached by another path) is
    read whole, and the batch says so instead of falling back in silence."""
    run = _journaled(tmp_path, 20)
    moved = run.ledger.rename(tmp_path / "moved")
    result = journal_ledger(moved, run.journal, timestamp=next(run.stamps))
    assert result.resumed == ()
    assert any("names none of this ledger's event files" in note for note in result.reading)
    assert result.scored == 0 and len(result.unchanged) == run.first.scored
    again = journal_ledger(moved, run.journal, timestamp=next(run.stamps))
    assert again.reading == () and again.resumed  # the new paths are the cursor's now


def test_a_cursor_that_cannot_be_read_is_a_full_read(tmp_path: Path) -> None:
    run = _journaled(tmp_path, 20)
    cursor_path(run.journal).write_bytes(b"not a cursor")
    assert load_cursor(run.journal)[0] is None
    result = run.again()
    assert result.resumed == () and "cursor: cannot be read" in result.reading[0]
    assert result.scored == 0 and len(result.unchanged) == run.first.scored


def test_a_resumed_reading_equals_a_whole_reading(tmp_path: Path) -> None:
    ledger = tmp_path / "m"
    hostile_ledgers.generate_ledger(ledger, 50, 2_500)
    events = ledger / "events.jsonl"
    with open(events, "ab") as fh:  # lines that are no event, before and after the cut
        fh.write(b"[1, 2]\nnot json\n")
    before = read_jsonl(events, sink=EventDigest(), hashed=True)
    with open(events, "ab") as fh:
        fh.write(b'{"timestamp": "2026-07-01T00:00:01.000Z", "event": "x"}\n\xef\xbb\xbf{}\n')
    point = ReadPoint(before, 1 << 20, 1 << 30)
    resumed = read_jsonl(
        events, sink=EventDigest(), hashed=True, resume=point, max_line_bytes_=1 << 20,
        max_bytes=1 << 30,
    )  # fmt: skip
    whole = read_jsonl(events, sink=EventDigest(), hashed=True)
    assert resumed.counts is not None and resumed.counts.resumed_at == before.counts.end  # type: ignore[union-attr]
    assert resumed.lines == whole.lines and resumed.diagnostics == whole.diagnostics
    assert resumed.unreadable_lines == whole.unreadable_lines
    assert resumed.counts.sha256 == whole.counts.sha256  # type: ignore[union-attr]
    a, b = resumed.digest.to_state(), whole.digest.to_state()
    assert a[1] == b[1]
    assert all(np.array_equal(a[0][k], b[0][k], equal_nan=k == "times") for k in a[0])
    assert os.path.getsize(events) == resumed.counts.end


def test_a_prefix_hashed_ahead_is_handed_over_only_for_the_file_it_hashed(tmp_path: Path) -> None:
    """The cursor's prefixes are hashed in threads while the ledger is read; the hash counts
    only for the file as it was then: a rewrite of the same size, an append or a file put in
    its place is hashed again by the reader, never vouched for by the older hash."""
    import hashlib

    from evalkit.files.hashing import HashAhead

    path = tmp_path / "events.jsonl"
    path.write_bytes(b"a" * 5000 + b"\n" + b"tail\n")
    end = 5001
    ahead = HashAhead(path, end)
    got = ahead.result(os.stat(path))
    assert got is not None
    assert got.hexdigest() == hashlib.sha256(b"a" * 5000 + b"\n").hexdigest()
    assert ahead.result(os.stat(path)).hexdigest() == got.hexdigest()  # a copy each time

    for change in ("rewrite", "append", "replace"):
        ahead = HashAhead(path, end)
        ahead._thread.join()
        stamp = os.stat(path).st_mtime_ns
        if change == "rewrite":  # same size, other bytes
            path.write_bytes(b"b" * 5000 + b"\n" + b"tail\n")
        elif change == "append":
            with path.open("ab") as fh:
                fh.write(b"more\n")
        else:
            other = tmp_path / "other.jsonl"
            other.write_bytes(path.read_bytes())
            os.replace(other, path)
        os.utime(path, ns=(stamp + 10**9, stamp + 10**9))  # coarse clocks: a later mtime
        assert ahead.result(os.stat(path)) is None, change

    assert HashAhead(tmp_path / "absent", 1).result(os.stat(path)) is None
    assert HashAhead(path, 10**9).result(os.stat(path)) is None  # shorter than the prefix


def test_a_cursor_s_event_prefix_rewritten_after_it_was_loaded_is_read_whole(
    tmp_path: Path,
) -> None:
    """The hash started when the cursor was loaded is not trusted for a file rewritten since:
    the reading hashes it again, finds the change and reads the whole file."""
    run = _journaled(tmp_path, 40)
    target, events = run.journal, run.events
    found, _ = load_cursor(target)
    assert found is not None
    point = found.points[str(events)]
    assert point.ahead is not None
    point.ahead._thread.join()
    data = bytearray(events.read_bytes())
    data[data.index(b"timestamp")] = ord("T")  # one byte of the prefix, the size kept
    stamp = os.stat(events).st_mtime_ns
    events.write_bytes(bytes(data))
    os.utime(events, ns=(stamp + 10**9, stamp + 10**9))
    reread = read_jsonl(events, sink=EventDigest(), hashed=True, resume=point)
    assert reread.counts is not None
    assert reread.counts.restarted and "changed" in reread.counts.restarted
