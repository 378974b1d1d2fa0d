"""Seeded, realistic default data: metrics directories (the ledger shapes the orchestrator writes).

Nothing here is real data. The generator writes the ledger *shapes* the orchestrator writes
(see ``docs/DATA_CARD.md``): sessions with peers and back-to-back windows, rotated events under
``_archive/events-<first>_<last>.jsonl``, quality gates (red-then-green, full-gates), guard events
carrying raw harness uuids tied to the semantic session id by a dual stamp, drifted field names
and a few malformed lines. The build is a small discrete-event simulation: lines are written in
time order, each session is scored by evalkit itself right after it ends (the journal is written
by ``evalkit.score_session`` + ``evalkit.journal.reader.append``), and ``events.jsonl`` is rotated into
``_archive/`` between sessions, as the orchestrator does.

The preset ``rubric-v2-2026-09-19`` reproduces the measurement rubric-v2 reports in
"Änderungen gegenüber v1": 38 sessions, 40 rubric-v1 records, the blocked-count distribution
0->8, 1->3, 2->5, 3-5->14, 6+->10 (maximum 58, a gap between 13 and 33), spiral 0 everywhere.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from evalkit import journal
from evalkit.errors import EvalkitError
from evalkit.scoring.engine import score_session
from evalkit.simulate._sessions import (
    Session,
    dumps,
    iso,
    session_events,
    session_record,
    stamp,
    uuid4_from,
)

__all__ = [
    "PRESETS",
    "PRESET_RUBRIC_V2",
    "SimulatedLedger",
    "build_preset",
    "simulate_metrics_dir",
]

PRESET_RUBRIC_V2 = "rubric-v2-2026-09-19"
PRESETS: tuple[str, ...] = (PRESET_RUBRIC_V2,)

# Blocked counts of the preset, one per SESSION (38). Two sessions are scored twice: the one at
# index _TWICE_HIGH (7 blocked) and the one at _TWICE_LOW (2 blocked); see build_preset.
_PRESET_ZERO = [0] * 8
_PRESET_ONE = [1] * 3
_PRESET_TWO = [2] * 4  # + one re-score of a 2 -> 5 records
_PRESET_THREE_TO_FIVE = [3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5]  # 14 records
_PRESET_SIX_PLUS = [6, 7, 8, 9, 11, 12, 13, 33, 58]  # + one re-score of the 7 -> 10 records
_PRESET_SEED = 20260919
_MODEL_ID = "sim-model-1"


@dataclass(frozen=True)
class SimulatedLedger:
    """What a build wrote: the directory, its sessions and (when scored) the journal."""

    metrics_dir: Path
    session_ids: tuple[str, ...]
    blocked: dict[str, int]  # own blocked events per scored session id
    journal: Path | None
    records: int
    seed: int
    preset: str | None = None


# --------------------------------------------------------------------------------------------
# planning: when sessions run, how they overlap, what they did


def _plan_sessions(
    rng: random.Random, blocked: Sequence[int], start_day: datetime
) -> list[Session]:
    """Lay sessions out in time: mostly apart, some back-to-back, some overlapping a peer.

    Guard events are later placed in each session's *exclusive* part of its window (covered by
    no other session), so the v1 time-window count equals the session's own count by design.
    """
    sessions: list[Session] = []
    t = start_day.replace(hour=8, minute=0, second=0, microsecond=0)
    prev: Session | None = None
    day_slots = 0
    for n_blocked in blocked:
        duration = timedelta(minutes=rng.choice([60, 75, 90, 105, 120, 150, 180]))
        mode = "apart"
        if prev is not None:
            roll = rng.random()
            if roll < 0.18 and not prev.extra.get("overlapped"):
                mode = "overlap"
            elif roll < 0.36:
                mode = "back-to-back"
        if prev is None or mode == "apart":
            if day_slots >= 2 or prev is None:
                t = (t + timedelta(days=rng.choice([1, 1, 2]))).replace(hour=8, minute=0)
                day_slots = 0
            else:
                t = prev.end + timedelta(minutes=rng.choice([30, 45, 60, 90]))
            start = t
        elif mode == "back-to-back":
            start = prev.end  # touching boundaries are not an overlap
        else:
            # start inside the previous window, leaving it >= 35 min of exclusive time
            start = prev.start + (prev.end - prev.start) * 0.6
        end = start + duration
        if mode == "overlap" and prev is not None:
            end = max(end, prev.end + timedelta(minutes=40))  # keep an exclusive tail
        sid = f"main-{start:%Y-%m-%d-%H%M}"
        sess = Session(
            session_id=sid,
            raw_ids=[uuid4_from(rng)],
            start=start,
            end=end,
            blocked=n_blocked,
        )
        if mode == "overlap" and prev is not None:
            sess.extra["overlapped"] = True
            prev.extra["overlapped"] = True
        sessions.append(sess)
        prev = sess
        t = end
        day_slots += 1
    return sessions


def _decorate(rng: random.Random, sessions: list[Session]) -> None:
    """Give sessions their gate plans, drift, guard side-signals and KPIs."""
    n = len(sessions)
    for i, s in enumerate(sessions):
        s.drifted = i < max(1, n // 8)  # the oldest records use older field names
        s.dual_stamp = rng.random() > 0.12
        if rng.random() < 0.1:
            s.raw_ids.append(uuid4_from(rng))  # harness id rotated mid-session
        s.housekeeping = rng.random() < 0.08
        if s.housekeeping:
            s.files_changed, s.waves, s.gate_plan, s.planned = 0, 1, "none", 0
            s.completion_rate = None
        else:
            s.files_changed = rng.randint(1, 40)
            s.waves = rng.randint(2, 6)
            s.gate_plan = rng.choices(
                ["green", "red-then-green", "last-red", "none"], weights=[55, 30, 7, 8]
            )[0]
            s.planned = rng.randint(1, 9)
            done = s.planned - (rng.random() < 0.2) * rng.randint(1, max(1, s.planned // 2))
            s.completion_rate = round(done / s.planned, 4)
        s.warned = rng.choice([0, 0, 0, 1, 2])
        s.loop_warnings = rng.choice([0, 0, 0, 0, 1])


def _exclusive_regions(sessions: list[Session], others: list[Session]) -> None:
    """Each session's part of its window that no other window covers (strictly inside)."""
    everyone = sessions + others
    for s in sessions:
        lo, hi = s.start, s.end
        for o in everyone:
            if o is s or not (o.start < s.end and s.start < o.end):
                continue
            # overlaps are only ever with a neighbour: cut the shared side off
            if o.start <= s.start:
                lo = max(lo, o.end)
            else:
                hi = min(hi, o.start)
        if hi - lo < timedelta(minutes=20):
            raise EvalkitError(f"simulate: session {s.session_id} has no exclusive window part")
        s.exclusive = (lo, hi)


