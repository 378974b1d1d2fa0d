"""The record contract of SPEC section 2: validation, normalization, run ids, projection."""

from __future__ import annotations

import copy
import json
import math

import pytest
from conftest import require_shared
from hypothesis import given
from hypothesis import strategies as st
from record_factory import TIMESTAMP, make_record, reference_record

import evalkit
from evalkit.errors import ValidationError
from evalkit.record.contract import (
    FORBIDDEN_TOP_LEVEL_KEYS,
    KPI_KEYS,
    REQUIRED_TOP_LEVEL_KEYS,
    make_run_id,
    normalize_record,
    project_submission,
    validate_record,
)

# ---------------------------------------------------------------------------------- valid


def test_public_names_resolve_to_record_module() -> None:
    assert evalkit.validate_record is validate_record
    assert evalkit.normalize_record is normalize_record


def test_valid_record_is_returned_unchanged_and_not_mutated() -> None:
    rec = make_record()
    before = copy.deepcopy(rec)
    out = validate_record(rec)
    assert out == before
    assert rec == before
    assert out is not rec


def test_make_run_id_strips_dash_colon_dot() -> None:
    assert make_run_id("s-1", "2026-10-01T00:00:00.000Z") == "s-1-eval-20261001T000000000Z"
    assert make_run_id("a", "2026-10-01T02:00:00+02:00") == "a-eval-20261001T020000+0200"
    with pytest.raises(ValidationError, match="session_id"):
        make_run_id("", TIMESTAMP)


def _all_expected_files() -> list:
    root = require_shared("conformance")
    return sorted(root.glob("*/*/expected-v*.json"))


def test_reference_engine_records_validate_and_normalize() -> None:
    """Every conformance record, as the reference engine journals it, validates and normalizes."""
    checked = 0
    for path in _all_expected_files():
        ref = reference_record(path)
        if ref is None:
            continue
        assert "schema_version" not in ref and "handle" not in ref
        out = validate_record(ref)
        assert out["schema_version"] == 1, path
        assert out["handle"] is None, path
        assert out["anonymized"] is True, path
        assert out["dimensions"] == ref["dimensions"], path
        assert normalize_record(ref) == out, path
        checked += 1
    # public has 66 cases, most with a record at both rubric versions
    assert checked >= 100


# ---------------------------------------------------------------------------------- rejected


@pytest.mark.parametrize("key", FORBIDDEN_TOP_LEVEL_KEYS)
def test_forbidden_global_score_keys_are_rejected(key: str) -> None:
    rec = make_record()
    rec[key] = 0.8
    with pytest.raises(ValidationError, match=rf"^{key}: forbidden top-level key.*no global score"):
        validate_record(rec)


def test_forbidden_key_is_rejected_even_when_null() -> None:
    rec = make_record()
    rec["overall"] = None
    with pytest.raises(ValidationError, match=r"^overall: forbidden"):
        validate_record(rec)


@pytest.mark.parametrize(
    "value", ["build-host.example.org", "DEADBEEF00", "abc1234", "0123456789abcdeg", 12345678]
)
def test_clear_or_malformed_hostname_hash_is_rejected(value: object) -> None:
    rec = make_record()
    rec["harness"]["hostname_hash"] = value
    with pytest.raises(
        ValidationError,
        match=r"^harness\.hostname_hash: must be null or lowercase hex of at least 8 characters; "
        r"a clear hostname is never recorded",
    ):
        validate_record(rec)


def test_clear_hostname_key_is_rejected() -> None:
    rec = make_record()
    rec["harness"]["hostname"] = "dev-laptop"
    with pytest.raises(ValidationError, match=r"^harness\.hostname: a clear hostname is never"):
        validate_record(rec)


@pytest.mark.parametrize("value", [None, "12345678", "9f86d081884c7d659a2feaa0c55ad015"])
def test_hostname_hash_null_or_lower_hex_is_accepted(value: object) -> None:
    rec = make_record()
    rec["harness"]["hostname_hash"] = value
    assert validate_record(rec)["harness"]["hostname_hash"] == value


