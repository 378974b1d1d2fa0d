"""The fast JSON path reads every line exactly as the exact reader does (issue 13 item 4).

``evalkit.ledger.parse.decode_line`` parses with orjson and keeps its value only where it
cannot differ from ``evalkit.js.numbers.decode_json_value`` (the exact reader, JavaScript's
``JSON.parse`` semantics). Checked here value for value, types and key order included, and
refusal for refusal (same message): on a corpus of the known deviations, on generated lines
(hypothesis), and on every conformance ledger, whose verdicts must not change. The bulk
timestamp parser is checked against the one-by-one parser the same way, and the core is shown
to work without orjson installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, conformance_cases, require_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_strategies import json_values

from evalkit.js.numbers import JSONLineError, decode_json_value
from evalkit.js.timestamps import parse_timestamps, timestamp_ms
from evalkit.js.values import JS_WHITESPACE
from evalkit.ledger import parse as ledger_parse
from evalkit.ledger.reader import JsonlFile, read_jsonl, read_metrics_dir
from evalkit.resolve import compute_window, compute_windows
from evalkit.scoring.engine import score_ledger

if ledger_parse.fast_loads is None:
    pytest.fail("orjson is not installed: the fast path cannot be checked (install evalkit[fast])")

CORPUS = [
    '{"a":1}', '{"a":1.0}', '{"a":1e2}', '{"a":1E+2}', '{"a":-0}', '{"a":-0.0}', "-0", "1.0",
    "9007199254740992", "9007199254740993", "-9007199254740993", "[9007199254740993]",
    '{"a":18446744073709551615}', '{"a":18446744073709551616}', "123456789012345678901234567890",
    "1e400", "-1e400", "[1e400]", "1E400", "2.5e-324", "5e-324", "1.7976931348623157e308",
    "1.7976931348623159e308", "0.1", '"\\ud800"', '{"\\ud800":1}', '"\\udc00\\ud800"',
    '"\\ud83d\\ude00"', '"\U0001f600"', "NaN", "Infinity", "-Infinity", "[NaN]",
    '"a\x00b"', '"\\u0000"', "\x00", '{"a":1,"a":2}', '{"a":1,"b":2,"a":3}', '{"a":{"b":1,"b":[2]}}',
    "\ufeff{}", '{"a":1}\ufeff', '{"a":"\ufeff"}', '{ "a" : 1 }', '{\t"a":\n1}', '{"a":1}\x0c',
    '{"a":\x0c1}', '{"a":\u00a01}', "01", "1.", ".5", "+1", "[1,]", '{"a":1,}', '{"a" 1}',
    "{'a':1}", "true", "tru", "null", "nul", '""', '"\\/"', '"\\x"', '"\u2028"', '"\x7f"',
    "[]", "{}", "[[],{}]", '{"a":[1,{"b":null}]}', '{"a":1}{"b":2}', "1 2", "[1,2",
    "[" * 63 + "]" * 63, "[" * 64 + "]" * 64, "[" * 65 + "]" * 65, "[" * 900 + "]" * 900,
    "[" * 1100 + "]" * 1100, '{"a":' * 70 + "1" + "}" * 70, '{"a":true,"b":false,"c":null}',
    '{"timestamp":"2026-09-19T08:00:00.000Z","event":"x","exit_code":0}',
    '{"exit_code":1.5}', '{"n":[1,2,3.0]}', '{"big":[9007199254740993]}', '"\\"quoted\\""',
]  # fmt: skip


def _tokens(value: Any) -> list[tuple[str, Any]]:
    """``value`` flattened, each token with its exact type (key order kept), without
    recursion: a line may nest hundreds of levels deep."""
    out: list[tuple[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if item.__class__ is dict:
            out.append(("{", len(item)))
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(("key", key))
        elif item.__class__ is list:
            out.append(("[", len(item)))
            stack.extend(reversed(item))
        elif item.__class__ is tuple:
            out.append(item)
        else:
            out.append((type(item).__name__, repr(item)))
    return out


def _same_reading(text: str) -> None:
    """decode_line(text) is decode_json_value(text): the same value (types, key order) or
    the same refusal, word for word."""
    try:
        exact: Any = decode_json_value(text)
    except JSONLineError as exc:
        with pytest.raises(JSONLineError) as info:
            ledger_parse.decode_line(text)
        assert str(info.value) == str(exc), text
        return
    fast = ledger_parse.decode_line(text)
    assert _tokens(fast) == _tokens(exact), text


@pytest.mark.parametrize("text", CORPUS)
def test_the_corpus_reads_the_same(text: str) -> None:
    _same_reading(text)
    _same_reading(text.strip(JS_WHITESPACE))


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_VALUES = json_values(_SCALARS)
_NOISE = st.sampled_from(
    [*' \t\r\n\x0c\x00\ufeff\u00a0,:[]{}"\\.eE+-0123456789u', "\\ud800", "\\udc00", "1e400", "NaN"]
)


# The composites' fixed strategies are built once, not on every draw (a strategy built anew
# is validated anew each time): the same draws for the same seed, in less time.
_ASCII = st.booleans()
_SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (",\t", ":\n")])
_EDITS = st.integers(min_value=0, max_value=3)
_UP_TO_TWO = st.integers(min_value=0, max_value=2)


@st.composite
def _lines(draw: st.DrawFn) -> str:
    value = draw(_VALUES)
    text = json.dumps(value, ensure_ascii=draw(_ASCII), separators=draw(_SEPARATORS))
    for _ in range(draw(_EDITS)):  # a few edits at random places
        at = draw(st.integers(min_value=0, max_value=len(text)))
        cut = draw(_UP_TO_TWO)
        text = text[:at] + draw(_NOISE) + text[at + cut :]
    return text


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lines())
@pytest.mark.slow
def test_generated_lines_read_the_same(text: str) -> None:
    _same_reading(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(max_size=30) | st.sampled_from(["2026-09-19T08:00:00.000Z"]), max_size=20))
@pytest.mark.slow
def test_generated_timestamps_parse_the_same_in_bulk(texts: list[str]) -> None:
    assert parse_timestamps(texts) == [timestamp_ms(t) for t in texts]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(*(st.integers(min_value=0, max_value=99) for _ in range(6)), st.integers(0, 999)),
        max_size=30,
    )
)
@pytest.mark.slow
def test_writer_shaped_timestamps_parse_the_same_in_bulk(fields: list[tuple[int, ...]]) -> None:
    """Every 24-character shape, valid or not (month 13, day 31 of a short month, hour 24)."""
    texts = [
        f"20{y:02d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"
        for y, mo, d, h, mi, s, ms in fields
    ]
    assert parse_timestamps(texts) == [timestamp_ms(t) for t in texts]


_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=25)
_FRACTION = st.text(alphabet="0123456789", min_size=0, max_size=25)
_EXPONENT = st.none() | st.integers(min_value=-345, max_value=320)
_SIGN = st.sampled_from(["", "-"])


@st.composite
def _float_literals(draw: st.DrawFn) -> str:
    """A JSON number literal with a fraction or an exponent: long mantissas, halfway and
    subnormal exponents, literals that overflow or underflow a double."""
    digits = draw(_DIGITS)
    digits = digits.lstrip("0") or "0"
    fraction = draw(_FRACTION)
    exponent = draw(_EXPONENT)
    if not fraction and exponent is None:
        fraction = "5"
    sign = draw(_SIGN)
    return (
        sign
        + digits
        + (f".{fraction}" if fraction else "")
        + ("" if exponent is None else f"e{exponent}")
    )


@settings(max_examples=1500, deadline=None)
@given(st.lists(_float_literals(), min_size=1, max_size=4))
@pytest.mark.slow
def test_fast_parsed_floats_are_the_exact_readers_floats(literals: list[str]) -> None:
    """Issue 25: a line's non-integral floats are kept from the fast parse (orjson), so they
    must be the very doubles the exact reader (float() of the literal, JS semantics) gives,
    bit for bit; integral, overflowing and underflowing ones go to the exact reader."""
    # at the first level of the object and nested (two checks, one inlined)
    lines = [f'{{"event":"x","v":{lit}}}'.encode() for lit in literals]
    lines += [f'{{"event":"x","o":{{"w":[{lit}]}}}}'.encode() for lit in literals]
    parsed = ledger_parse.parse_data("t.jsonl", b"\n".join(lines), {})
    exact = [decode_json_value(line.decode()) for line in lines]
    assert [repr(_tokens(v)) for v in parsed.records] == [repr(_tokens(v)) for v in exact]


_STAMP = (
    st.sampled_from(["2026-09-19T08:00:00.000Z", "2026-09-19T09:30:00.000Z", "2026-09-19"])
    | st.text(max_size=12)
    | st.integers()
    | st.none()
    | st.lists(st.sampled_from(["2026-09-19", "x"]), max_size=2)
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({}, optional={"started_at": _STAMP, "completed_at": _STAMP}),
        max_size=12,
    )
)
def test_a_batch_of_windows_is_each_record_s_window(records: list[dict[str, object]]) -> None:
    """The batch's windows (timestamps parsed in bulk) are compute_window's, one by one."""
    assert compute_windows(records) == [compute_window(r) for r in records]


_BYTES_NOISE = st.sampled_from(
    [b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\xe2\x82", b"\xef\xbb\xbf", b"\xc2\xa0", b"\r"]
) | st.sampled_from([b" ", b"\t", b"\x0b", b"\xe2\x80\xa8", b"\\u0061", b"{", b"}", b"\x00"])


_OBJECT_MOSTLY = st.integers(0, 3)
_OBJECTS = st.dictionaries(st.text(max_size=4), _VALUES, max_size=4)
_LINES = _lines()


@st.composite
def _raw_lines(draw: st.DrawFn) -> bytes:
    """A line's bytes: a generated JSON text (most often an object), sometimes with bytes
    inserted that are not valid UTF-8, a BOM, NBSP, CR, other whitespace, braces or NUL."""
    if draw(_OBJECT_MOSTLY):
        value = draw(_OBJECTS)
        text = json.dumps(value, ensure_ascii=draw(_ASCII))
    else:
        text = draw(_LINES)
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(_UP_TO_TWO)):
        at = draw(st.sampled_from([0, len(data), draw(st.integers(0, len(data)))]))
        data = data[:at] + draw(_BYTES_NOISE) + data[at:]
    return data


def _read_both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The file ``data`` read with the fast path and by the exact reader alone."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        path.write_bytes(data)
        fast = read_jsonl(path)
        with monkeypatch.context() as patch:
            patch.setattr(ledger_parse, "fast_loads", None)
            exact = read_jsonl(path)
    return fast, exact


@settings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(_raw_lines(), max_size=8), end=st.sampled_from([b"\n", b"\r\n"]))
@pytest.mark.slow
def test_generated_files_read_the_same(
    lines: list[bytes], end: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole file's bytes (invalid UTF-8, BOMs, CRLF, blank lines included): the same lines,
    values, diagnostics, event records and unreadable lines with and without the fast path,
    and the records and unreadable lines collected while parsing are those the lines give."""
    fast, exact = _read_both(end.join(lines) + end, monkeypatch)
    assert fast.state == exact.state
    assert [(x.line_no, x.error, x.padded, _tokens(x.value)) for x in fast.lines] == [
        (x.line_no, x.error, x.padded, _tokens(x.value)) for x in exact.lines
    ]
    assert fast.diagnostics == exact.diagnostics
    for f in (fast, exact):
        from_lines = JsonlFile(f.path, f.state, f.lines, f.diagnostics)  # computed from lines
        assert [_tokens(r) for r in f.event_records] == [
            _tokens(r) for r in from_lines.event_records
        ]
        assert f.unreadable_lines == from_lines.unreadable_lines


