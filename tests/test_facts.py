"""compute_facts against the reference's computeRecordFacts output, and the readers' contract.

The conformance vectors are read from ../shared at test time (never copied into the repo):
``facts-public.jsonl`` (one test per line) and the ``facts`` of every expected-v2.json of the
public and real corpora.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import SHARED_DIR, require_shared

import evalkit
from evalkit.judge.facts import FACT_KEYS, compute_facts
from evalkit.rubrics.dimensions import efficiency_kpis as ek
from evalkit.rubrics.dimensions import gate_health as gh
from evalkit.rubrics.dimensions import guard_friction as gf
from evalkit.rubrics.dimensions import plan_fidelity as pf
from evalkit.rubrics.dimensions import process_safety as ps
from evalkit.rubrics.dimensions import verification_evidence as ve
from evalkit.rubrics.dimensions.reading import js_number
from evalkit.rubrics.dimensions.shared import contamination_note

_VECTORS = SHARED_DIR / "conformance" / "facts-public.jsonl"


def _vector_params() -> list:
    if not _VECTORS.is_file():
        return [pytest.param(None, id="facts-public-missing")]
    lines = _VECTORS.read_text(encoding="utf-8").splitlines()
    return [
        pytest.param(number, id=f"{number}:{json.loads(line)['source']}")
        for number, line in enumerate(lines, start=1)
        if line.strip()
    ]


def _expected_params() -> list:
    root = SHARED_DIR / "conformance"
    cases = sorted(root.glob("public/*/expected-v2.json")) + sorted(
        root.glob("real/*/expected-v2.json")
    )
    if not cases:
        return [pytest.param(None, id="expected-v2-missing")]
    return [
        pytest.param(path, id=f"{path.parent.parent.name}/{path.parent.name}") for path in cases
    ]


@pytest.mark.parametrize("line_number", _vector_params())
def test_public_facts_vector(line_number: int | None) -> None:
    path = require_shared("conformance", "facts-public.jsonl")
    assert line_number is not None
    line = path.read_text(encoding="utf-8").splitlines()[line_number - 1]
    vector = json.loads(line)
    got = compute_facts(vector["dimensions"])
    assert got == vector["facts"]
    assert list(got) == list(vector["facts"])  # same keys, same order


def test_public_vectors_are_all_there() -> None:
    path = require_shared("conformance", "facts-public.jsonl")
    assert len([x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]) == 297


@pytest.mark.parametrize("case", _expected_params())
def test_expected_v2_facts(case: Path | None) -> None:
    require_shared("conformance")
    assert case is not None
    expected = json.loads(case.read_text(encoding="utf-8"))
    if expected["record"] is None:
        assert expected["facts"] is None  # no record, no facts: nothing to compute
        return
    assert compute_facts(expected["record"]["dimensions"]) == expected["facts"]


# --- shape and hostile input -----------------------------------------------------------------

ALL_NULL = {key: None for key in FACT_KEYS} | {"contradictions": [], "parse_misses": []}


@pytest.mark.parametrize("dims", [None, {}, {"id": "process-safety"}, "text", 42, [], [None, 1]])
def test_non_list_or_empty_input_is_all_null(dims: object) -> None:
    assert compute_facts(dims) == ALL_NULL


def test_public_api_name() -> None:
    assert evalkit.compute_facts is compute_facts


def _v2_dims(**overrides: str) -> list[dict]:
    dims = {
        "verification-evidence": ve.gates_red(3, 1),
        "plan-fidelity": pf.rate_present(0.9, 3, 1, 0.33),
        "gate-health": gh.last(2, 0),
        "process-safety": ps.v2_clean(0),
        "guard-friction": gf.counts(4, 1, 0, gf.ATTRIBUTION_FALLBACK, ""),
        "efficiency-kpis": ek.kpis_reported(
            {
                "duration_seconds": 60,
                "total_waves": 1,
                "total_agents": 2,
                "token_input": None,
                "token_output": None,
                "carryover": 1,
            },
            "recorded",
        ),
    } | {key.replace("_", "-"): value for key, value in overrides.items()}
    status = {"verification-evidence": "fail", "gate-health": "pass", "process-safety": "pass"}
    return [{"id": k, "status": status.get(k, "pass"), "evidence": v} for k, v in dims.items()]


def test_templates_and_readers_agree() -> None:
    facts = compute_facts(_v2_dims())
    assert facts == {
        "gate_runs_total": 3,
        "gate_runs_failed": 1,
        "full_gate_runs": 2,
        "last_full_gate_exit": 0,
        "red_runs_then_green_finish": True,
        "changes_unverified": False,
        "window_contaminated": False,
        "guard_blocked": 4,
        "guard_attribution": "time-window",
        "guard_blocked_conspicuous": False,
        "spiral": 0,
        "completion_rate": 0.9,
        "carryover": 1,
        "contradictions": [],
        "parse_misses": [],
    }


def test_session_id_attribution_and_contamination_readers() -> None:
    text = gf.counts(25, 0, 0, gf.attribution_session_id(["raw-1"]), contamination_note(2))
    facts = compute_facts(_v2_dims(guard_friction=text))
    assert facts["guard_blocked"] == 25
    assert facts["guard_attribution"] == "session-id"
    assert facts["guard_blocked_conspicuous"] is True
    assert facts["window_contaminated"] is True


def test_absent_dimension_is_never_a_parse_miss() -> None:
    full = _v2_dims()
    for dropped in [d["id"] for d in full]:
        facts = compute_facts([d for d in full if d["id"] != dropped])
        assert facts["parse_misses"] == [], dropped


def test_non_string_evidence_is_present_but_blind() -> None:
    dims = _v2_dims()
    for dim in dims:
        if dim["id"] == "gate-health":
            dim["evidence"] = {"evidence": "1 full-gate event(s) in window; last exit_code=0."}
    facts = compute_facts(dims)
    assert facts["full_gate_runs"] is None
    assert facts["parse_misses"] == [
        {
            "fact": "full_gate_runs",
            "dimension": "gate-health",
            "reason": "no known evidence template matched",
        }
    ]


def test_first_of_duplicated_dimensions_wins() -> None:
    dims = _v2_dims()
    dims.insert(0, {"id": "gate-health", "status": "pass", "evidence": gh.last(7, 3)})
    facts = compute_facts(dims)
    assert facts["full_gate_runs"] == 7
    assert facts["last_full_gate_exit"] == 3
    assert "gate-health status=pass but last_full_gate_exit=3" in facts["contradictions"]


@pytest.mark.parametrize("files_changed", [4, None])
def test_events_absent_third_state(files_changed: int | None) -> None:
    dims = [
        {
            "id": "verification-evidence",
            "status": "cannot-determine",
            "evidence": ve.unavailable(files_changed),
        },
        {
            "id": "gate-health",
            "status": "cannot-determine",
            "evidence": gh.unknown(3),
        },
        {
            "id": "guard-friction",
            "status": "not-applicable",
            "evidence": gf.unmeasured(),
        },
    ]
    facts = compute_facts(dims)
    for key in ("gate_runs_total", "gate_runs_failed", "full_gate_runs", "changes_unverified"):
        assert facts[key] is None, key  # not a zero: the file was never readable
    assert facts["parse_misses"] == []  # and not a parse miss: no template changed
    assert len(facts["contradictions"]) == 1
    assert "events.jsonl absent or empty" in facts["contradictions"][0]


def test_without_the_absent_events_the_same_string_is_a_measurement() -> None:
    dims = [
        {
            "id": "verification-evidence",
            "status": "cannot-determine",
            "evidence": ve.unavailable(4),
        }
    ]
    facts = compute_facts(dims)
    assert facts["gate_runs_total"] == 0
    assert facts["changes_unverified"] is True
    assert facts["contradictions"] == []


def test_v1_legacy_readers() -> None:
    fail = ps.v1_fail(21, 0, 1, "")
    facts = compute_facts([{"id": "process-safety", "status": "fail", "evidence": fail}])
    assert (facts["guard_blocked"], facts["guard_attribution"]) == (21, "time-window")
    assert facts["guard_blocked_conspicuous"] is True
    assert facts["spiral"] == 0
    assert facts["contradictions"] == []  # a v1 fail on blocked is no contradiction of v1
    for prose in (ps.v1_clean(""), ps.v1_warned(3, "")):
        facts = compute_facts([{"id": "process-safety", "status": "pass", "evidence": prose}])
        assert facts["spiral"] == 0
        assert facts["guard_blocked"] is None
        assert facts["parse_misses"] == []


def test_reworded_prose_is_a_parse_miss_not_a_zero() -> None:
    text = ps.v1_clean("").replace("0 spiral", "0 spirals")
    facts = compute_facts([{"id": "process-safety", "status": "pass", "evidence": text}])
    assert facts["spiral"] is None
    assert [m["fact"] for m in facts["parse_misses"]] == ["spiral"]


def test_non_ascii_digits_are_not_read() -> None:
    text = "attribution: time-window. \u0663 quality_gate event(s) in window, all exit_code=0."
    facts = compute_facts([{"id": "verification-evidence", "status": "pass", "evidence": text}])
    assert facts["gate_runs_total"] is None
    assert [m["fact"] for m in facts["parse_misses"]] == ["gate_runs_total"]


def test_numbers_read_as_javascript_number() -> None:
    assert js_number("007") == 7 and isinstance(js_number("007"), int)
    assert js_number("0.85") == 0.85
    assert js_number("99999999999999999999") == 100000000000000000000  # double rounding
    assert js_number("1" + "0" * 21) == 1e21 and isinstance(js_number("1" + "0" * 21), float)
    assert math.isinf(js_number("9" * 400))


def test_beyond_double_range_is_null_but_still_conspicuous() -> None:
    text = gf.counts(0, 0, 0, gf.ATTRIBUTION_FALLBACK, "").replace(
        "blocked=0", "blocked=" + "9" * 400
    )
    facts = compute_facts([{"id": "guard-friction", "status": "not-applicable", "evidence": text}])
    assert facts["guard_blocked"] is None  # JSON has no Infinity: the reference prints null
    assert facts["guard_blocked_conspicuous"] is True
    json.dumps(facts, allow_nan=False)  # strict JSON


def test_facts_never_mutate_the_input() -> None:
    dims = _v2_dims()
    before = json.dumps(dims)
    compute_facts(dims)
    assert json.dumps(dims) == before


# --- records evalkit writes itself ------------------------------------------------------------

TIMESTAMP = "2026-10-01T00:00:00.000Z"


@pytest.mark.parametrize("case", _expected_params())
def test_facts_of_records_evalkit_writes_equal_the_reference(case: Path | None, tmp_path) -> None:
    """Score the case with evalkit, append the record to a journal, read it back: same facts."""
    from evalkit.errors import EvalkitError
    from evalkit.journal import reader as journal
    from evalkit.scoring.engine import score_session

    require_shared("conformance")
    assert case is not None
    folder = case.parent
    expected = json.loads(case.read_text(encoding="utf-8"))
    session = json.loads((folder / "args.json").read_text(encoding="utf-8"))["session"]
    if expected["record"] is None:
        with pytest.raises(EvalkitError):
            score_session(folder, session, "rubric-v2", timestamp=TIMESTAMP)
        return
    record = score_session(folder, session, "rubric-v2", timestamp=TIMESTAMP).to_dict()
    path = tmp_path / "eval.jsonl"
    journal.append(path, record)
    (stored,) = journal.read(path).records
    assert compute_facts(stored["dimensions"]) == expected["facts"]


def test_a_megabyte_digit_run_is_read_like_any_number() -> None:
    digits = "7" * 1_000_000
    text = f"attribution: time-window. {digits} quality_gate event(s) in window, all exit_code=0."
    facts = compute_facts([{"id": "verification-evidence", "status": "pass", "evidence": text}])
    assert facts["gate_runs_total"] is None  # Infinity in JavaScript, null in JSON
    assert facts["gate_runs_failed"] == 0
    hostile = "9" * 1_000_000 + " no template"
    dims = [
        {"id": "verification-evidence", "status": "pass", "evidence": hostile},
        {"id": "process-safety", "status": "pass", "evidence": hostile},
    ]
    facts = compute_facts(dims)
    assert [m["fact"] for m in facts["parse_misses"]] == ["gate_runs_total", "spiral"]


def test_a_count_past_2_53_reads_back_as_the_reference_writes_it() -> None:
    # Number("123456789012345680000") is the double 1.2345678901234568e20, which
    # JSON.stringify writes as 123456789012345680000 (Node v20.20).
    dims = _v2_dims(
        **{
            "plan-fidelity": "completion_rate=1 (v1 threshold: pass iff completion_rate >= 0.8); "
            "planned_issues=2, carryover=123456789012345680000, carryover_ratio=0."
        }
    )
    facts = compute_facts(dims)
    assert facts["carryover"] == 123456789012345680000
    assert '"carryover": 123456789012345680000' in json.dumps(facts)
    assert facts["contradictions"] == [
        "carryover disagrees between plan-fidelity (123456789012345680000) and efficiency-kpis (1)"
    ]


# --- the third state, whatever the gate evidence says (issue 13 item 5) ------------------------

_GATE_FACTS = (
    "gate_runs_total",
    "gate_runs_failed",
    "full_gate_runs",
    "last_full_gate_exit",
    "changes_unverified",
)
# The two readers that can report events.jsonl absent or empty, as a v1 record (process-safety
# only), a v2 record (both) and a v2 record that lost its process-safety dimension.
_EVENTS_ABSENT = {
    "v1:process-safety": [("process-safety", ps.unmeasurable())],
    "v2:both": [
        ("process-safety", ps.unmeasurable()),
        ("guard-friction", gf.unmeasured()),
    ],
    "v2:guard-friction": [("guard-friction", gf.unmeasured())],
}
# Every branch the two gate dimensions can write (the events-absent mutation of the vectors keeps
# a gate branch that was measured before the file went missing).
_GATE_TEMPLATES = {
    "ve:contaminated": ("verification-evidence", ve.contaminated(1, ["s2"])),
    "ve:no-change": ("verification-evidence", ve.no_change()),
    "ve:unavailable": ("verification-evidence", ve.unavailable(4)),
    "ve:unavailable-n/a": ("verification-evidence", ve.unavailable(None)),
    "ve:green": ("verification-evidence", ve.gates_green(3)),
    "ve:red": ("verification-evidence", ve.gates_red(3, 1)),
    "gh:contaminated": ("gate-health", gh.contaminated(1)),
    "gh:housekeeping": ("gate-health", gh.housekeeping()),
    "gh:unknown": ("gate-health", gh.unknown(3)),
    "gh:last-green": ("gate-health", gh.last(2, 0)),
    "gh:last-red": ("gate-health", gh.last(2, 1)),
}
_MISSING = object()


def _evidence_variants(text: str) -> list[tuple[str, object]]:
    """The template as is, cut at every position, reworded, not a string, and missing."""
    out: list[tuple[str, object]] = [("as-is", text)]
    out += [(f"cut@{i}", text[:i]) for i in range(len(text))]
    out.append(("reworded", text.replace("event(s)", "run(s)").replace("events", "runs")))
    out += [(f"non-string:{v!r}", v) for v in (None, 42, True, [text], {"evidence": text})]
    out.append(("missing", _MISSING))
    return out


def _dims_with(absent: list[tuple[str, str]], dim_id: str, evidence: object) -> list[dict]:
    other = {
        "verification-evidence": ve.gates_red(3, 1),
        "gate-health": gh.last(2, 1),
    }
    other[dim_id] = evidence  # type: ignore[assignment]
    dims: list[dict] = []
    for did, text in [*other.items(), *absent]:
        entry: dict = {"id": did, "status": "cannot-determine", "evidence": text}
        if text is _MISSING:
            del entry["evidence"]
        dims.append(entry)
    dims.append({"id": "plan-fidelity", "status": "pass", "evidence": pf.rate_present(1, 2, 0, 0)})
    return dims


@pytest.mark.parametrize("template", list(_GATE_TEMPLATES))
@pytest.mark.parametrize("absent", list(_EVENTS_ABSENT))
def test_third_state_gate_facts_are_null_and_never_a_parse_miss(template: str, absent: str) -> None:
    """Under events.jsonl absent or empty, no gate fact is a number and none is a parse miss.

    Before the fix, a reworded, cut, non-string or missing gate evidence string recorded a
    ``parse_miss`` for ``gate_runs_total``/``gate_runs_failed``/``full_gate_runs``/
    ``last_full_gate_exit`` although its numbers come from the file that was never readable
    (rubric-v2 § "The third state").
    """
    dim_id, text = _GATE_TEMPLATES[template]
    for name, evidence in _evidence_variants(text):
        dims = _dims_with(_EVENTS_ABSENT[absent], dim_id, evidence)
        facts = compute_facts(dims)
        misses = [m for m in facts["parse_misses"] if m["fact"] in _GATE_FACTS]
        assert misses == [], name
        # The only gate fact that survives is "nothing changed, so nothing is unverified".
        ve_text = next(d for d in dims if d["id"] == "verification-evidence").get("evidence")
        no_change = isinstance(ve_text, str) and ve.read_no_change(ve_text)
        for key in _GATE_FACTS:
            expected = False if key == "changes_unverified" and no_change else None
            assert facts[key] is expected, (name, key)
        assert facts["red_runs_then_green_finish"] is None, name
        # Rule 1 still abstains where the seed says so: "0 quality_gate events in window" with
        # files changed, read from a verification-evidence string that says exactly that.
        unverified = isinstance(ve_text, str) and ve.read_unavailable(ve_text) is not None
        third = [c for c in facts["contradictions"] if "events.jsonl absent or empty" in c]
        assert len(third) == (1 if unverified else 0), name
        # The facts of the other dimensions are read as before.
        assert facts["completion_rate"] == 1 and facts["carryover"] == 0, name


def test_third_state_with_a_cut_verification_string_reads_as_the_reference_does() -> None:
    """The vectors' ``ps-events-file-absent:v2`` record with its verification evidence cut at
    character 60 (the ``truncate`` mutation): no gate number, no parse miss, and no
    contradiction either (the cut string no longer says "with files changed"), so the rule
    judge abstains under rule 5 (both of rule 6's inputs unmeasured), never passes or fails."""
    from evalkit.judge import apply_rules

    dims = [
        {
            "id": "verification-evidence",
            "status": "cannot-determine",
            "evidence": ve.unavailable(5)[:60],
        },
        {"id": "plan-fidelity", "status": "pass", "evidence": pf.rate_present(1, 3, 0, 0)},
        {"id": "gate-health", "status": "cannot-determine", "evidence": gh.unknown(3)},
        {
            "id": "process-safety",
            "status": "cannot-determine",
            "evidence": ps.unmeasurable(),
        },
        {
            "id": "guard-friction",
            "status": "not-applicable",
            "evidence": gf.unmeasured(),
        },
    ]
    facts = compute_facts(dims)
    assert facts == ALL_NULL | {"completion_rate": 1, "carryover": 0, "window_contaminated": False}
    assert apply_rules(facts).status == "cannot-determine"
    assert apply_rules(facts).rule == 5