@pytest.mark.parametrize("advisory", [False, None, "true", 1])
def test_judge_dimension_must_be_advisory_true(advisory: object) -> None:
    rec = make_record()
    rec["dimensions"][-1]["advisory"] = advisory
    with pytest.raises(
        ValidationError,
        match=r"^dimensions\[3\] \(instruction-adherence\)\.advisory: "
        r"a judge dimension must carry advisory: true",
    ):
        validate_record(rec)


@pytest.mark.parametrize("status", ["calibrated", "calibrated:gold-v1:abcdef12", "", None])
def test_judge_dimension_calibration_status_must_be_accepted(status: object) -> None:
    rec = make_record()
    rec["dimensions"][-1]["calibration_status"] = status
    with pytest.raises(
        ValidationError,
        match=r"^dimensions\[3\] \(instruction-adherence\)\.calibration_status: .* is not an "
        r"accepted calibration status",
    ):
        validate_record(rec)


@pytest.mark.parametrize(
    ("key", "value"),
    [("calibration_status", "uncalibrated"), ("advisory", True), ("advisory", False)],
)
def test_deterministic_dimension_must_not_carry_judge_fields(key: str, value: object) -> None:
    rec = make_record()
    rec["dimensions"][0][key] = value
    with pytest.raises(
        ValidationError,
        match=rf"^dimensions\[0\] \(verification-evidence\)\.{key}: a deterministic dimension "
        r"must not carry judge fields",
    ):
        validate_record(rec)


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (-1, "must be non-negative"),
        (-0.5, "must be non-negative"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        (True, "must be a finite non-negative number or null"),
        ("12", "must be a finite non-negative number or null"),
    ],
)
def test_bad_kpi_is_rejected(value: object, rule: str) -> None:
    rec = make_record()
    rec["kpis"]["token_input"] = value
    with pytest.raises(ValidationError, match=rf"^kpis\.token_input: {rule}"):
        validate_record(rec)


def test_unknown_kpi_is_rejected() -> None:
    rec = make_record()
    rec["kpis"]["score"] = 3
    with pytest.raises(ValidationError, match=r"^kpis\.score: unknown KPI"):
        validate_record(rec)


@pytest.mark.parametrize(
    ("path", "value", "pattern"),
    [
        (
            ("dimensions", 0, "status"),
            "passed",
            r"dimensions\[0\] \(verification-evidence\)\.status: must be one of",
        ),
        (
            ("dimensions", 0, "method"),
            "llm",
            r"dimensions\[0\] \(verification-evidence\)\.method: must be one of",
        ),
        (("dimensions", 1, "score"), True, r"\.score: must be a number or null"),
        (("dimensions", 1, "evidence"), None, r"\.evidence: must be a string"),
        (("model", "source"), "guess", r"^model\.source: must be one of"),
        (("record_kind",), "other", r"^record_kind: must be 'session-eval'"),
        (("standard_version",), "x/2", r"^standard_version: must be"),
        (("schema_version",), 2, r"^schema_version: must be 1"),
        (("run_id",), "", r"^run_id: must be a non-empty string"),
        (("timestamp",), "yesterday", r"^timestamp: must be ISO-8601"),
        (("session_id",), "   ", r"^session_id: must be a non-empty string"),
        (("provenance", "rubric_sha256"), "", r"^provenance\.rubric_sha256: must be a non-empty"),
        (("handle",), "", r"^handle: must be a non-empty string or null"),
        (("anonymized",), "yes", r"^anonymized: must be true or false"),
        (("dimensions",), [], r"^dimensions: must hold at least one"),
    ],
)
def test_contract_violations_name_field_and_rule(path: tuple, value: object, pattern: str) -> None:
    rec = make_record()
    target = rec
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(ValidationError, match=pattern):
        validate_record(rec)


def test_duplicate_dimension_id_is_rejected() -> None:
    rec = make_record()
    rec["dimensions"].append(copy.deepcopy(rec["dimensions"][0]))
    with pytest.raises(ValidationError, match=r"\.id: duplicate dimension id"):
        validate_record(rec)