# --------------------------------------------------------------------------------------------
# the timeline


@dataclass
class _Writer:
    root: Path
    rotate_after: int
    score: bool
    rubric: str
    lines_in_active: int = 0
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    records: int = 0

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    def event(self, t: datetime, body: dict[str, Any]) -> None:
        line = dumps({"timestamp": iso(t), **body})
        with self.events.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        self.lines_in_active += 1
        self.first_ts = self.first_ts or t
        self.last_ts = t

    def raw_line(self, name: str, text: str) -> None:
        with (self.root / name).open("a", encoding="utf-8") as fh:
            fh.write(text + "\n")

    def session(self, rec: dict[str, Any]) -> None:
        self.raw_line("sessions.jsonl", dumps(rec))

    def maybe_rotate(self, now: datetime) -> None:
        if self.lines_in_active < self.rotate_after or self.first_ts is None:
            return
        assert self.last_ts is not None
        archive = self.root / "_archive"
        archive.mkdir(exist_ok=True)
        name = f"events-{stamp(self.first_ts)}_{stamp(self.last_ts)}.jsonl"
        self.events.rename(archive / name)
        self.lines_in_active, self.first_ts = 0, None
        self.event(now, {"event": "orchestrator.events.rotated", "archived_as": f"_archive/{name}"})

    def evaluate(self, s: Session, at: datetime) -> None:
        if not self.score:
            return

        record = score_session(
            self.root,
            s.session_id,
            rubric=self.rubric,
            timestamp=iso(at),
            model_id=_MODEL_ID,
            model_source="self-report",
        )
        journal.append(self.root / journal.JOURNAL_NAME, record.to_dict())
        self.records += 1


