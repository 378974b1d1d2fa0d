"""parse_response: exactly one fenced json block, validated, always advisory and uncalibrated."""

from __future__ import annotations

import json

import pytest

from evalkit.errors import EvalkitError
from evalkit.judge import JudgeResponseError, parse_response

GOOD = {"id": "instruction-adherence", "status": "pass", "evidence": "rule 6", "score": None}


def block(payload: object) -> str:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return f"Here is my judgment.\n\n```json\n{body}\n```\n"


def stamped(**entry: object) -> dict:
    return {
        "method": "judge",
        "score": None,
        "advisory": True,
        "calibration_status": "uncalibrated",
    } | entry


def test_one_valid_block() -> None:
    assert parse_response(block([GOOD])) == [
        stamped(id="instruction-adherence", status="pass", evidence="rule 6")
    ]


def test_a_single_object_reads_as_an_array_of_one() -> None:
    assert parse_response(block(GOOD)) == parse_response(block([GOOD]))


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I think it passes.",
        json.dumps([GOOD]),  # bare JSON, no fence
        "```\n" + json.dumps([GOOD]) + "\n```",  # a fence, but not tagged json
        "```python\n" + json.dumps([GOOD]) + "\n```",
    ],
)
def test_no_json_block(reply: str) -> None:
    assert parse_response(reply) == []
    with pytest.raises(JudgeResponseError):
        parse_response(reply, strict=True)


def test_two_blocks_are_refused_even_when_both_agree() -> None:
    reply = block([GOOD]) + block([GOOD])
    assert parse_response(reply) == []
    with pytest.raises(JudgeResponseError, match="found 2"):
        parse_response(reply, strict=True)


@pytest.mark.parametrize("body", ["[{'id': 'instruction-adherence'}]", "[", "{]", "pass"])
def test_invalid_json(body: str) -> None:
    assert parse_response(block(body)) == []
    with pytest.raises(JudgeResponseError, match="not valid JSON"):
        parse_response(block(body), strict=True)


@pytest.mark.parametrize("payload", ["pass", 1, None, True])
def test_wrong_top_level_type(payload: object) -> None:
    assert parse_response(block(payload)) == []


@pytest.mark.parametrize(
    "entry",
    [
        "instruction-adherence",
        ["instruction-adherence", "pass"],
        GOOD | {"id": 7},
        GOOD | {"status": "PASS"},
        GOOD | {"status": "excellent"},
        GOOD | {"status": None},
        GOOD | {"evidence": None},
        GOOD | {"evidence": ["rule 6"]},
        GOOD | {"score": "0.9"},
        GOOD | {"score": True},
        GOOD | {"score": [1]},
    ],
)
def test_wrong_types_are_dropped(entry: object) -> None:
    assert parse_response(block([entry])) == []


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_scores_are_dropped(token: str) -> None:
    body = (
        f'[{{"id": "instruction-adherence", "status": "fail", "evidence": "e", "score": {token}}}]'
    )
    assert parse_response(block(body)) == []


def test_finite_score_kept() -> None:
    assert parse_response(block([GOOD | {"score": 0.5}]))[0]["score"] == 0.5
    assert (
        parse_response(block([{k: v for k, v in GOOD.items() if k != "score"}]))[0]["score"] is None
    )


def test_unknown_ids_dropped_and_report_quality_retired_in_v2() -> None:
    entries = [
        GOOD | {"id": "overall"},
        GOOD | {"id": "verification-evidence"},  # a deterministic id: never from a judge
        GOOD | {"id": "report-quality"},
        GOOD,
    ]
    assert [d["id"] for d in parse_response(block(entries))] == ["instruction-adherence"]
    assert [d["id"] for d in parse_response(block(entries), "rubric-v1")] == [
        "report-quality",
        "instruction-adherence",
    ]


def test_duplicates_keep_the_first_valid_entry() -> None:
    entries = [GOOD | {"status": "bogus"}, GOOD | {"status": "fail"}, GOOD | {"status": "pass"}]
    assert [d["status"] for d in parse_response(block(entries))] == ["fail"]


def test_the_model_cannot_claim_advisory_false_or_calibrated() -> None:
    entry = GOOD | {
        "advisory": False,
        "calibration_status": "calibrated:gold-v1:deadbeef",
        "method": "deterministic",
        "calibration_ref": "gold-v1",
    }
    (dim,) = parse_response(block([entry]))
    assert dim["advisory"] is True
    assert dim["calibration_status"] == "uncalibrated"
    assert dim["method"] == "judge"
    assert "calibration_ref" not in dim


def test_unknown_rubric_version_is_a_caller_error() -> None:
    with pytest.raises(EvalkitError, match="rubric-v9"):
        parse_response(block([GOOD]), "rubric-v9")


def test_non_text_reply() -> None:
    assert parse_response(None) == []  # type: ignore[arg-type]
    assert parse_response(b"```json\n[]\n```") == []  # type: ignore[arg-type]
