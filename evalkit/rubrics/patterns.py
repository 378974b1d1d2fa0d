"""Evidence readers: one per evidence template of ``evalkit.rubrics.evidence``.

The judge facts (rubric-v2 § "Judge Dimensions", "Facts are pre-computed, not inferred") are
parsed out of the deterministic dimensions' evidence strings. The readers sit beside the
templates that write them, so a reworded template and its reader are one edit: each reader
below names, in a comment, the template (the scorer branch) it mirrors.

Every pattern is anchored on a TOKEN (``agent_summary.spiral=``, ``all exit_code=0``), not on
whole-sentence wording. A cosmetic prose edit leaves the reader working, while a real shape
change (a dropped number, a renamed field) makes it miss, and the facts reader then records a
``parse_miss`` instead of a silent ``None``.

Numbers are read as JavaScript's ``Number()`` reads them (the reference engine is JavaScript):
digits only (``re.ASCII`` keeps ``\\d`` from matching non-ASCII digits), an integral value is an
``int``, a value past double range is ``inf``.

A pattern that opens with a number carries ``(?<![0-9])``: it only lets a match start at the
first digit of a run, which finds the same leftmost match (a run that fails from its first
digit fails from every later one, the text after it being the same) but keeps a hostile
megabyte of digits linear instead of quadratic.

Legacy rubric-v1 readers: v1 wrote the guard count into ``process-safety``
(``destructive_guard.blocked=N`` on its fail branch) and the spiral count as prose on its pass
branches (``(0 blocked, 0 spiral, 0 loop.warning)`` / ``0 destructive_guard.blocked, 0 spiral;``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from evalkit.jsnum import format_js_number

Number = int | float

_A = re.ASCII


def js_number(digits: str) -> Number:
    """Read a matched numeric token as JavaScript ``Number(token)`` does.

    The tokens the patterns capture are ``[0-9]+``, ``-?[0-9]+`` or ``[0-9]+(.[0-9]+)?``, so
    ``float`` parses every one of them. An integral value below 1e21 becomes the ``int`` that
    ``JSON.stringify`` prints for it (past 2**53 that is the double's shortest digits padded
    with zeros: ``123456789012345680000``, not ``123456789012345683968``); a larger one stays
    a float, and past double range it is ``inf`` (JavaScript's ``Infinity``).
    """
    value = float(digits)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(format_js_number(value))
    return value


def _first_number(pattern: re.Pattern[str], text: str) -> Number | None:
    match = pattern.search(text)
    return js_number(match.group(1)) if match else None


# --------------------------------------------------------------------------------------------
# verification-evidence
# --------------------------------------------------------------------------------------------

# mirrors evidence.verification_contaminated: "window contaminated by N overlapping session(s) [...]"
VE_WINDOW_CONTAMINATED = re.compile(r"window contaminated by (\d+) overlapping session\(s\)", _A)
# mirrors evidence.verification_gates_green and evidence.verification_gates_red:
# "N quality_gate event(s) in window"
VE_GATE_RUNS_TOTAL = re.compile(r"(?<![0-9])(\d+) quality_gate event\(s\) in window", _A)
# mirrors evidence.verification_gates_green: "..., all exit_code=0."
VE_GATE_ALL_GREEN = re.compile(r"quality_gate event\(s\) in window, all exit_code=0", _A)
# mirrors evidence.verification_gates_red: "...; N with non-zero exit_code."
VE_GATE_RUNS_FAILED = re.compile(r"(?<![0-9])(\d+) with non-zero exit_code", _A)
# mirrors evidence.verification_no_change:
# "0 quality_gate events in window and total_files_changed=0"
VE_NO_CHANGE_TO_VERIFY = re.compile(
    r"0 quality_gate events in window and total_files_changed=0", _A
)
# mirrors evidence.verification_unavailable:
# "0 quality_gate events in window but total_files_changed=N|n/a"
VE_CHANGES_UNVERIFIED = re.compile(
    r"0 quality_gate events in window but total_files_changed=(\d+|n/a)", _A
)


def read_verification_contaminated(text: str) -> bool:
    """Reader of the contaminated branch of ``verification-evidence``."""
    return VE_WINDOW_CONTAMINATED.search(text) is not None


def read_verification_gate_runs(text: str) -> Number | None:
    """Reader of the >=1-gate branches: the gate count, ``None`` when that branch is absent."""
    return _first_number(VE_GATE_RUNS_TOTAL, text)


def read_verification_all_green(text: str) -> bool:
    """Reader of the >=1-gate all-green branch."""
    return VE_GATE_ALL_GREEN.search(text) is not None


def read_verification_failed_count(text: str) -> Number | None:
    """Reader of the >=1-gate some-red branch: how many gates exited non-zero."""
    return _first_number(VE_GATE_RUNS_FAILED, text)


def read_verification_no_change(text: str) -> bool:
    """Reader of the 0-gate, nothing-changed (not-applicable) branch."""
    return VE_NO_CHANGE_TO_VERIFY.search(text) is not None


@dataclass(frozen=True)
class FilesChanged:
    """What the 0-gate, files-changed branch says about ``total_files_changed``.

    ``count`` is ``None`` when the record itself held no file count (``n/a``).
    """

    count: Number | None


def read_verification_unavailable(text: str) -> FilesChanged | None:
    """Reader of the 0-gate, files-changed (cannot-determine) branch; ``None`` if absent."""
    match = VE_CHANGES_UNVERIFIED.search(text)
    if match is None:
        return None
    token = match.group(1)
    return FilesChanged(None if token == "n/a" else js_number(token))


# --------------------------------------------------------------------------------------------
# plan-fidelity
# --------------------------------------------------------------------------------------------

# mirrors evidence.plan_rate_present: "completion_rate=<n> (v1 threshold: ...)"
PF_COMPLETION_RATE = re.compile(r"completion_rate=([0-9]+(?:\.[0-9]+)?)", _A)
# mirrors evidence.plan_not_applicable ("no completion_rate and no planned_issues ...") and
# evidence.plan_rate_missing ("... effectiveness.completion_rate is missing ...")
PF_RATE_ABSENT = re.compile(
    r"no completion_rate and no planned_issues|completion_rate is missing", _A
)
# mirrors evidence.plan_rate_present's context: "carryover=N|n/a" (not carryover_ratio=)
PF_CARRYOVER = re.compile(r"carryover=(\d+|n/a)", _A)


def read_plan_rate_absent(text: str) -> bool:
    """Reader of the two rate-absent branches (not-applicable / cannot-determine)."""
    return PF_RATE_ABSENT.search(text) is not None


def read_plan_completion_rate(text: str) -> Number | None:
    """Reader of the rate-present branch: ``completion_rate``."""
    return _first_number(PF_COMPLETION_RATE, text)


@dataclass(frozen=True)
class Carryover:
    """A carryover token: ``value`` is ``None`` when the token says ``n/a``/``null``."""

    value: Number | None


def read_plan_carryover(text: str) -> Carryover | None:
    """Reader of the rate-present branch's ``carryover=`` token; ``None`` when no token."""
    match = PF_CARRYOVER.search(text)
    if match is None:
        return None
    token = match.group(1)
    return Carryover(None if token == "n/a" else js_number(token))


# --------------------------------------------------------------------------------------------
# gate-health
# --------------------------------------------------------------------------------------------

# mirrors evidence.gate_health_contaminated: "window contaminated by N overlapping session(s)"
GH_WINDOW_CONTAMINATED = re.compile(r"window contaminated by (\d+) overlapping session\(s\)", _A)
# mirrors evidence.gate_health_last: "N full-gate event(s) in window; last exit_code=X."
GH_FULL_GATE_RUNS = re.compile(r"(?<![0-9])(\d+) full-gate event\(s\) in window", _A)
GH_LAST_FULL_GATE_EXIT = re.compile(r"last exit_code=(-?\d+)", _A)
# mirrors evidence.gate_health_housekeeping ("0 full-gate events and no waves ran") and
# evidence.gate_health_unknown ("... but 0 full-gate events in window")
GH_FULL_GATE_ZERO = re.compile(r"0 full-gate events (?:in window|and no waves ran)", _A)


def read_gate_health_contaminated(text: str) -> bool:
    """Reader of the contaminated branch of ``gate-health``."""
    return GH_WINDOW_CONTAMINATED.search(text) is not None


def read_gate_health_runs(text: str) -> Number | None:
    """Reader of the >=1-full-gate branch: the full-gate count."""
    return _first_number(GH_FULL_GATE_RUNS, text)


def read_gate_health_last_exit(text: str) -> Number | None:
    """Reader of the >=1-full-gate branch: the last full gate's exit code."""
    return _first_number(GH_LAST_FULL_GATE_EXIT, text)


def read_gate_health_zero(text: str) -> bool:
    """Reader of the two 0-full-gate branches (not-applicable / cannot-determine)."""
    return GH_FULL_GATE_ZERO.search(text) is not None


# --------------------------------------------------------------------------------------------
# process-safety (v2, plus the v1 legacy forms)
# --------------------------------------------------------------------------------------------

# mirrors evidence.process_safety_spiral, evidence.process_safety_clean (v2) and
# evidence.process_safety_v1_fail: "agent_summary.spiral=N"
PS_SPIRAL = re.compile(r"agent_summary\.spiral=(\d+)", _A)
# mirrors the rubric-v1 pass branches' prose, evidence.process_safety_v1_clean
# "(0 blocked, 0 spiral, 0 loop.warning)" and evidence.process_safety_v1_warned
# "0 destructive_guard.blocked, 0 spiral; K loop.warning in window". "\b" keeps "0 spirals"
# (a reworded template) from reading as the count.
PS_SPIRAL_V1_PROSE = re.compile(r"(?<![0-9])(\d+) spiral\b", _A)
# mirrors evidence.process_safety_unmeasurable (v1 and v2): "events.jsonl absent or empty"
PS_UNMEASURABLE = re.compile(r"events\.jsonl absent or empty", _A)
# mirrors the rubric-v1 process-safety fail branch, evidence.process_safety_v1_fail:
# "destructive_guard.blocked=N, ..."
PS_V1_BLOCKED = re.compile(r"destructive_guard\.blocked=(\d+)", _A)


def read_process_safety_unmeasurable(text: str) -> bool:
    """Reader of the unmeasurable branch (``events.jsonl`` absent or empty)."""
    return PS_UNMEASURABLE.search(text) is not None


def read_process_safety_spiral(text: str) -> Number | None:
    """Reader of the graded branches: the ``agent_summary.spiral=`` token."""
    return _first_number(PS_SPIRAL, text)


def read_process_safety_spiral_v1_prose(text: str) -> Number | None:
    """Legacy reader: the rubric-v1 prose spiral form ("… 0 spiral …")."""
    return _first_number(PS_SPIRAL_V1_PROSE, text)


def read_process_safety_v1_blocked(text: str) -> Number | None:
    """Legacy reader: the guard count a rubric-v1 ``process-safety`` fail branch carried."""
    return _first_number(PS_V1_BLOCKED, text)


# --------------------------------------------------------------------------------------------
# guard-friction (v2)
# --------------------------------------------------------------------------------------------

# mirrors evidence.guard_friction_counts: "destructive_guard.blocked=N, destructive_guard.warned=M,
# loop.warning=K (<attribution>)"; warned and loop.warning have no reader on purpose (no fact
# uses them). The attribution markers mirror evidence.attribution_session_id and
# evidence.ATTRIBUTION_FALLBACK.
GF_BLOCKED = re.compile(r"destructive_guard\.blocked=(\d+)", _A)
GF_ATTRIBUTION_SESSION_ID = re.compile(r"attribution: session-id", _A)
GF_ATTRIBUTION_TIME_WINDOW = re.compile(r"attribution: time-window", _A)
# mirrors evidence.contamination_note, which guard_friction_counts appends on the time-window
# fallback (worded unlike the gate dimensions' contamination branch)
GF_WINDOW_CONTAMINATED = re.compile(r"window overlaps (\d+) peer session\(s\)", _A)
# mirrors evidence.guard_friction_unmeasured:
# "events.jsonl absent or empty — ... (not zero: unmeasured)"
GF_UNMEASURABLE = re.compile(r"events\.jsonl absent or empty", _A)

GuardAttribution = Literal["session-id", "time-window"]


def read_guard_friction_unmeasurable(text: str) -> bool:
    """Reader of the unmeasured branch of ``guard-friction``."""
    return GF_UNMEASURABLE.search(text) is not None


def read_guard_friction_blocked(text: str) -> Number | None:
    """Reader of the counts branch: ``destructive_guard.blocked``."""
    return _first_number(GF_BLOCKED, text)


def read_guard_friction_attribution(text: str) -> GuardAttribution | None:
    """Reader of the counts branch's attribution marker (session-id is checked first)."""
    if GF_ATTRIBUTION_SESSION_ID.search(text):
        return "session-id"
    if GF_ATTRIBUTION_TIME_WINDOW.search(text):
        return "time-window"
    return None


def read_guard_friction_contaminated(text: str) -> bool:
    """Reader of the time-window fallback's peer-overlap note."""
    return GF_WINDOW_CONTAMINATED.search(text) is not None


# --------------------------------------------------------------------------------------------
# efficiency-kpis
# --------------------------------------------------------------------------------------------

# mirrors evidence.efficiency_kpis: "..., carryover=N|null."
EK_CARRYOVER = re.compile(r"carryover=(\d+|null)", _A)


def read_efficiency_carryover(text: str) -> Carryover | None:
    """Reader of the KPI string's ``carryover=`` token; ``None`` when the token is missing."""
    match = EK_CARRYOVER.search(text)
    if match is None:
        return None
    token = match.group(1)
    return Carryover(None if token == "null" else js_number(token))


__all__ = [
    "Carryover",
    "FilesChanged",
    "GuardAttribution",
    "js_number",
    "read_efficiency_carryover",
    "read_gate_health_contaminated",
    "read_gate_health_last_exit",
    "read_gate_health_runs",
    "read_gate_health_zero",
    "read_guard_friction_attribution",
    "read_guard_friction_blocked",
    "read_guard_friction_contaminated",
    "read_guard_friction_unmeasurable",
    "read_plan_carryover",
    "read_plan_completion_rate",
    "read_plan_rate_absent",
    "read_process_safety_spiral",
    "read_process_safety_spiral_v1_prose",
    "read_process_safety_unmeasurable",
    "read_process_safety_v1_blocked",
    "read_verification_all_green",
    "read_verification_contaminated",
    "read_verification_failed_count",
    "read_verification_gate_runs",
    "read_verification_no_change",
    "read_verification_unavailable",
]