@pytest.mark.parametrize("key", ["provenance", "model", "harness", "session_id", "timestamp"])
def test_missing_required_field_is_named(key: str) -> None:
    rec = make_record()
    del rec[key]
    with pytest.raises(ValidationError, match=rf"^{key}: "):
        validate_record(rec)


@pytest.mark.parametrize("key", REQUIRED_TOP_LEVEL_KEYS)
def test_every_required_top_level_field_is_refused_when_missing(key: str) -> None:
    """QA: validate_record filled defaults instead of refusing (SPEC section 2: all required)."""
    rec = make_record()
    del rec[key]
    with pytest.raises(ValidationError, match=rf"^{key}: required field is missing"):
        validate_record(rec)


@pytest.mark.parametrize("key", ["schema_version", "handle", "anonymized"])
def test_only_the_marked_defaults_are_filled_on_the_write_path(key: str) -> None:
    rec = make_record()
    del rec[key]
    out = validate_record(rec)
    assert out == make_record()


def test_absent_kpis_block_is_refused_not_filled() -> None:
    rec = make_record()
    del rec["kpis"]
    with pytest.raises(ValidationError, match=r"^kpis: required field is missing"):
        validate_record(rec)


def test_null_kpis_block_is_refused_not_filled() -> None:
    rec = make_record()
    rec["kpis"] = None
    with pytest.raises(ValidationError, match=r"^kpis: must be an object with the six KPI keys"):
        validate_record(rec)


@pytest.mark.parametrize("key", KPI_KEYS)
def test_missing_kpi_key_is_refused_not_filled(key: str) -> None:
    rec = make_record()
    del rec["kpis"][key]
    with pytest.raises(ValidationError, match=rf"^kpis\.{key}: required KPI is missing"):
        validate_record(rec)


@pytest.mark.parametrize("key", ["advisory", "calibration_status"])
def test_judge_dimension_without_firewall_field_is_refused_not_filled(key: str) -> None:
    rec = make_record()
    del rec["dimensions"][-1][key]
    with pytest.raises(
        ValidationError,
        match=rf"^dimensions\[3\] \(instruction-adherence\)\.{key}: required field is missing: "
        rf"a judge dimension must carry {key}",
    ):
        validate_record(rec)


@pytest.mark.parametrize(
    ("block", "key"),
    [("provenance", "engine_commit"), ("harness", "host_class"), ("harness", "hostname_hash")],
)
def test_missing_nullable_nested_field_is_refused(block: str, key: str) -> None:
    rec = make_record()
    del rec[block][key]
    with pytest.raises(ValidationError, match=rf"^{block}\.{key}: required field is missing"):
        validate_record(rec)


def test_normalize_then_validate_still_reads_what_validate_alone_refuses() -> None:
    """The read path keeps filling the defaults: a sparse stored record reads, never raises."""
    rec = make_record()
    del rec["kpis"]
    del rec["dimensions"][-1]["advisory"]
    del rec["dimensions"][-1]["calibration_status"]
    del rec["harness"]["hostname_hash"]
    out = validate_record(normalize_record(rec))
    assert out["kpis"] == dict.fromkeys(KPI_KEYS)
    assert out["dimensions"][-1]["advisory"] is True
    assert out["dimensions"][-1]["calibration_status"] == "uncalibrated"
    assert out["harness"]["hostname_hash"] is None


def test_non_object_record_is_rejected() -> None:
    with pytest.raises(ValidationError, match=r"^record: must be a JSON object"):
        validate_record(["not", "a", "record"])


# ---------------------------------------------------------------------------------- normalize


def test_normalize_fills_the_contract_defaults() -> None:
    rec = make_record(handle="octo")
    for key in ("schema_version", "handle", "anonymized"):
        del rec[key]
    del rec["kpis"]["carryover"]
    del rec["dimensions"][-1]["advisory"]
    del rec["dimensions"][-1]["calibration_status"]
    out = normalize_record(rec)
    assert out["schema_version"] == 1
    assert out["handle"] is None
    assert out["anonymized"] is True
    assert out["kpis"]["carryover"] is None
    assert out["dimensions"][-1]["advisory"] is True
    assert out["dimensions"][-1]["calibration_status"] == "uncalibrated"
    assert "advisory" not in out["dimensions"][0]  # deterministic dimensions get nothing


