"""Every evidence template read back through its reader, with generated values.

Each test renders one template of a dimension module with values hypothesis draws and reads the
string back as the judge facts do (``compute_facts`` over a record holding that dimension) and,
where a reader serves an analysis rather than a fact, through that reader. ``test_every_template
_has_a_round_trip`` checks that every template a rubric table can write (every spec's
``templates``) has a test here, so a new template without its reader fails.

Counts are what a ledger can produce (non-negative integers below 1e20, past 2**53 included):
they come back exactly as JavaScript prints and reads them. Raw JSON values (``exit_code``,
``total_files_changed``, ``completion_rate``, ``carryover``, ``spiral``...) are interpolated as
JavaScript's template literals do, so they can print as ``1e+21``, ``1.5e-7``, ``-3``,
``Infinity``, ``undefined``, ``null`` or a string: a reader takes the leading run its token
pattern allows (``\\d+``, ``-?\\d+``, ``[0-9]+(.[0-9]+)?``, or the placeholder ``n/a``/``null``)
and a value with no such run is a parse miss, never a number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.js.numbers import format_js_number
from evalkit.js.values import UNDEFINED, js_nullish, js_string
from evalkit.judge.facts import compute_facts
from evalkit.record.scoring_context import KPI_KEYS
from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric
from evalkit.rubrics.dimensions import efficiency_kpis as ek
from evalkit.rubrics.dimensions import gate_health as gh
from evalkit.rubrics.dimensions import gates
from evalkit.rubrics.dimensions import guard_friction as gf
from evalkit.rubrics.dimensions import plan_fidelity as pf
from evalkit.rubrics.dimensions import process_safety as ps
from evalkit.rubrics.dimensions import verification_evidence as ve
from evalkit.rubrics.dimensions.reading import js_number
from evalkit.rubrics.dimensions.shared import contamination_note

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

COVERED: set[Callable[..., str]] = set()


def covers(*templates: Callable[..., str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark a test as the round trip of ``templates`` (checked by the completeness test)."""

    def mark(test: Callable[..., None]) -> Callable[..., None]:
        COVERED.update(templates)
        return test

    return mark


# -- values --------------------------------------------------------------------------------------

COUNTS = st.integers(min_value=0, max_value=10**20)
POSITIVE = st.integers(min_value=1, max_value=10**20)
JS_FORMATS = st.sampled_from(
    [1e21, 1.5e-7, 1e-7, -0.0, 0.1, 0.85, 2**53 + 1, 123456789012345680000, -1, -3.5]
)
NUMBERS = st.one_of(
    COUNTS,
    st.integers(min_value=-(10**6), max_value=-1),
    st.floats(allow_nan=True, allow_infinity=True),
    JS_FORMATS,
)
# Strings cannot spell a template token (no letters of the tokens but "a", "b", "n").
JSON_VALUES = st.one_of(
    NUMBERS,
    st.none(),
    st.just(UNDEFINED),
    st.booleans(),
    st.text(alphabet="0123456789abn/ .-", max_size=6),
)
IDS = st.lists(st.text(alphabet="abcdef0123456789-", min_size=1, max_size=12), max_size=3)
NOTES = st.one_of(st.just(""), st.builds(contamination_note, POSITIVE))


def printed(count: int) -> int | float:
    """A count as JavaScript prints it and reads it back."""
    return js_number(format_js_number(count))


def lead(token: str, text: str) -> int | float | str | None:
    """What a reader takes from an interpolated value: the leading run ``token`` allows, as a
    JavaScript number (a placeholder stays a string), or ``None``."""
    match = re.match(token, text, re.ASCII)
    if match is None:
        return None
    found = match.group(0)
    return found if found in ("n/a", "null") else js_number(found)


def facts_of(dim_id: str, evidence: str, status: str = "pass") -> dict[str, Any]:
    return compute_facts([{"id": dim_id, "status": status, "evidence": evidence}])


def missed(facts: dict[str, Any]) -> list[str]:
    return [m["fact"] for m in facts["parse_misses"]]


# -- verification-evidence -----------------------------------------------------------------------


@covers(ve.contaminated)
@SETTINGS
@given(POSITIVE, IDS)
def test_ve_contaminated(peers: int, ids: list[str]) -> None:
    text = ve.contaminated(peers, ids)
    facts = facts_of(ve.ID, text, "cannot-determine")
    assert (facts["gate_runs_total"], facts["changes_unverified"]) == (None, None)
    assert facts["window_contaminated"] is True and missed(facts) == []
    assert gates.reports_contaminated_window(text) and not gates.reports_zero_gate_events(text)