def _run_timeline(
    rng: random.Random,
    root: Path,
    sessions: list[Session],
    extras: list[dict[str, Any]],
    *,
    score: bool,
    rubric: str,
    rotate_after: int,
    malformed: bool,
) -> int:
    root.mkdir(parents=True, exist_ok=True)
    for name in ("sessions.jsonl", "events.jsonl", journal.JOURNAL_NAME):
        if (root / name).exists():
            raise EvalkitError(f"simulate: {root / name} already exists; choose an empty directory")
    w = _Writer(root=root, rotate_after=rotate_after, score=score, rubric=rubric)
    # (time, order, kind, payload): order keeps a stable sequence for equal times
    timeline: list[tuple[datetime, int, str, Any]] = []
    seq = 0
    written: dict[str, dict[str, Any]] = {}
    for s in sessions:
        for t, body in session_events(rng, s):
            timeline.append((t, seq, "event", body))
            seq += 1
        rec = session_record(rng, s)
        written[s.session_id] = rec
        if s.abandoned:
            rec["status"] = "abandoned"
        timeline.append((s.end, seq, "session", rec))
        seq += 1
        if s.scored and not s.abandoned:
            timeline.append((s.end + timedelta(minutes=2), seq, "eval", s))
            seq += 1
            if s.rescore:
                # re-run of /eval on the same ledger, before the next rotation
                timeline.append((s.end + timedelta(minutes=41), seq, "eval", s))
                seq += 1
        rot = s.end + timedelta(minutes=50)
        # never rotate while a session runs or awaits its evaluation: v1 reads only the active
        # file, so a split would hide part of that session's window from its own score
        if not any(o.start <= rot <= o.end + timedelta(minutes=45) for o in sessions):
            timeline.append((rot, seq, "rotate", None))
            seq += 1
    for extra in extras:
        body = {k: v for k, v in extra.items() if k not in ("_at", "_rewrite_of")}
        if "_rewrite_of" in extra:
            body = dict(written[extra["_rewrite_of"]])
            body["total_token_output"] = int(body.get("total_token_output", 0)) + 12_345
        timeline.append((extra["_at"], seq, "session", body))
        seq += 1
    timeline.sort(key=lambda x: (x[0], x[1]))
    if malformed:
        # damaged lines a real ledger carries; the readers skip, count and name them
        w.raw_line("sessions.jsonl", '{"session_id": "main-2026-07-01-0900", "started_at": ')
        w.raw_line("events.jsonl", "not json at all")
        w.raw_line("events.jsonl", "[1, 2, 3]")
        # drift: an offset timestamp written by a foreign tool (same instant in UTC)
        first = timeline[0][0] + timedelta(seconds=30)
        local = first.astimezone(timezone(timedelta(hours=2))).strftime("%Y-%m-%dT%H:%M:%S+02:00")
        w.raw_line("events.jsonl", dumps({"timestamp": local, "event": "subagent_stop"}))
    for t, _, kind, payload in timeline:
        if kind == "event":
            w.event(t, payload)
        elif kind == "session":
            w.session(payload)
        elif kind == "eval":
            w.evaluate(payload, t)
        elif kind == "rotate":
            w.maybe_rotate(t)
    return w.records