def test_normalize_keeps_a_present_handle_and_derives_anonymized() -> None:
    rec = make_record(handle="octo")
    del rec["anonymized"]
    out = normalize_record(rec)
    assert out["handle"] == "octo"
    assert out["anonymized"] is False


def test_normalize_turns_non_finite_numbers_into_null_never_zero() -> None:
    rec = make_record()
    rec["kpis"]["token_output"] = math.inf  # what json reads for 1e400
    rec["dimensions"][1]["score"] = math.nan
    out = normalize_record(rec)
    assert out["kpis"]["token_output"] is None
    assert out["dimensions"][1]["score"] is None
    assert validate_record(out)["kpis"]["token_output"] is None


def test_normalize_without_kpis_gives_all_null() -> None:
    rec = make_record()
    del rec["kpis"]
    assert normalize_record(rec)["kpis"] == dict.fromkeys(KPI_KEYS)


def test_normalize_does_not_mutate_input() -> None:
    rec = make_record()
    del rec["schema_version"]
    snapshot = json.dumps(rec, sort_keys=True)
    normalize_record(rec)
    assert json.dumps(rec, sort_keys=True) == snapshot


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
record_like = st.fixed_dictionaries(
    {},
    optional={
        "kpis": json_values,
        "dimensions": st.lists(
            st.fixed_dictionaries(
                {}, optional={"method": st.sampled_from(["judge", "x"]), "score": json_values}
            )
            | json_values,
            max_size=3,
        ),
        "handle": json_values,
        "provenance": json_values,
        "harness": json_values,
        "anonymized": json_values,
    },
)


@given(st.one_of(json_values, record_like))
@pytest.mark.slow
def test_normalize_never_raises(value: object) -> None:
    out = normalize_record(value)
    assert isinstance(out, dict)
    assert out["schema_version"] == 1 or "schema_version" in (
        value if isinstance(value, dict) else {}
    )


# ---------------------------------------------------------------------------------- projection


def test_submission_projection_is_the_fixed_whitelist() -> None:
    rec = make_record()
    rec["prompt"] = "You are a judge..."
    rec["metrics_dir"] = "/home/someone/project/.orchestrator/metrics"
    rec["provenance"]["rubric_path"] = "/home/someone/rubrics/rubric-v2.md"
    rec["harness"]["cwd"] = "/home/someone/project"
    rec["dimensions"][0]["prompt"] = "secret prompt"
    out = project_submission(rec)
    assert list(out) == [
        "schema_version",
        "record_kind",
        "run_id",
        "session_id",
        "standard_version",
        "rubric_version",
        "provenance",
        "model",
        "harness",
        "kpis",
        "dimensions",
        "handle",
        "anonymized",
        "timestamp",
    ]
    assert out["provenance"] == {"rubric_sha256": "ab" * 32, "engine_commit": None}
    assert set(out["harness"]) == {"plugin_version", "platform", "host_class", "hostname_hash"}
    assert out["kpis"] == rec["kpis"]
    for dim in out["dimensions"]:
        allowed = {"id", "method", "status", "score"}
        if dim["method"] == "judge":
            allowed |= {"advisory", "calibration_status"}
        assert set(dim) == allowed
    text = json.dumps(out)
    for leaked in ('"evidence"', "/home/someone", "secret prompt", "You are a judge"):
        assert leaked not in text
    for dim in rec["dimensions"]:
        assert dim["evidence"] not in text


def test_submission_projection_refuses_an_invalid_record() -> None:
    rec = make_record()
    rec["harness"]["hostname_hash"] = "my-laptop"
    with pytest.raises(ValidationError, match=r"harness\.hostname_hash"):
        project_submission(rec)


def test_submission_projection_keeps_judge_firewall_fields() -> None:
    out = project_submission(make_record())
    judge = [d for d in out["dimensions"] if d["method"] == "judge"]
    assert judge == [
        {
            "id": "instruction-adherence",
            "method": "judge",
            "status": "pass",
            "score": None,
            "advisory": True,
            "calibration_status": "uncalibrated",
        }
    ]


