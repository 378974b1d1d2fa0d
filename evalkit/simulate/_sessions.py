"""One simulated session: its record, its events and the small formatting helpers (private)."""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

_RULES = (
    ("rm-rf", "rm -rf build/"),
    ("git-reset-hard", "git reset --hard HEAD~1"),
    ("git-push-force", "git push --force origin main"),
    ("git-clean", "git clean -fdx"),
    ("rm-rf", "rm -rf node_modules/.cache"),
)


@dataclass
class Session:
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


def iso(t: datetime) -> str:
    """JavaScript ``toISOString()`` form: milliseconds and ``Z``."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def stamp(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def uuid4_from(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# writing: session records and event lines


def session_record(rng: random.Random, s: Session) -> dict[str, Any]:
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
        "started_at": iso(s.start),
        "completed_at": iso(s.end),
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


def spread(rng: random.Random, lo: datetime, hi: datetime, k: int) -> list[datetime]:
    """K distinct whole-second instants strictly inside (lo, hi)."""
    span = int((hi - lo).total_seconds()) - 120
    picks = sorted(rng.sample(range(span), k)) if k else []
    return [lo + timedelta(seconds=60 + p) for p in picks]


def session_events(rng: random.Random, s: Session) -> list[tuple[datetime, dict[str, Any]]]:
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
        ev.append((s.start + dur * 0.1, gate("baseline", 0)))
        for w in range(1, s.waves):
            at = s.start + dur * (0.15 + 0.6 * w / s.waves)
            if s.gate_plan == "red-then-green" and w == 1:
                ev.append((at, gate("incremental", 1)))
                ev.append((at + timedelta(minutes=6), gate("incremental", 0)))
            else:
                ev.append((at, gate("incremental", 0)))
        last_exit = 1 if s.gate_plan == "last-red" else 0
        ev.append((s.end - dur * 0.06, gate("full-gate", last_exit)))
    # guard events carry the raw harness id; placed in the exclusive part of the window
    assert s.exclusive is not None
    lo, hi = s.exclusive
    side = s.blocked + s.warned + s.loop_warnings
    stamps = spread(rng, lo, hi, side)
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
    for t in spread(rng, s.start, s.end, rng.randint(2, 6)):
        ev.append((t, {"event": "subagent_stop", "agent": "unknown"}))
    return ev


def gate(variant: str, exit_code: int) -> dict[str, Any]:
    kind = "passed" if exit_code == 0 else "failed"
    return {
        "event": f"orchestrator.quality_gate.{kind}",
        "variant": variant,
        "exit_code": exit_code,
    }