@covers(ve.no_change)
def test_ve_no_change() -> None:
    text = ve.no_change()
    facts = facts_of(ve.ID, text, "not-applicable")
    assert (facts["gate_runs_total"], facts["gate_runs_failed"]) == (0, 0)
    assert facts["changes_unverified"] is False and missed(facts) == []
    assert gates.reports_zero_gate_events(text) and not gates.reports_contaminated_window(text)


@covers(ve.unavailable)
@SETTINGS
@given(JSON_VALUES)
def test_ve_unavailable(files: Any) -> None:
    text = ve.unavailable(files)
    facts = facts_of(ve.ID, text, "cannot-determine")
    token = lead(r"\d+|n/a", "n/a" if js_nullish(files) else js_string(files))
    assert gates.reports_zero_gate_events(text)
    if token is None:
        assert missed(facts) == ["gate_runs_total"]
        assert facts["gate_runs_total"] is None
        return
    assert missed(facts) == [] and facts["gate_runs_total"] == 0
    assert facts["changes_unverified"] is (None if token == "n/a" else token != 0)


@covers(ve.gates_green)
@SETTINGS
@given(POSITIVE)
def test_ve_gates_green(runs: int) -> None:
    facts = facts_of(ve.ID, ve.gates_green(runs))
    assert (facts["gate_runs_total"], facts["gate_runs_failed"]) == (printed(runs), 0)
    assert facts["changes_unverified"] is False and missed(facts) == []


@covers(ve.gates_red)
@SETTINGS
@given(POSITIVE, st.data())
def test_ve_gates_red(runs: int, data: st.DataObject) -> None:
    failing = data.draw(st.integers(min_value=1, max_value=runs))
    facts = facts_of(ve.ID, ve.gates_red(runs, failing), "fail")
    assert facts["gate_runs_total"] == printed(runs)
    assert facts["gate_runs_failed"] == printed(failing)
    assert facts["changes_unverified"] is False and missed(facts) == []


# -- plan-fidelity -------------------------------------------------------------------------------


@covers(pf.not_applicable)
def test_pf_not_applicable() -> None:
    facts = facts_of(pf.ID, pf.not_applicable(), "not-applicable")
    assert (facts["completion_rate"], facts["carryover"], missed(facts)) == (None, None, [])


@covers(pf.rate_missing)
@SETTINGS
@given(JSON_VALUES)
def test_pf_rate_missing(planned: Any) -> None:
    facts = facts_of(pf.ID, pf.rate_missing(planned), "cannot-determine")
    assert (facts["completion_rate"], facts["carryover"], missed(facts)) == (None, None, [])


@covers(pf.rate_present)
@SETTINGS
@given(NUMBERS, JSON_VALUES, JSON_VALUES, JSON_VALUES)
def test_pf_rate_present(rate: Any, planned: Any, carryover: Any, ratio: Any) -> None:
    facts = facts_of(pf.ID, pf.rate_present(rate, planned, carryover, ratio))
    expected_rate = lead(r"[0-9]+(?:\.[0-9]+)?", js_string(rate))
    expected_carry = lead(r"\d+|n/a", "n/a" if js_nullish(carryover) else js_string(carryover))
    misses = []
    if expected_rate is None:
        misses.append("completion_rate")
    if expected_carry is None:
        misses.append("carryover")
    assert missed(facts) == misses
    assert facts["completion_rate"] == expected_rate
    assert facts["carryover"] == (None if expected_carry == "n/a" else expected_carry)


# -- gate-health ---------------------------------------------------------------------------------


@covers(gh.contaminated)
@SETTINGS
@given(POSITIVE)
def test_gh_contaminated(peers: int) -> None:
    text = gh.contaminated(peers)
    facts = facts_of(gh.ID, text, "cannot-determine")
    assert (facts["full_gate_runs"], facts["last_full_gate_exit"]) == (None, None)
    assert facts["window_contaminated"] is True and missed(facts) == []
    assert gates.reports_contaminated_window(text) and not gates.reports_zero_gate_events(text)


@covers(gh.housekeeping)
def test_gh_housekeeping() -> None:
    text = gh.housekeeping()
    facts = facts_of(gh.ID, text, "not-applicable")
    assert (facts["full_gate_runs"], facts["last_full_gate_exit"], missed(facts)) == (0, None, [])
    assert gates.reports_zero_gate_events(text)


