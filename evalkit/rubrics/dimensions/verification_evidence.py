"""``verification-evidence``: did the quality gates in the session's window run and pass?

Source: ``quality_gate`` events attributed by time window, and ``total_files_changed``.

Versions. rubric-v1 defined the formula (:func:`score_v1`); rubric-v2 adopts it word for word
("Nicht geändert"), so both version tables list :data:`V1`. How v1 stays frozen: a rubric that
changes this dimension adds ``score_v3``/``V3`` (and its own templates) beside these and lists
``V3`` in its own table; it never edits :func:`score_v1` or the templates below, which
``tests/test_rubric_frozen.py`` pins byte for byte (and the conformance vectors pin every v1
and v2 record).

Judge facts: ``gate_runs_total``, ``gate_runs_failed``, ``changes_unverified``. Its numbers come
from ``events.jsonl``: under the third state (the file absent or empty) they are ``None`` and
no parse miss is recorded for them, and a "0 quality_gate events ... with files changed" string
is recorded as a contradiction (rubric-v2 § "The third state").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from evalkit.js.values import get, is_number
from evalkit.record.dimension import Dimension, DimensionId, Method, Status
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import (
    NO_TEMPLATE,
    Misses,
    Number,
    NumberToken,
    Reading,
    RecordView,
    first_number,
    read_token,
)
from evalkit.rubrics.dimensions.shared import (
    TIME_WINDOW,
    or_na,
    read_window_contaminated,
    window_contaminated,
)
from evalkit.rubrics.dimensions.spec import DimensionSpec, FactsReader

__all__ = [
    "FACTS",
    "ID",
    "TEMPLATES",
    "V1",
    "contaminated",
    "gates_green",
    "gates_red",
    "no_change",
    "read_all_green",
    "read_contaminated",
    "read_facts",
    "read_failed_count",
    "read_gate_runs",
    "read_no_change",
    "read_unavailable",
    "read_zero_gates",
    "score_v1",
    "unavailable",
]

ID: Final = DimensionId.VERIFICATION_EVIDENCE
_DET = Method.DETERMINISTIC
_A = re.ASCII

# -- evidence templates ------------------------------------------------------------------------


def contaminated(peer_count: int, peers: Sequence[str]) -> str:
    """Evidence: peers overlap the window, so gate events are unattributable."""
    return (
        f"{TIME_WINDOW} {window_contaminated(peer_count)} [{', '.join(peers)}] — quality_gate "
        "events (which carry no session_id) cannot be attributed to this session."
    )


def no_change() -> str:
    """Evidence: no gate event and no file changed (nothing to verify)."""
    return (
        f"{TIME_WINDOW} 0 quality_gate events in window and total_files_changed=0 — "
        "no code change to verify."
    )


def unavailable(files_changed: Any) -> str:
    """Evidence: no gate event, but files changed or their count is unknown."""
    return (
        f"{TIME_WINDOW} 0 quality_gate events in window but "
        f"total_files_changed={or_na(files_changed)} — verification evidence unavailable."
    )


def gates_green(gates: int) -> str:
    """Evidence: every gate event in the window exited 0."""
    return f"{TIME_WINDOW} {gates} quality_gate event(s) in window, all exit_code=0."


def gates_red(gates: int, failing: int) -> str:
    """Evidence: some gate events in the window exited non-zero."""
    return (
        f"{TIME_WINDOW} {gates} quality_gate event(s) in window; {failing} with non-zero exit_code."
    )


TEMPLATES = (contaminated, no_change, unavailable, gates_green, gates_red)

# -- readers, one per template token -----------------------------------------------------------

# gates_green and gates_red: "N quality_gate event(s) in window"
_GATE_RUNS = re.compile(r"(?<![0-9])(\d+) quality_gate event\(s\) in window", _A)
# gates_green: "..., all exit_code=0."
_ALL_GREEN = re.compile(r"quality_gate event\(s\) in window, all exit_code=0", _A)
# gates_red: "...; N with non-zero exit_code."
_FAILED = re.compile(r"(?<![0-9])(\d+) with non-zero exit_code", _A)
# no_change: "0 quality_gate events in window and total_files_changed=0"
_NO_CHANGE = re.compile(r"0 quality_gate events in window and total_files_changed=0", _A)
# unavailable: "0 quality_gate events in window but total_files_changed=N|n/a"
_UNAVAILABLE = re.compile(r"0 quality_gate events in window but total_files_changed=(\d+|n/a)", _A)
# no_change and unavailable both open with "0 quality_gate events in window"
_ZERO_GATES = re.compile(r"\b0 quality_gate events in window", _A)


def read_contaminated(text: str) -> bool:
    """Reader of :func:`contaminated`."""
    return read_window_contaminated(text)


def read_gate_runs(text: str) -> Number | None:
    """Reader of :func:`gates_green` / :func:`gates_red`: the gate count, ``None`` if absent."""
    return first_number(_GATE_RUNS, text)


def read_all_green(text: str) -> bool:
    """Reader of :func:`gates_green`."""
    return _ALL_GREEN.search(text) is not None


def read_failed_count(text: str) -> Number | None:
    """Reader of :func:`gates_red`: how many gates exited non-zero."""
    return first_number(_FAILED, text)


def read_no_change(text: str) -> bool:
    """Reader of :func:`no_change`."""
    return _NO_CHANGE.search(text) is not None


def read_unavailable(text: str) -> NumberToken | None:
    """Reader of :func:`unavailable`: ``total_files_changed``.

    ``NumberToken(None)`` for ``n/a`` (the record held no file count); ``None`` when the
    branch is absent.
    """
    return read_token(_UNAVAILABLE, text, "n/a")


def read_zero_gates(text: str) -> bool:
    """Reader of the two 0-gate branches (:func:`no_change`, :func:`unavailable`)."""
    return _ZERO_GATES.search(text) is not None


# -- scorer --------------------------------------------------------------------------------------


def score_v1(ctx: ScoringContext) -> Dimension:
    """rubric-v1 (and v2): the rubric's table top to bottom; the first row that applies decides."""
    if ctx.peer.count > 0:
        text = contaminated(ctx.peer.count, ctx.peer.peers)
        return Dimension(ID, _DET, Status.CANNOT_DETERMINE, text)
    gates = ctx.quality_gates
    if gates.count == 0:
        files = get(ctx.record, "total_files_changed")
        files_changed = files if is_number(files) else None
        if files_changed is not None and files_changed == 0:
            return Dimension(ID, _DET, Status.NOT_APPLICABLE, no_change())
        return Dimension(ID, _DET, Status.CANNOT_DETERMINE, unavailable(files_changed))
    if gates.failing == 0:
        return Dimension(ID, _DET, Status.PASS, gates_green(gates.count))
    return Dimension(ID, _DET, Status.FAIL, gates_red(gates.count, gates.failing))


