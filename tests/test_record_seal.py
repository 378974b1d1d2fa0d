"""The record's seal (provenance.record_sha256) and the scored inputs' hash (inputs_sha256).

Issue 10, finding 5 finished: a run input (model, handle, harness) changed after the record was
written is caught, because the engine seals every record it writes; the seal is recomputable
offline from the documented canonical form (checked here with an independent recipe), and a
record changed after it was written is refused by validation, with that reason.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import json_values
from record_factory import TIMESTAMP, make_record

import evalkit
from evalkit.errors import ValidationError
from evalkit.journal import reader as journal
from evalkit.journal.reader import DiagnosticKind
from evalkit.record.contract import project_submission, validate_record
from evalkit.record.seal import SealMismatchError, record_sha256, seal_record, without_seal


def _offline_seal(rec: dict[str, Any]) -> str:
    """The recipe of evalkit.record.seal's docstring, written out independently."""
    body = copy.deepcopy(rec)
    del body["provenance"]["record_sha256"]
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), target)
    return target


def test_the_engine_seals_last_over_everything_else(metrics: Path) -> None:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP, handle="ada").to_dict()
    assert list(rec["provenance"]) == [
        "rubric_sha256",
        "engine_commit",
        "inputs_sha256",
        "record_sha256",
    ]
    assert rec["provenance"]["record_sha256"] == _offline_seal(rec) == record_sha256(rec)
    assert validate_record(rec) == rec


def test_a_sealed_record_changed_afterwards_is_refused_with_that_reason() -> None:
    rec = seal_record(make_record())
    validate_record(rec)
    for change in (
        lambda r: r["model"].update(id="another-model"),
        lambda r: r.update(handle="someone", anonymized=False),
        lambda r: r["harness"].update(platform="win32"),
        lambda r: r["provenance"].update(inputs_sha256="a" * 64),
        lambda r: r.pop("schema_version"),  # a defaulted key: still part of what was sealed
    ):
        changed = copy.deepcopy(rec)
        change(changed)
        with pytest.raises(SealMismatchError, match=r"^provenance\.record_sha256: the record was "):
            validate_record(changed)


@pytest.mark.parametrize("seal", ["", "ABC", "a" * 63, 42, None])
def test_a_seal_that_is_no_sha256_is_refused(seal: Any) -> None:
    rec = make_record()
    rec["provenance"]["record_sha256"] = seal
    with pytest.raises(ValidationError, match=r"^provenance\.record_sha256: must be the 64"):
        validate_record(rec)


def test_records_without_a_seal_stay_valid() -> None:
    rec = make_record()  # as the reference engine writes them: no seal, no inputs hash
    assert "record_sha256" not in validate_record(rec)["provenance"]


@pytest.mark.parametrize("inputs", ["", "xyz", "A" * 64, 1, None])
def test_an_inputs_hash_that_is_no_sha256_is_refused(inputs: Any) -> None:
    rec = make_record()
    rec["provenance"]["inputs_sha256"] = inputs
    with pytest.raises(ValidationError, match=r"^provenance\.inputs_sha256: must be"):
        validate_record(rec)


def test_lone_surrogates_are_sealed_as_escapes() -> None:
    rec = make_record(session_id="s\ud800x")
    sealed = seal_record(rec)
    body = without_seal(sealed)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    escaped = text.replace("\ud800", "\\ud800")  # what evalkit.files.input.dumps writes
    assert sealed["provenance"]["record_sha256"] == hashlib.sha256(escaped.encode()).hexdigest()
    validate_record(sealed)


def test_a_non_finite_number_cannot_be_sealed() -> None:
    rec = make_record()
    rec["kpis"]["token_input"] = float("inf")
    assert record_sha256(rec) is None
    assert "record_sha256" not in seal_record(rec)["provenance"]


def test_the_projection_keeps_the_inputs_hash_and_drops_the_seal(metrics: Path) -> None:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    out = project_submission(rec)
    assert out["provenance"] == {
        "rubric_sha256": rec["provenance"]["rubric_sha256"],
        "engine_commit": rec["provenance"]["engine_commit"],
        "inputs_sha256": rec["provenance"]["inputs_sha256"],
    }