@covers(gh.unknown)
@SETTINGS
@given(JSON_VALUES)
def test_gh_unknown(total_waves: Any) -> None:
    text = gh.unknown(total_waves)
    facts = facts_of(gh.ID, text, "cannot-determine")
    assert (facts["full_gate_runs"], facts["last_full_gate_exit"], missed(facts)) == (0, None, [])
    assert gates.reports_zero_gate_events(text)


@covers(gh.last)
@SETTINGS
@given(POSITIVE, JSON_VALUES)
def test_gh_last(runs: int, exit_code: Any) -> None:
    text = gh.last(runs, exit_code)
    facts = facts_of(gh.ID, text, "fail")
    expected = lead(r"-?\d+", js_string(exit_code))
    assert facts["full_gate_runs"] == printed(runs)
    assert facts["last_full_gate_exit"] == expected
    assert missed(facts) == ([] if expected is not None else ["last_full_gate_exit"])
    assert not gates.reports_zero_gate_events(text)


# -- process-safety ------------------------------------------------------------------------------


@covers(ps.unmeasurable)
def test_ps_unmeasurable() -> None:
    text = ps.unmeasurable()
    assert ps.read_unmeasurable(text)
    facts = facts_of(ps.ID, text, "cannot-determine")
    assert (facts["spiral"], facts["guard_blocked"], missed(facts)) == (None, None, [])
    # ... and it is the third state: a zero read from verification-evidence is no measurement.
    dims = [
        {"id": ve.ID, "status": "cannot-determine", "evidence": ve.unavailable(3)},
        {"id": ps.ID, "status": "cannot-determine", "evidence": text},
    ]
    assert compute_facts(dims)["contradictions"] == [ve.EVENTS_ABSENT_CONTRADICTION]


@covers(ps.v1_fail)
@SETTINGS
@given(COUNTS, JSON_VALUES, COUNTS, NOTES)
def test_ps_v1_fail(blocked: int, spiral: Any, loops: int, note: str) -> None:
    facts = facts_of(ps.ID, ps.v1_fail(blocked, spiral, loops, note), "fail")
    expected = lead(r"\d+", js_string(spiral))
    assert facts["spiral"] == expected
    assert missed(facts) == ([] if expected is not None else ["spiral"])
    # A v1 record has no guard-friction: the guard count is read here (legacy route).
    assert (facts["guard_blocked"], facts["guard_attribution"]) == (printed(blocked), "time-window")
    assert facts["guard_blocked_conspicuous"] is (blocked >= gf.GUARD_BLOCKED_CONSPICUOUS)


@covers(ps.v1_warned, ps.v1_clean)
@SETTINGS
@given(COUNTS, NOTES)
def test_ps_v1_pass_branches(loops: int, note: str) -> None:
    for text in (ps.v1_warned(loops, note), ps.v1_clean(note)):
        facts = facts_of(ps.ID, text)
        assert (facts["spiral"], facts["guard_blocked"], missed(facts)) == (0, None, [])
        assert ps.read_v1_prose_blocked(text) == 0  # the threshold study's v1-prose fallback


@covers(ps.v2_spiral, ps.v2_clean)
@SETTINGS
@given(JSON_VALUES)
def test_ps_v2_branches(spiral: Any) -> None:
    expected = lead(r"\d+", js_string(spiral))
    for text in (ps.v2_spiral(spiral), ps.v2_clean(spiral)):
        facts = facts_of(ps.ID, text)
        assert facts["spiral"] == expected
        assert missed(facts) == ([] if expected is not None else ["spiral"])
        assert ps.read_v1_prose_blocked(text) is None


# -- guard-friction ------------------------------------------------------------------------------


@covers(gf.unmeasured)
def test_gf_unmeasured() -> None:
    text = gf.unmeasured()
    assert gf.read_unmeasurable(text)
    facts = facts_of(gf.ID, text, "not-applicable")
    assert (facts["guard_blocked"], facts["guard_attribution"], missed(facts)) == (None, None, [])
    assert facts["window_contaminated"] is False


@covers(gf.counts, gf.attribution_session_id, contamination_note)
@SETTINGS
@given(COUNTS, COUNTS, COUNTS, st.one_of(st.none(), IDS), NOTES)
def test_gf_counts(
    blocked: int, warned: int, loops: int, raw_ids: list[str] | None, note: str
) -> None:
    attribution = gf.ATTRIBUTION_FALLBACK if raw_ids is None else gf.attribution_session_id(raw_ids)
    facts = facts_of(gf.ID, gf.counts(blocked, warned, loops, attribution, note), "not-applicable")
    assert facts["guard_blocked"] == printed(blocked) and missed(facts) == []
    assert facts["guard_attribution"] == ("time-window" if raw_ids is None else "session-id")
    assert facts["guard_blocked_conspicuous"] is (blocked >= gf.GUARD_BLOCKED_CONSPICUOUS)
    assert facts["window_contaminated"] is (note != "")