@pytest.mark.parametrize(
    "spelling",
    [
        "orchestrator.events.rotated",
        "orchestrator.events.rot\\u0061ted",  # an escape: the name is not in the bytes
        "\\u006frchestrator\\u002eevents\\u002erotated",
    ],
)
def test_a_tombstone_is_found_however_it_is_spelled(tmp_path: Path, spelling: str) -> None:
    """A file whose bytes cannot spell a tombstone is not scanned for one: the shortcut must
    never miss a tombstone, escaped or not."""
    line = json.dumps({"event": "SPELLING", "archived_as": str(tmp_path / "gone.jsonl")})
    line = line.replace("SPELLING", spelling)
    (tmp_path / "sessions.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "events.jsonl").write_text(line + "\n", encoding="utf-8")
    ledger = read_metrics_dir(tmp_path)
    assert ledger.rotation_gaps == (str(tmp_path / "gone.jsonl"),)


def _lines_of(path: Path) -> Any:
    return read_metrics_dir(path)


@pytest.mark.parametrize("case", conformance_cases())
def test_every_conformance_ledger_reads_and_scores_the_same(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = require_shared("conformance", *case.split("/"))
    fast = read_metrics_dir(metrics)
    verdicts = {r: score_ledger(metrics, r) for r in ("rubric-v1", "rubric-v2")}
    monkeypatch.setattr(ledger_parse, "fast_loads", None)  # the exact reader alone
    exact = read_metrics_dir(metrics)
    for a, b in zip(
        [fast.sessions, *fast.event_sources], [exact.sessions, *exact.event_sources], strict=True
    ):
        assert [(x.line_no, x.error, x.padded) for x in a.lines] == [
            (x.line_no, x.error, x.padded) for x in b.lines
        ]
        assert all(
            _tokens(x.value) == _tokens(y.value) for x, y in zip(a.lines, b.lines, strict=True)
        )
    assert fast.diagnostics == exact.diagnostics
    for rubric, frame in verdicts.items():
        assert frame.equals(score_ledger(metrics, rubric)), rubric


_NO_ORJSON = """
import sys
sys.modules["orjson"] = None  # as if the fast extra were not installed
import evalkit
from evalkit.ledger import parse as ledger_parse
assert ledger_parse.fast_loads is None
record = evalkit.score_session(sys.argv[1], timestamp="2026-10-01T00:00:00.000Z")
print(record.to_dict()["provenance"]["record_sha256"])
"""


@pytest.mark.slow
def test_the_core_works_without_orjson(tmp_path: Path) -> None:
    import shutil

    import evalkit

    metrics = tmp_path / "m"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), metrics)
    out = subprocess.run(
        [sys.executable, "-c", _NO_ORJSON, str(metrics)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    with_fast = evalkit.score_session(metrics, timestamp="2026-10-01T00:00:00.000Z").to_dict()
    assert out.stdout.strip() == with_fast["provenance"]["record_sha256"]


def test_a_plain_event_line_is_read_by_the_fast_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken: an event line never reaches the exact reader."""

    def exact_reader_called(text: str) -> Any:
        raise AssertionError(f"the exact reader was asked for {text!r}")

    monkeypatch.setattr(ledger_parse, "decode_json_value", exact_reader_called)
    line = '{"timestamp":"2026-09-19T08:00:00.000Z","event":"x","exit_code":0,"tags":["a",null]}'
    assert ledger_parse.decode_line(line) == json.loads(line)
    parsed = ledger_parse.parse_data("f", line.encode(), {})
    assert [ln.value for ln in parsed.lines] == parsed.records == [json.loads(line)]
    with pytest.raises(AssertionError, match="exact reader was asked"):
        ledger_parse.decode_line('{"exit_code":1.0}')  # a float: the exact reader decides