REFERENCE = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
MINTED = f"calibrated:gold-ia-v1:{REFERENCE[:8]}"


def test_a_minted_status_is_accepted_only_with_its_verified_reference() -> None:
    """validate_record is pure: a minted status needs exactly (dimension, status, reference)
    among the verified certificates passed in, for the judge identity that earned it; the
    default accepts 'uncalibrated' only."""
    from record_factory import judge_block

    from evalkit.record.calibration_status import AcceptedCalibrations
    from evalkit.record.judging import identity_sha256, judge_identity

    earned = {REFERENCE: identity_sha256(judge_identity(judge_block()))}
    accepted = AcceptedCalibrations(
        frozenset({("instruction-adherence", MINTED, REFERENCE)}), identities=earned
    )
    rec = make_record()
    rec["dimensions"][-1]["calibration_status"] = MINTED
    rec["dimensions"][-1]["judge"] = judge_block()
    with pytest.raises(ValidationError, match=r"calibration_status: .*calibration_ref=None"):
        validate_record(rec, accepted=accepted)  # no reference: refused
    rec["dimensions"][-1]["calibration_ref"] = REFERENCE
    assert validate_record(rec, accepted=accepted)["dimensions"][-1]["calibration_status"] == MINTED
    unjudged = copy.deepcopy(rec)
    del unjudged["dimensions"][-1]["judge"]
    with pytest.raises(ValidationError, match=r"for this judge identity"):
        validate_record(unjudged, accepted=accepted)  # the same claim, no judge that earned it
    with pytest.raises(ValidationError, match=r"is not an accepted calibration status"):
        validate_record(rec)  # nothing verified was passed in
    for forged in (REFERENCE[:8], REFERENCE[:8] + "0" * 56, REFERENCE.upper()):
        other = copy.deepcopy(rec)
        other["dimensions"][-1]["calibration_ref"] = forged
        with pytest.raises(ValidationError, match=r"calibration_status"):
            validate_record(other, accepted=accepted)
    rec["dimensions"][-1]["id"] = "report-quality"  # verified for another dimension only
    with pytest.raises(ValidationError, match=r"\(report-quality\)\.calibration_status"):
        validate_record(rec, accepted=accepted)


def test_a_refused_certificate_is_named_with_its_reason() -> None:
    from evalkit.record.calibration_status import AcceptedCalibrations

    reason = "calibration certificate x.json: refused: its labels do not graduate"
    accepted = AcceptedCalibrations(refused=((f"{REFERENCE}.json", reason),))
    rec = make_record()
    rec["dimensions"][-1].update(calibration_status=MINTED, calibration_ref=REFERENCE)
    with pytest.raises(ValidationError, match=r"its certificate was refused: .*do not graduate"):
        validate_record(rec, accepted=accepted)


@pytest.mark.parametrize(
    "entry",
    [("instruction-adherence", MINTED, REFERENCE[:8]), ("instruction-adherence", "pass", REFERENCE),
     ("instruction-adherence", MINTED, "f" * 64), ("instruction-adherence", MINTED)],
)  # fmt: skip
def test_accepted_calibrations_hold_only_well_formed_entries(entry: tuple) -> None:
    from evalkit.errors import EvalkitError
    from evalkit.record.calibration_status import AcceptedCalibrations

    with pytest.raises(EvalkitError, match="accepted calibration"):
        AcceptedCalibrations(frozenset({entry}))


def test_validation_reads_no_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A registry file named by the old environment variable has no effect (finding 3)."""
    registry = tmp_path / "registry.jsonl"
    entry = {"dimension_id": "instruction-adherence", "calibration_status": MINTED,
             "calibration_ref": REFERENCE, "graduated": True}  # fmt: skip
    registry.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    monkeypatch.setenv("EVALKIT_CALIBRATION_REGISTRY", str(registry))
    rec = make_record()
    rec["dimensions"][-1].update(calibration_status=MINTED, calibration_ref=REFERENCE)
    with pytest.raises(ValidationError, match=r"is not an accepted calibration status"):
        validate_record(rec)