# -- efficiency-kpis -----------------------------------------------------------------------------


@covers(ek.kpis_reported)
@SETTINGS
@given(
    st.fixed_dictionaries({key: JSON_VALUES for key in KPI_KEYS}),
    st.sampled_from(["recorded", "derived-from-window", "unavailable"]),
)
def test_ek_kpis_reported(kpis: dict[str, Any], source: str) -> None:
    facts = facts_of(ek.ID, ek.kpis_reported(kpis, source), "not-applicable")
    carryover = kpis["carryover"]
    expected = lead(r"\d+|null", "null" if js_nullish(carryover) else js_string(carryover))
    assert missed(facts) == ([] if expected is not None else ["carryover"])
    assert facts["carryover"] == (None if expected == "null" else expected)


# -- completeness and the moved analysis readers ---------------------------------------------


def test_every_template_has_a_round_trip() -> None:
    templates = {
        template
        for version in RUBRIC_VERSIONS
        for spec in get_rubric(version).dimensions
        for template in spec.templates
    }
    assert templates - COVERED == set()
    assert COVERED - templates == set()  # no test of a template no table writes


# The analyses' own regexes before they moved beside the templates (threshold.py, replay.py):
# on every string evalkit writes, the dimension readers answer as they did.
_OLD_ZERO = re.compile(r"\b0 (quality_gate|full-gate) event")
_OLD_V1_PROSE = (
    re.compile(r"\((\d+) blocked, \d+ spiral"),
    re.compile(r"^(\d+) destructive_guard\.blocked, \d+ spiral"),
)


def _old_v1_prose(text: str) -> int | None:
    for pattern in _OLD_V1_PROSE:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


@SETTINGS
@given(POSITIVE, IDS, JSON_VALUES, POSITIVE, NOTES, COUNTS)
def test_moved_analysis_readers_answer_as_the_old_regexes(
    n: int, ids: list[str], value: Any, m: int, note: str, loops: int
) -> None:
    texts = [
        ve.contaminated(n, ids),
        ve.no_change(),
        ve.unavailable(value),
        ve.gates_green(n),
        ve.gates_red(n, m),
        gh.contaminated(n),
        gh.housekeeping(),
        gh.unknown(value),
        gh.last(n, value),
        ps.unmeasurable(),
        ps.v1_fail(n, value, loops, note),
        ps.v1_warned(loops, note),
        ps.v1_clean(note),
        ps.v2_spiral(value),
        ps.v2_clean(value),
        gf.unmeasured(),
        gf.counts(n, m, loops, gf.ATTRIBUTION_FALLBACK, note),
    ]
    for text in texts:
        assert gates.reports_zero_gate_events(text) == bool(_OLD_ZERO.search(text)), text
        assert gates.reports_contaminated_window(text) == ("contaminated" in text), text
        assert ps.read_v1_prose_blocked(text) == _old_v1_prose(text), text


def test_v1_prose_reader_reads_ascii_digits_as_javascript_does() -> None:
    # The one place the moved reader differs from threshold.py's old regex: like every reader,
    # it reads ASCII digits only (the old one read "\u0663" as 3).
    assert ps.read_v1_prose_blocked("(\u0663 blocked, 0 spiral, 0 loop.warning)") is None
    assert ps.read_v1_prose_blocked("(7 blocked, 0 spiral, 0 loop.warning)") == 7
    assert ps.read_v1_prose_blocked(None) is None and ps.read_v1_prose_blocked(7) is None


@pytest.mark.parametrize(
    ("value", "shown", "read"),
    [
        (1e21, "1e+21", 1),
        (1.5e-7, "1.5e-7", 1),
        (0.5, "0.5", 0),
        (-3, "-3", -3),
        (2**53 + 1, "9007199254740992", 9007199254740992),
        (UNDEFINED, "undefined", None),
        (None, "null", None),
        (float("inf"), "Infinity", None),
    ],
)
def test_an_exit_code_in_each_javascript_format(value: Any, shown: str, read: Any) -> None:
    """The worked cases of the JavaScript formats, spelled out (gate-health's ``-?\\d+``)."""
    text = gh.last(1, value)
    assert f"last exit_code={shown}." in text
    assert facts_of(gh.ID, text, "fail")["last_full_gate_exit"] == read