def test_a_journal_line_edited_after_it_was_written_is_read_as_changed(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    stored = journal.append(path, make_record())
    edited = copy.deepcopy(stored)
    edited["model"]["id"] = "another-model"
    path.write_text(json.dumps(edited) + "\n", encoding="utf-8")
    got = journal.read(path)
    assert got.records == []
    [diag] = got.diagnostics
    assert diag.kind is DiagnosticKind.CHANGED and diag.run_id == stored["run_id"]
    assert "changed after it was written" in diag.reason


def test_append_seals_what_it_writes_whatever_seal_it_was_given(tmp_path: Path) -> None:
    """A record changed before it is appended (a judge merged in) is sealed as written."""
    rec = seal_record(make_record(judge=False))
    rec["dimensions"].append(make_record()["dimensions"][-1])  # the judge dimension
    out = journal.append(tmp_path / "eval.jsonl", rec)
    assert out["provenance"]["record_sha256"] == _offline_seal(out)
    assert journal.read(tmp_path / "eval.jsonl").records == [out]


def test_inputs_hash_equal_iff_the_scored_inputs_are(metrics: Path) -> None:
    one = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    other_run = evalkit.score_session(
        metrics, timestamp="2026-10-02T00:00:00.000Z", model_id="m", handle="h"
    ).to_dict()
    # run inputs (timestamp, model, handle) are not scored inputs
    assert one["provenance"]["inputs_sha256"] == other_run["provenance"]["inputs_sha256"]
    v1 = evalkit.score_session(metrics, rubric="rubric-v1", timestamp=TIMESTAMP).to_dict()
    assert v1["provenance"]["inputs_sha256"] != one["provenance"]["inputs_sha256"]  # v1 reads less
    lines = (metrics / "sessions.jsonl").read_text("utf-8").splitlines()
    record = [json.loads(x) for x in lines if one["session_id"] in x][-1]
    with (metrics / "sessions.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({**record, "total_agents": 41}) + "\n")  # the session rewritten
    again = evalkit.score_session(metrics, one["session_id"], timestamp=TIMESTAMP).to_dict()
    assert again["provenance"]["inputs_sha256"] != one["provenance"]["inputs_sha256"]


# -- the canonical form written by orjson where it is the same (issue 25) ---------------------

_JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, 0.0001, 9.99e-05, 1e16, 9999999999999998.0, 1e-7, -0.0, 5e-324])
    | st.text(max_size=6)
)
_JSON_VALUES = json_values(_JSON_LEAVES)


