"""Seeded, realistic default data: metrics directories and rater labels.

Nothing here is real data. The generator writes the ledger *shapes* the orchestrator writes
(see ``docs/DATA_CARD.md``): sessions with peers and back-to-back windows, rotated events under
``_archive/events-<first>_<last>.jsonl``, quality gates (red-then-green, full-gates), guard events
carrying raw harness uuids tied to the semantic session id by a dual stamp, drifted field names
and a few malformed lines. The build is a small discrete-event simulation: lines are written in
time order, each session is scored by evalkit itself right after it ends (the journal is written
by ``evalkit.score_session`` + ``evalkit.journal.append``), and ``events.jsonl`` is rotated into
``_archive/`` between sessions, as the orchestrator does.

The preset ``rubric-v2-2026-09-19`` reproduces the measurement rubric-v2 reports in
"Änderungen gegenüber v1": 38 sessions, 40 rubric-v1 records, the blocked-count distribution
0->8, 1->3, 2->5, 3-5->14, 6+->10 (maximum 58, a gap between 13 and 33), spiral 0 everywhere.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:  # pandas only where tables are the natural output
    import pandas as pd

__all__ = [
    "PRESETS",
    "PRESET_RUBRIC_V2",
    "SimulatedLedger",
    "build_preset",
    "simulate_labels",
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
_RULES = (
    ("rm-rf", "rm -rf build/"),
    ("git-reset-hard", "git reset --hard HEAD~1"),
    ("git-push-force", "git push --force origin main"),
    ("git-clean", "git clean -fdx"),
    ("rm-rf", "rm -rf node_modules/.cache"),
)


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


@dataclass
class _Session:
    session_id: str
    raw_ids: list[str]
    start: datetime
    end: datetime
    blocked: int
    scored: bool = True
    abandoned: bool = False
    dual_stamp: bool = True
    drifted: bool = False
    housekeeping: bool = False
    gate_plan: str = "green"  # green | red-then-green | last-red | none
    files_changed: int = 5
    waves: int = 3
    warned: int = 0
    loop_warnings: int = 0
    completion_rate: float | None = 1.0
    planned: int = 3
    rescore: bool = False
    exclusive: tuple[datetime, datetime] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _iso(t: datetime) -> str:
    """JavaScript ``toISOString()`` form: milliseconds and ``Z``."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _stamp(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# planning: when sessions run, how they overlap, what they did


