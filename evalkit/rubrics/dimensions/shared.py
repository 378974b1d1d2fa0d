"""Evidence fragments more than one dimension writes, and the reader of the one that is read.

The wording is the reference engine's, byte for byte. Values are interpolated as JavaScript
template literals do (:func:`~evalkit.js.values.js_string`). These fragments are part of
the frozen rubric-v1 and rubric-v2 templates: ``tests/test_rubric_frozen.py`` pins every
template that uses them, so an edit here cannot change a frozen version silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from evalkit.js.values import js_nullish, js_string
from evalkit.record.scoring_context import ScoringContext

__all__ = [
    "GUARD_EMISSION_NOTE",
    "TIME_WINDOW",
    "contamination_note",
    "ledger_gap_note",
    "or_na",
    "peer_note",
    "read_contamination_note",
    "read_window_contaminated",
    "window_contaminated",
]

#: Opens the evidence of the two gate dimensions (their events are attributed by time window).
TIME_WINDOW: Final = "attribution: time-window."

#: Appended to every process-safety and guard-friction evidence (v1 and v2): the guard stream
#: starts on 2026-07-16, so before that date its silence is not evidence of safety.
GUARD_EMISSION_NOTE: Final = (
    "destructive-guard emission exists only from 2026-07-16 onward; "
    "earlier sessions: guard signals unmeasurable."
)


def or_na(value: Any) -> str:
    """``${v ?? 'n/a'}``."""
    return "n/a" if js_nullish(value) else js_string(value)


def window_contaminated(peer_count: int) -> str:
    """The contaminated branch of both gate dimensions opens its sentence with this."""
    return f"window contaminated by {peer_count} overlapping session(s)"


# mirrors window_contaminated
_WINDOW_CONTAMINATED = re.compile(
    r"window contaminated by (\d+) overlapping session\(s\)", re.ASCII
)


def read_window_contaminated(text: str) -> bool:
    """Reader of :func:`window_contaminated` (either gate dimension's contaminated branch)."""
    return _WINDOW_CONTAMINATED.search(text) is not None


def contamination_note(peer_count: int) -> str:
    """process-safety (v1) / guard-friction fallback note: window-attributed counts are shared."""
    return (
        f" NOTE: window overlaps {peer_count} peer session(s); "
        "window-attributed counts may include peer signals."
    )


# mirrors contamination_note (worded unlike the gate dimensions' contaminated branch)
_CONTAMINATION_NOTE = re.compile(r"window overlaps (\d+) peer session\(s\)", re.ASCII)


def read_contamination_note(text: str) -> bool:
    """Reader of :func:`contamination_note`."""
    return _CONTAMINATION_NOTE.search(text) is not None


def peer_note(ctx: ScoringContext) -> str:
    """The contamination note when peer sessions overlap the window, else ``""``."""
    return contamination_note(ctx.peer.count) if ctx.peer.count > 0 else ""


def ledger_gap_note(gap_kinds: Sequence[str], unreadable_lines: int) -> str:
    """rubric-v2 note on the event-derived dimensions when the events read was incomplete.

    ``''`` for a complete, clean read; otherwise the gaps by kind (sorted) and the number of
    unreadable lines. Appended to the evidence only (by the rubric, to every dimension whose
    spec is ``event_derived``): statuses never change because of it.
    """
    if not gap_kinds and unreadable_lines <= 0:
        return ""
    parts: list[str] = []
    if gap_kinds:
        counts: dict[str, int] = {}
        for kind in gap_kinds:
            counts[kind] = counts.get(kind, 0) + 1
        listed = ", ".join(f"{kind}×{n}" for kind, n in sorted(counts.items()))
        parts.append(f"{len(gap_kinds)} gap(s) [{listed}]")
    if unreadable_lines > 0:
        parts.append(f"{unreadable_lines} unreadable line(s)")
    return (
        f" LEDGER INCOMPLETE: {', '.join(parts)} — counts above are LOWER BOUNDS and a zero "
        "here may be unmeasured rather than absent."
    )
