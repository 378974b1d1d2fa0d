"""The shared reader helpers: regular files only, bounded, strict text and JSON, safe output."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from hostile import fifo, in_child
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import EvalkitError
from evalkit.files import input as input_files
from evalkit.files.input import (
    MAX_JSON_NESTING,
    InputNotRegularError,
    InputTooLargeError,
    JsonInputError,
    clip,
    dumps,
    parse_json,
    read_bytes,
    read_stream,
    read_text,
    unreadable_reason,
)


def test_open_regular_names_every_kind_of_non_file(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    expected = {
        pipe: "is a named pipe (FIFO), not a regular file",
        "/dev/zero": "is a character device, not a regular file",
        str(tmp_path / "dir"): "is a directory, not a regular file",
        str(tmp_path / "dangling"): "a dangling symlink",
        str(tmp_path / "loop"): "a symlink loop",
        str(tmp_path / "missing"): "no such file",
    }
    for path, reason in expected.items():
        outcome = in_child(read_bytes, path, "input", timeout=20)
        assert outcome.kind == "raised" and outcome.evalkit_error, outcome
        assert outcome.message == f"input {path!r}: {reason}" or (
            outcome.message.startswith(f"input {path!r}: {reason}")
        )


def test_unreadable_reason_drops_the_prefix(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputNotRegularError) as info:
        read_bytes(tmp_path / "dir", "ledger file")
    assert unreadable_reason(info.value, "ledger file", tmp_path / "dir") == (
        "is a directory, not a regular file"
    )
    assert unreadable_reason(OSError(5, "Input/output error"), "x", "p") == "Input/output error"


def test_read_stream_is_bounded_and_reads_text_streams() -> None:
    assert read_stream(io.BytesIO(b"abc"), "record") == b"abc"
    assert read_stream(io.TextIOWrapper(io.BytesIO(b"\xc3\xa9")), "record") == b"\xc3\xa9"
    assert read_stream(io.StringIO("s\ud800"), "record") == "s\ud800".encode(
        "utf-8", "surrogatepass"
    )

    class Endless(io.RawIOBase):
        reads = 0

        def read(self, n: int = -1) -> bytes:
            Endless.reads += 1
            return b"y" * max(n, 1)

    with pytest.raises(InputTooLargeError, match="exceeds the 1000-byte cap"):
        read_stream(Endless(), "record", max_bytes=1000)
    assert Endless.reads <= 2


def test_parse_json_depth_and_line(tmp_path: Path) -> None:
    assert parse_json("[[1]]", max_depth=2) == [[1]]
    with pytest.raises(JsonInputError, match="nested more than 2 levels"):
        parse_json("[[[1]]]", max_depth=2)
    with pytest.raises(JsonInputError, match="nested too deeply for this reader"):
        parse_json("[" * 200_000)
    edge = "[" * MAX_JSON_NESTING + "]" * MAX_JSON_NESTING
    assert isinstance(parse_json(edge), list)  # the bound itself is read
    with pytest.raises(JsonInputError, match=f"more than {MAX_JSON_NESTING} levels"):
        parse_json("[" + edge + "]")
    quoted = '"' + "[{" * 600 + '\\"' + '"'  # brackets inside a string are not nesting
    assert parse_json(f"[{quoted}]") == ["[{" * 600 + '"']


def test_the_nesting_bound_does_not_move_with_the_recursion_limit() -> None:
    deep = "[" * 900 + "]" * 900  # below the default limit of 1,000, above the bound
    limit = sys.getrecursionlimit()
    for setting in (1000, 50_000):
        sys.setrecursionlimit(setting)
        try:
            with pytest.raises(JsonInputError, match="more than 512 levels"):
                parse_json(deep)
        finally:
            sys.setrecursionlimit(limit)
    with pytest.raises(JsonInputError) as info:
        parse_json('{\n  "a": 1,\n  oops\n}')
    assert info.value.line == 3 and "at line 3, column 3" in str(info.value)
    with pytest.raises(JsonInputError, match="NaN is not JSON"):
        parse_json("[NaN]")
    with pytest.raises(JsonInputError, match="invalid UTF-8"):
        parse_json(b'"\xed\xa0\x80"')  # a UTF-8-encoded surrogate is not UTF-8
    assert parse_json('"\\ud800"') == "\ud800"  # an escaped one is JSON


def test_read_text_line_cap_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("a,b\n" + "x" * 100 + "\nc,d\n", encoding="utf-8")
    assert read_text(path, "CSV file", max_line_bytes_=200, line_cap=True).startswith("a,b")
    with pytest.raises(InputTooLargeError, match=r"line 2: 100 bytes exceed the 50-byte line cap"):
        read_text(path, "CSV file", max_line_bytes_=50, line_cap=True)
    assert read_text(path, "CSV file", max_line_bytes_=50)  # without line_cap: not checked


def test_caps_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    monkeypatch.setenv(input_files.MAX_FILE_BYTES_ENV, "99")
    with pytest.raises(InputTooLargeError, match="100 bytes exceeds the 99-byte cap"):
        read_bytes(path, "f")
    monkeypatch.setenv(input_files.MAX_FILE_BYTES_ENV, "lots")
    with pytest.raises(EvalkitError, match="must be a positive number of bytes"):
        read_bytes(path, "f")


def test_a_readers_own_cap_is_tightened_by_a_lower_file_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: a lock, parameters file, certificate, decision rule or gold manifest kept its own
    # fixed cap (16-64 MiB) whatever $EVALKIT_MAX_FILE_BYTES said
    from evalkit.prereg.lock import read_lock
    from evalkit.prereg.study_params import load_parameters_file

    assert input_files.own_cap(64 << 20) == 64 << 20  # the 1 GiB default is higher
    monkeypatch.setenv(input_files.MAX_FILE_BYTES_ENV, "99")
    assert input_files.own_cap(64 << 20) == 99 and input_files.own_cap(10) == 10
    lock = tmp_path / "preregistration.lock.json"
    lock.write_text("{}" + " " * 100, encoding="utf-8")
    params = tmp_path / "p.yaml"
    params.write_text("a: 1\n" + "#" * 100 + "\n", encoding="utf-8")
    for read, path in ((read_lock, lock), (load_parameters_file, params)):
        with pytest.raises(InputTooLargeError, match="exceeds the 99-byte cap"):
            read(path)


def test_dumps_and_clip_escape_lone_surrogates() -> None:
    text = dumps({"s": "a\ud800b"})
    assert text == '{"s": "a\\ud800b"}'
    text.encode("utf-8")
    assert clip("x\udc80" * 2) == "x\\udc80x\\udc80"
    assert clip("y" * 500, 10) == "yyyyyyyyyy... (500 characters)"


def test_a_file_growing_past_the_cap_while_read_is_cut_off(tmp_path: Path) -> None:
    """/proc files report size 0 and then produce bytes: the read still stops at the cap."""
    proc_file = "/proc/self/maps"  # evalkit runs on Linux (fcntl locks); /proc is there
    assert os.stat(proc_file).st_size == 0
    with pytest.raises(InputTooLargeError, match="more exceeds the 64-byte cap"):
        read_bytes(proc_file, "file", max_bytes=64)


def _depth(value: object) -> int:  # the second implementation: a walk of the parsed value
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_NESTED = st.recursive(
    st.text(alphabet='[]{}"\\ab:,', max_size=5) | st.integers() | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(_NESTED, st.integers(min_value=1, max_value=8), st.booleans())
def test_max_depth_is_the_nesting_a_walk_of_the_value_finds(
    value: object, limit: int, ascii_only: bool
) -> None:
    """parse_json reads the depth off the text (brackets outside strings); the walk of the
    parsed value is the reference."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    if isinstance(value, dict | list) and _depth(value) > limit:
        with pytest.raises(JsonInputError, match=f"nested more than {limit} levels"):
            parse_json(text, max_depth=limit)
    else:
        assert parse_json(text, max_depth=limit) == value