def _plan_sessions(
    rng: random.Random, blocked: Sequence[int], start_day: datetime
) -> list[_Session]:
    """Lay sessions out in time: mostly apart, some back-to-back, some overlapping a peer.

    Guard events are later placed in each session's *exclusive* part of its window (covered by
    no other session), so the v1 time-window count equals the session's own count by design.
    """
    sessions: list[_Session] = []
    t = start_day.replace(hour=8, minute=0, second=0, microsecond=0)
    prev: _Session | None = None
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
        sess = _Session(
            session_id=sid,
            raw_ids=[_uuid(rng)],
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


def _decorate(rng: random.Random, sessions: list[_Session]) -> None:
    """Give sessions their gate plans, drift, guard side-signals and KPIs."""
    n = len(sessions)
    for i, s in enumerate(sessions):
        s.drifted = i < max(1, n // 8)  # the oldest records use older field names
        s.dual_stamp = rng.random() > 0.12
        if rng.random() < 0.1:
            s.raw_ids.append(_uuid(rng))  # harness id rotated mid-session
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


def _exclusive_regions(sessions: list[_Session], others: list[_Session]) -> None:
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
# writing: session records and event lines


def _session_record(rng: random.Random, s: _Session) -> dict[str, Any]:
    waves: list[dict[str, Any]] = []
    if s.housekeeping:
        waves = [{"wave": 1, "role": "Housekeeping", "agent_count": 0, "coordinator_direct": True}]
    else:
        roles = ["Discovery", "Impl-Core", "Impl-Polish", "Quality", "Finalization", "Docs"]
        for w in range(s.waves):
            wave: dict[str, Any] = {"wave": w + 1, "role": roles[w % len(roles)]}
            agents = rng.randint(1, 4)
            if s.drifted:
                wave["agents"] = agents  # older name for agent_count
            else:
                wave["agent_count"] = agents
                wave["files_changed"] = s.files_changed if w == 1 else 0
            waves.append(wave)
    total_agents = sum(w.get("agent_count", w.get("agents", 0)) for w in waves)
    rec: dict[str, Any] = {
        "schema_version": 1,
        "session_id": s.session_id,
        "session_type": "housekeeping" if s.housekeeping else rng.choice(["feature", "deep"]),
        "platform": "claude",
        "branch": "main",
        "started_at": _iso(s.start),
        "completed_at": _iso(s.end),
    }
    if rng.random() < 0.5:
        rec["status"] = "completed"  # sparse legacy field: absent is not abandoned
    rec["total_waves"] = 0 if s.housekeeping else s.waves
    rec["total_agents"] = total_agents
    rec["total_files_changed"] = s.files_changed
    rec["waves"] = waves
    rec["agent_summary"] = {"complete": total_agents, "partial": 0, "failed": 0, "spiral": 0}
    if s.drifted:
        # drift: minutes instead of seconds, an issue list instead of counts; no effectiveness
        rec["duration_minutes"] = int((s.end - s.start).total_seconds() // 60)
        rec["issues_planned"] = [1000 + rng.randint(0, 400) for _ in range(s.planned)]
    else:
        if s.completion_rate is not None:
            carry = s.planned - round(s.completion_rate * s.planned)
            rec["effectiveness"] = {
                "planned_issues": s.planned,
                "completed": s.planned - carry,
                "carryover": carry,
                "completion_rate": s.completion_rate,
                "carryover_ratio": round(carry / s.planned, 4),
            }
        elif s.planned == 0:
            rec["effectiveness"] = {"planned_issues": 0, "completed": 0, "carryover": 0}
        if rng.random() < 0.4:
            rec["duration_seconds"] = int((s.end - s.start).total_seconds())
        rec["total_token_input"] = rng.randint(40_000, 900_000)
        rec["total_token_output"] = rng.randint(80_000, 2_000_000)
    return rec


def _spread(rng: random.Random, lo: datetime, hi: datetime, k: int) -> list[datetime]:
    """k distinct whole-second instants strictly inside (lo, hi)."""
    span = int((hi - lo).total_seconds()) - 120
    picks = sorted(rng.sample(range(span), k)) if k else []
    return [lo + timedelta(seconds=60 + p) for p in picks]


def _session_events(rng: random.Random, s: _Session) -> list[tuple[datetime, dict[str, Any]]]:
    ev: list[tuple[datetime, dict[str, Any]]] = []
    raw = s.raw_ids[0]
    ev.append((s.start, {"event": "orchestrator.session.started", "session_id": raw}))
    if s.dual_stamp:
        for k, rid in enumerate(s.raw_ids):
            t = s.start + timedelta(minutes=1 + 20 * k)
            ev.append(
                (
                    t,
                    {
                        "event": "orchestrator.session.lock.acquired",
                        "session_id": rid,
                        "semantic_session_id": s.session_id,
                    },
                )
            )
    # quality gates: carry no session id, attributed by window
    dur = s.end - s.start
    if s.gate_plan != "none":
        ev.append((s.start + dur * 0.1, _gate("baseline", 0)))
        for w in range(1, s.waves):
            at = s.start + dur * (0.15 + 0.6 * w / s.waves)
            if s.gate_plan == "red-then-green" and w == 1:
                ev.append((at, _gate("incremental", 1)))
                ev.append((at + timedelta(minutes=6), _gate("incremental", 0)))
            else:
                ev.append((at, _gate("incremental", 0)))
        last_exit = 1 if s.gate_plan == "last-red" else 0
        ev.append((s.end - dur * 0.06, _gate("full-gate", last_exit)))
    # guard events carry the raw harness id; placed in the exclusive part of the window
    assert s.exclusive is not None
    lo, hi = s.exclusive
    side = s.blocked + s.warned + s.loop_warnings
    stamps = _spread(rng, lo, hi, side)
    for j, t in enumerate(stamps):
        rid = s.raw_ids[-1] if (len(s.raw_ids) > 1 and j % 2) else raw
        if j < s.blocked:
            rule, cmd = rng.choice(_RULES)
            body: dict[str, Any] = {
                "event": "orchestrator.destructive_guard.blocked",
                "session_id": rid,
            }
            body.update({"rule": rule, "command": cmd})
        elif j < s.blocked + s.warned:
            body = {"event": "orchestrator.destructive_guard.warned", "session_id": rid}
            body.update({"rule": "git-checkout-dot", "command": "git checkout ."})
        else:
            body = {"event": "orchestrator.loop.warning", "session_id": rid, "repeats": 3}
        ev.append((t, body))
    # subagent noise
    for t in _spread(rng, s.start, s.end, rng.randint(2, 6)):
        ev.append((t, {"event": "subagent_stop", "agent": "unknown"}))
    return ev


def _gate(variant: str, exit_code: int) -> dict[str, Any]:
    kind = "passed" if exit_code == 0 else "failed"
    return {
        "event": f"orchestrator.quality_gate.{kind}",
        "variant": variant,
        "exit_code": exit_code,
    }


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
        line = _dumps({"timestamp": _iso(t), **body})
        with self.events.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        self.lines_in_active += 1
        self.first_ts = self.first_ts or t
        self.last_ts = t

    def raw_line(self, name: str, text: str) -> None:
        with (self.root / name).open("a", encoding="utf-8") as fh:
            fh.write(text + "\n")

    def session(self, rec: dict[str, Any]) -> None:
        self.raw_line("sessions.jsonl", _dumps(rec))

    def maybe_rotate(self, now: datetime) -> None:
        if self.lines_in_active < self.rotate_after or self.first_ts is None:
            return
        assert self.last_ts is not None
        archive = self.root / "_archive"
        archive.mkdir(exist_ok=True)
        name = f"events-{_stamp(self.first_ts)}_{_stamp(self.last_ts)}.jsonl"
        self.events.rename(archive / name)
        self.lines_in_active, self.first_ts = 0, None
        self.event(now, {"event": "orchestrator.events.rotated", "archived_as": f"_archive/{name}"})

    def evaluate(self, s: _Session, at: datetime) -> None:
        if not self.score:
            return
        import evalkit
        from evalkit import journal

        record = evalkit.score_session(
            self.root,
            s.session_id,
            rubric=self.rubric,
            timestamp=_iso(at),
            model_id=_MODEL_ID,
            model_source="self-report",
        )
        journal.append(self.root / "eval.jsonl", record.to_dict())
        self.records += 1


def _run_timeline(
    rng: random.Random,
    root: Path,
    sessions: list[_Session],
    extras: list[dict[str, Any]],
    *,
    score: bool,
    rubric: str,
    rotate_after: int,
    malformed: bool,
) -> int:
    root.mkdir(parents=True, exist_ok=True)
    for name in ("sessions.jsonl", "events.jsonl", "eval.jsonl"):
        if (root / name).exists():
            raise EvalkitError(f"simulate: {root / name} already exists; choose an empty directory")
    w = _Writer(root=root, rotate_after=rotate_after, score=score, rubric=rubric)
    # (time, order, kind, payload): order keeps a stable sequence for equal times
    timeline: list[tuple[datetime, int, str, Any]] = []
    seq = 0
    written: dict[str, dict[str, Any]] = {}
    for s in sessions:
        for t, body in _session_events(rng, s):
            timeline.append((t, seq, "event", body))
            seq += 1
        rec = _session_record(rng, s)
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
        w.raw_line("events.jsonl", _dumps({"timestamp": local, "event": "subagent_stop"}))
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


def _extras(rng: random.Random, sessions: list[_Session]) -> list[dict[str, Any]]:
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
            "started_at": _iso(s.start),
        }
    )
    return out


def _abandoned(rng: random.Random, sessions: list[_Session]) -> list[_Session]:
    """Abandoned sessions in the gaps between days: peers of nobody's guard events."""
    out = []
    for k in (len(sessions) // 4, (3 * len(sessions)) // 4):
        s = sessions[k]
        start = s.end + timedelta(hours=6)
        nxt = sessions[k + 1].start if k + 1 < len(sessions) else start + timedelta(days=1)
        end = start + timedelta(minutes=25)
        if end >= nxt:
            continue
        a = _Session(
            session_id=f"main-{start:%Y-%m-%d-%H%M}",
            raw_ids=[_uuid(rng)],
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
        journal=(Path(root) / "eval.jsonl") if score else None,
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


# --------------------------------------------------------------------------------------------
# rater labels


@dataclass(frozen=True)
class _TargetSpec:
    categories: tuple[str, ...]
    prevalence: tuple[float, ...]
    accuracy: float  # probability a rater reports the latent label


# The default targets: a moderately ambiguous three-way status, a variance-free one (every rater
# says pass on every item, as report-quality did), a skewed binary one (the kappa paradox:
# high raw agreement, low kappa) and a balanced binary one.
DEFAULT_TARGETS: dict[str, _TargetSpec] = {
    "ia_status": _TargetSpec(("pass", "fail", "cannot-determine"), (0.55, 0.2, 0.25), 0.62),
    "rq_status": _TargetSpec(("pass",), (1.0,), 1.0),
    "changes_verified": _TargetSpec(("yes", "no"), (0.94, 0.06), 0.93),
    "scope_kept": _TargetSpec(("yes", "no"), (0.5, 0.5), 0.88),
}
DEFAULT_FAMILIES: tuple[str, ...] = ("human", "model-a", "model-b")


def simulate_labels(
    n_items: int = 40,
    *,
    targets: Sequence[str] | None = None,
    families: Sequence[str] = DEFAULT_FAMILIES,
    raters_per_family: int = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """Rater labels over a latent true label, as a long table.

    Columns: ``item_id, target, family, rater, label`` (plus ``truth``, the latent label, kept
    for checks; an agreement study must not read it). Each rater has its own confusion matrix:
    with probability ``accuracy`` (shifted per rater by up to +-0.08) it reports the latent
    label, otherwise a label drawn from its own bias vector over the other categories.
    """
    import pandas as pd

    names = list(targets) if targets is not None else list(DEFAULT_TARGETS)
    unknown = [t for t in names if t not in DEFAULT_TARGETS]
    if unknown:
        raise EvalkitError(
            f"simulate_labels: unknown target(s) {unknown}; known: {', '.join(DEFAULT_TARGETS)}"
        )
    if not isinstance(n_items, int) or n_items < 2:
        raise EvalkitError(f"simulate_labels: n_items must be an int >= 2, got {n_items!r}")
    if raters_per_family < 1 or not families:
        raise EvalkitError("simulate_labels: need at least one family and one rater per family")
    rng = random.Random(seed)
    raters = [(f, f"{f}-{k + 1}") for f in families for k in range(raters_per_family)]
    rows = []
    for target in names:
        spec = DEFAULT_TARGETS[target]
        skill = {r: min(1.0, max(0.0, spec.accuracy + rng.uniform(-0.08, 0.08))) for _, r in raters}
        if len(spec.categories) == 1:
            skill = dict.fromkeys(skill, 1.0)
        bias = {r: [rng.random() + 0.1 for _ in spec.categories] for _, r in raters}
        for i in range(n_items):
            truth = rng.choices(spec.categories, weights=spec.prevalence)[0]
            for fam, r in raters:
                if rng.random() < skill[r]:
                    label = truth
                else:
                    others = [c for c in spec.categories if c != truth]
                    weights = [bias[r][spec.categories.index(c)] for c in others]
                    label = rng.choices(others, weights=weights)[0]
                rows.append(
                    {
                        "item_id": f"item-{i + 1:03d}",
                        "target": target,
                        "family": fam,
                        "rater": r,
                        "label": label,
                        "truth": truth,
                    }
                )
    return pd.DataFrame(rows, columns=["item_id", "target", "family", "rater", "label", "truth"])