def test_orjson_writes_every_code_point_as_json_does() -> None:
    """The assumption the fast canonical form rests on, for every character a string can hold
    (lone surrogates aside: orjson refuses them, and json then writes them)."""
    import orjson

    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    # all of them in one list, written by both: equal bytes mean equal bytes for each string
    # (a string literal's end is fixed by its own bytes); one call each, not a million
    written = json.dumps(chars, ensure_ascii=False, separators=(",", ":")).encode()
    together = orjson.dumps(chars) == written
    differ = [] if together else [
        ord(c) for c in chars if orjson.dumps(c) != json.dumps(c, ensure_ascii=False).encode()
    ]  # fmt: skip
    assert together and differ == [], differ


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=6))
@pytest.mark.slow
def test_a_parsed_record_hashes_the_same_through_orjson(value: dict[str, Any]) -> None:
    """A value orjson parsed (finite) hashes to the json-written canonical form's sha256,
    floats of every form, keys in any script, nested included: the second implementation
    is the recipe of the module docstring."""
    from evalkit.files.input import parse_json_line

    text = json.dumps(value, ensure_ascii=False, allow_nan=False).encode()
    parsed, finite = parse_json_line(text)
    assert parsed == json.loads(text)
    body = json.dumps(
        parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()
    assert record_sha256({**parsed, "provenance": {}}, finite=finite) == record_sha256(
        {**parsed, "provenance": {}}
    )
    assert record_sha256(parsed, finite=finite) == hashlib.sha256(body).hexdigest()


@settings(max_examples=800, deadline=None)
@given(_JSON_VALUES, st.sampled_from(["", " ", "\t"]))
def test_a_line_reads_the_same_through_orjson_as_through_json(value: Any, pad: str) -> None:
    """parse_json_line gives parse_json's value, types included (an integer beyond 64 bits
    stays an integer), and says it was read by orjson only when that holds no NaN or
    infinity; a duplicate key keeps its last value as json does."""
    from evalkit.files.input import parse_json, parse_json_line

    for text in (
        (pad + json.dumps(value, ensure_ascii=False) + pad).encode(),
        b'{"a":1,"b":[2,{"a":3}],"a":' + json.dumps(value).encode() + b"}",
        b"[" + str(2**64 + 7).encode() + b",-" + str(2**70).encode() + b"]",
        b'{"kpis":{"x":1e400}}',  # infinity to json, refused by orjson
    ):
        got, finite = parse_json_line(text)
        want = parse_json(text)
        assert repr(got) == repr(want) and type(got) is type(want)
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
        if finite:
            json.dumps(got, allow_nan=False)  # raises for a NaN or an infinity


@settings(max_examples=3000, deadline=None)
@given(
    st.floats(min_value=1e-4, max_value=1e16, exclude_max=True)
    | st.floats(min_value=-1e16, max_value=-1e-4, exclude_min=True)
    | st.sampled_from([0.0, -0.0, 1e-4, -1e-4, 1e15, 9999999999999998.0, 0.1, 2.0**53])
)
def test_orjson_writes_a_float_as_repr_does_from_1e_4_to_1e16(x: float) -> None:
    """The first half of compact_bytes' rule: in that range orjson's float is repr's."""
    import orjson

    assert orjson.dumps(x).decode() == repr(x) == json.dumps(x)


@settings(max_examples=3000, deadline=None)
@given(
    st.floats(min_value=-1e-4, max_value=1e-4, exclude_min=True, exclude_max=True).filter(
        lambda x: x != 0
    )
    | st.floats(min_value=1e16, allow_infinity=False)
    | st.floats(max_value=-1e16, allow_infinity=False)
)
def test_every_other_float_is_written_in_a_form_other_float_form_finds(x: float) -> None:
    """The second half: outside that range json writes a digit, then ``e-`` or ``e+``, and
    orjson either that or a fraction starting ``0.0000``; other_float_form sees both."""
    import orjson

    from evalkit.files.input import other_float_form

    text = json.dumps(x).encode()
    assert re.search(rb"[0-9]e[-+]", text), text
    fast = orjson.dumps(x)
    assert re.search(rb"[0-9]e[-+]|0\.0000", fast), fast
    for data in (text, fast, b'{"k":[' + fast + b"]}", b'{"k":"' + fast + b'"}'):
        assert other_float_form(data), data
    assert not other_float_form(b'{"attribution":"time-window","e+":1,"x":1.5,"h":"3e5"}')


@settings(max_examples=800, deadline=None)
@given(_JSON_VALUES | st.tuples(_JSON_VALUES, _JSON_VALUES), st.text(max_size=3))
def test_the_journal_line_is_json_s_bytes_whoever_writes_it(value: Any, added: str) -> None:
    """compact_bytes, told json's canonical bytes of the value (before a string was added, as
    a seal is), writes what json writes, floats of every form, keys in any script."""
    from evalkit.files.input import compact_bytes, dumps_bytes

    record = {"x": value, "provenance": {}}
    canonical = dumps_bytes(record, sort_keys=True, separators=(",", ":"), allow_nan=False)
    record["provenance"]["record_sha256"] = added
    want = dumps_bytes(record, separators=(",", ":"))
    assert compact_bytes(record, canonical) == want
    assert compact_bytes(record, None) == want


def test_a_journal_line_with_a_lone_surrogate_or_a_huge_integer_is_json_s() -> None:
    """What orjson refuses (a lone surrogate, an integer past 64 bits) is written by json."""
    from evalkit.files.input import compact_bytes, dumps_bytes

    for record in ({"a": "\ud800x"}, {"a": 2**70}, {"a": [-(2**64)]}):
        canonical = dumps_bytes(record, sort_keys=True, separators=(",", ":"))
        assert compact_bytes(record, canonical) == dumps_bytes(record, separators=(",", ":"))


_ANY_LEAVES = _JSON_LEAVES | st.sampled_from([float("nan"), float("inf"), -float("inf")])


@settings(max_examples=800, deadline=None)
@given(json_values(_ANY_LEAVES) | st.tuples(_JSON_VALUES, _JSON_VALUES), st.booleans())
def test_canonical_bytes_are_json_s_bytes_or_json_s_error(value: Any, allow_nan: bool) -> None:
    """canonical_bytes writes exactly what json writes, keys sorted (orjson's bytes only
    where they are the same), and refuses what json refuses: a NaN or an infinity, which
    orjson would write as null, reads back unequal and goes to json; a tuple too."""
    from evalkit.files.input import canonical_bytes, dumps_bytes

    def written(encode: Any) -> bytes | str:
        try:
            return bytes(encode())
        except ValueError as exc:
            return f"ValueError: {exc}"

    want = written(
        lambda: dumps_bytes(value, sort_keys=True, separators=(",", ":"), allow_nan=allow_nan)
    )
    assert written(lambda: canonical_bytes(value, allow_nan=allow_nan)) == want


def test_a_record_holding_infinity_has_no_seal_whatever_parsed_it() -> None:
    """orjson would write infinity as null: only a value orjson parsed may be hashed by it,
    so a record holding one (json reads 1e400 as infinity) still cannot be sealed."""
    from evalkit.files.input import parse_json_line

    value, finite = parse_json_line(b'{"provenance":{},"kpis":{"x":1e400}}')
    assert not finite and value["kpis"]["x"] == float("inf")
    assert record_sha256(value, finite=finite) is None
    assert record_sha256({"provenance": {}, "x": float("nan")}) is None