def _extras(rng: random.Random, sessions: list[Session]) -> list[dict[str, Any]]:
    """Session-ledger lines that are not scored sessions: rewrites, stubs, no id, abandoned."""
    out: list[dict[str, Any]] = []
    first = sessions[0]
    # a record without a session id (dropped by the canonical reader)
    out.append(
        {"_at": first.end + timedelta(hours=3), "session_type": "feature", "status": "completed"}
    )
    # a later rewrite of a session record (token totals backfilled): the newest copy wins
    r = sessions[len(sessions) // 2]
    out.append({"_at": r.end + timedelta(hours=4), "_rewrite_of": r.session_id})
    # a backfill stub of a real session: never shadows the real record
    s = sessions[len(sessions) // 3]
    out.append(
        {
            "_at": s.end + timedelta(hours=5),
            "session_id": s.session_id,
            "_backfill_source": "backfill-sessions/2026-08",
            "started_at": iso(s.start),
        }
    )
    return out


def _abandoned(rng: random.Random, sessions: list[Session]) -> list[Session]:
    """Abandoned sessions in the gaps between days: peers of nobody's guard events."""
    out = []
    for k in (len(sessions) // 4, (3 * len(sessions)) // 4):
        s = sessions[k]
        start = s.end + timedelta(hours=6)
        nxt = sessions[k + 1].start if k + 1 < len(sessions) else start + timedelta(days=1)
        end = start + timedelta(minutes=25)
        if end >= nxt:
            continue
        a = Session(
            session_id=f"main-{start:%Y-%m-%d-%H%M}",
            raw_ids=[uuid4_from(rng)],
            start=start,
            end=end,
            blocked=0,
            scored=False,
            abandoned=True,
            gate_plan="none",
            waves=1,
            files_changed=0,
        )
        out.append(a)
    return out


def _build(
    root: Path,
    blocked: Sequence[int],
    *,
    seed: int,
    rescore: Sequence[int] = (),
    score: bool = True,
    rubric: str = "rubric-v1",
    rotate_after: int = 400,
    malformed: bool = True,
    start_day: datetime | None = None,
    preset: str | None = None,
) -> SimulatedLedger:
    rng = random.Random(seed)
    start_day = start_day or datetime(2026, 8, 23, tzinfo=UTC)
    sessions = _plan_sessions(rng, blocked, start_day)
    _decorate(rng, sessions)
    for i in rescore:
        sessions[i].rescore = True
    abandoned = _abandoned(rng, sessions)
    for a in abandoned:
        a.exclusive = (a.start, a.end)
    _exclusive_regions(sessions, abandoned)
    n_records = _run_timeline(
        rng,
        Path(root),
        sorted(sessions + abandoned, key=lambda s: s.start),
        _extras(rng, sessions),
        score=score,
        rubric=rubric,
        rotate_after=rotate_after,
        malformed=malformed,
    )
    return SimulatedLedger(
        metrics_dir=Path(root),
        session_ids=tuple(s.session_id for s in sessions),
        blocked={s.session_id: s.blocked for s in sessions},
        journal=(Path(root) / journal.JOURNAL_NAME) if score else None,
        records=n_records,
        seed=seed,
        preset=preset,
    )


def simulate_metrics_dir(
    out_dir: str | Path,
    *,
    n_sessions: int = 20,
    seed: int = 0,
    score: bool = True,
    rubric: str = "rubric-v1",
    mean_blocked: float = 3.0,
) -> SimulatedLedger:
    """Write a seeded synthetic metrics directory (and, with ``score``, its journal).

    Blocked counts per session are drawn from a geometric-like law with the given mean; the
    same seed writes the same bytes (apart from the journal's ``engine_commit``).
    """
    if not isinstance(n_sessions, int) or n_sessions < 2:
        raise EvalkitError(f"simulate: n_sessions must be an int >= 2, got {n_sessions!r}")
    if rubric not in ("rubric-v1", "rubric-v2"):
        raise EvalkitError(f"simulate: rubric must be 'rubric-v1' or 'rubric-v2', got {rubric!r}")
    rng = random.Random(seed ^ 0x5EED)
    p = 1.0 / (1.0 + max(0.0, float(mean_blocked)))
    blocked = []
    for _ in range(n_sessions):
        k = 0
        while rng.random() > p and k < 60:
            k += 1
        blocked.append(k)
    return _build(Path(out_dir), blocked, seed=seed, score=score, rubric=rubric)


def build_preset(
    out_dir: str | Path, name: str = PRESET_RUBRIC_V2, *, score: bool = True
) -> SimulatedLedger:
    """Build a named preset into ``out_dir`` (must not hold a ledger yet).

    ``rubric-v2-2026-09-19``: 38 sessions scored under rubric-v1 by evalkit itself right after
    each ends; two of them (one with 7 blocked commands, one with 2) are scored a second time
    41 minutes later, before the next rotation, on an unchanged ledger for their windows — so
    the re-score reproduces the count: 40 records, 38 sessions.
    """
    if name not in PRESETS:
        raise EvalkitError(f"simulate: unknown preset {name!r}; known: {', '.join(PRESETS)}")
    counts = _PRESET_ZERO + _PRESET_ONE + _PRESET_TWO + _PRESET_THREE_TO_FIVE + _PRESET_SIX_PLUS
    rng = random.Random(_PRESET_SEED)
    order = list(range(len(counts)))
    rng.shuffle(order)
    per_session = [counts[i] for i in order]
    twice_high = per_session.index(7)
    twice_low = per_session.index(2)
    return _build(
        Path(out_dir),
        per_session,
        seed=_PRESET_SEED,
        rescore=(twice_high, twice_low),
        score=score,
        rubric="rubric-v1",
        preset=name,
    )
