"""Why a ledger gives no session to score, from ``sessions.jsonl`` as it was read.

The ledger reading knows it (the file's state, each line's value), so it says it:
:func:`no_session` returns a :class:`NoSession` (the file's path and state, then every line
that gave no session, as ``file:line: reason`` or ``file:line: session_id: reason``) or None
(:func:`why_none_scored`, for a reading that scored nothing, always one), and
:func:`blank_id_lines` names where the ids ``score_ledger`` skipped (only whitespace) are.
The engine attaches them to what it returns (``score_ledger``'s ``attrs``, a batch's
``no_session``); the command line and the fleet only format them, never read the file again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.files.input import clip, dumps
from evalkit.js.values import is_non_empty_trimmed
from evalkit.ledger.reader import JsonlFile

__all__ = [
    "PROBLEMS_SHOWN",
    "NoSession",
    "blank_id_lines",
    "describe_sessions",
    "no_session",
    "session_problems",
    "why_none_scored",
]

#: Lines of ``sessions.jsonl`` a no-session message names (the rest are counted).
PROBLEMS_SHOWN = 3


@dataclass(frozen=True)
class NoSession:
    """Why a ledger gives no session to score: the sessions file's state, its lines at fault.

    ``state``: the file's path and state (:func:`describe_sessions`); ``problems``: every line
    that gave no session, ``file:line: reason``, in line order.
    """

    state: str
    problems: tuple[str, ...] = ()

    def message(self, also: str = "") -> str:
        """One line: the state, ``also`` (what the caller adds), the first problems."""
        text = f"no session to score: {self.state}"
        if also:
            text += f"; {also}"
        if self.problems:
            text += "; " + "; ".join(self.problems[:PROBLEMS_SHOWN])
        if len(self.problems) > PROBLEMS_SHOWN:
            text += f"; and {len(self.problems) - PROBLEMS_SHOWN} more line(s)"
        return text

    def __str__(self) -> str:
        """:meth:`message` with nothing added."""
        return self.message()

    def to_dict(self) -> dict[str, Any]:
        """As JSON-simple values (a table's ``attrs`` travel into parquet metadata as JSON)."""
        return {"state": self.state, "problems": list(self.problems)}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> NoSession:
        """The inverse of :meth:`to_dict`."""
        return cls(str(value["state"]), tuple(value.get("problems") or ()))


def describe_sessions(sessions: JsonlFile) -> str:
    """What the sessions file is: its path and state (no such file, unreadable, empty, counts)."""
    where = f"sessions.jsonl {sessions.path!r}"
    if sessions.state == "absent":
        return f"{where}: no such file"
    if sessions.state == "unreadable":
        return f"{where}: {sessions.error}"
    if sessions.state == "empty":
        return f"{where}: empty (no non-blank line)"
    bad = len(sessions.malformed_lines)
    return (
        f"{where}: {len(sessions.lines)} non-blank line(s), {len(sessions.objects)} JSON "
        f"object(s), {bad} malformed"
    )


def _session_id_problem(value: Mapping[str, Any]) -> str | None:
    """Why a parsed ``sessions.jsonl`` object gives no session to score (None: it may)."""
    if "session_id" not in value:
        return "session_id: missing"
    sid = value["session_id"]
    if not isinstance(sid, str):
        return f"session_id: not a string (got {_json_text(sid)})"
    if not is_non_empty_trimmed(sid):
        return f"session_id: empty or only whitespace (got {_json_text(sid)})"
    return None


def _json_text(value: Any) -> str:
    """A parsed JSON value as JSON text, cut short: how a message quotes a ledger's value."""
    return clip(dumps(value, allow_nan=True), 80)  # 1e999 parses to inf: say Infinity


def session_problems(sessions: JsonlFile) -> tuple[str, ...]:
    """Every line of the sessions file that gives no session, ``file:line: reason``, in order.

    The reader's diagnostics (a line that does not parse, a value that is not an object),
    then each object whose ``session_id`` is missing, not a string or only whitespace.
    """
    found = [(d.line or 0, str(d)) for d in sessions.diagnostics]
    for line in sessions.lines:
        if line.error is None and isinstance(line.value, dict):
            problem = _session_id_problem(line.value)
            if problem is not None:
                found.append((line.line_no, f"{sessions.path}:{line.line_no}: {problem}"))
    return tuple(text for _, text in sorted(found, key=lambda item: item[0]))


def no_session(sessions: JsonlFile) -> NoSession | None:
    """Why the sessions file gives no session to score; None when a line gives one."""
    if any(
        line.error is None
        and isinstance(line.value, dict)
        and _session_id_problem(line.value) is None
        for line in sessions.lines
    ):
        return None
    return NoSession(describe_sessions(sessions), session_problems(sessions))


def why_none_scored(sessions: JsonlFile) -> NoSession:
    """Why a reading that scored no session scored none (:func:`no_session`, else the state)."""
    return no_session(sessions) or NoSession(describe_sessions(sessions))


def blank_id_lines(sessions: JsonlFile, skipped: Iterable[str]) -> tuple[str, ...]:
    """Where the skipped ids (only whitespace) are: ``file:line: session_id: ...: not scored``."""
    wanted = set(skipped)
    return tuple(
        f"{sessions.path}:{line.line_no}: session_id: only whitespace "
        f"({_json_text(line.value['session_id'])}): not scored"
        for line in sessions.lines
        if line.error is None
        and isinstance(line.value, dict)
        and line.value.get("session_id") in wanted
    )