# -- judge facts ---------------------------------------------------------------------------------

#: rubric-v2 decision rule 1, its SOURCE case: the zero is the absence of a file.
EVENTS_ABSENT_CONTRADICTION: Final = (
    'verification-evidence reports "0 quality_gate events in window" with files changed, '
    "but process-safety/guard-friction report events.jsonl absent or empty — "
    "the count is unmeasured, not zero"
)


def _facts(total: Number | None, failed: Number | None, unverified: bool | None) -> dict[str, Any]:
    return {"gate_runs_total": total, "gate_runs_failed": failed, "changes_unverified": unverified}


def read_facts(view: RecordView) -> Reading:
    """The gate counts and ``changes_unverified`` this dimension's evidence carries."""
    text = view.evidence(ID)
    if text is None:
        return Reading()
    if read_contaminated(text):
        return Reading(contaminated=True)  # unattributable by construction: no number, no miss
    misses = Misses(ID)
    facts = _facts(None, None, None)
    nothing_changed = zero_with_files = False
    if (runs := read_gate_runs(text)) is not None:
        failed = 0 if read_all_green(text) else read_failed_count(text)
        facts = _facts(runs, failed, False)
        misses.required(
            failed, "gate_runs_failed", "the ≥1-gate branch matched but carried no failure count"
        )
    elif read_no_change(text):
        facts, nothing_changed = _facts(0, 0, False), True
    elif (files := read_unavailable(text)) is not None:
        # n/a: the record held no file count -> unknown, not False.
        facts = _facts(0, None, None if files.value is None else files.value != 0)
        zero_with_files = True
    else:
        misses.add("gate_runs_total", NO_TEMPLATE)
    if view.events_unreadable:
        # The third state: every number came from a file that was never readable. Nothing
        # changed is still nothing to verify; a zero with files changed contradicts the source.
        third = (EVENTS_ABSENT_CONTRADICTION,) if zero_with_files else ()
        unverified = False if nothing_changed else None
        return Reading(_facts(None, None, unverified), (), third, contaminated=False)
    return Reading(facts, tuple(misses.items), contaminated=False)


FACTS = FactsReader(ID, ("gate_runs_total", "gate_runs_failed", "changes_unverified"), read_facts)

#: verification-evidence as rubric-v1 scores it (rubric-v2 adopts it verbatim).
V1 = DimensionSpec(ID, score_v1, TEMPLATES, FACTS, event_derived=True)
