"""Property tests over generated hostile files for every reader (issue 10, Acceptance).

Every reader of untrusted files gets random bytes, deep nesting, lone surrogates (escaped and
UTF-8-encoded), NULs, lines over the line cap and files over the byte cap (small caps, set
through the documented environment variables), and non-files (a FIFO nobody writes to,
``/dev/zero``, a directory, a dangling symlink, a symlink loop) run in a child process with a
timeout. The properties: no traceback (the only exception is an ``EvalkitError`` naming the
file), no hang, and memory bounded by the cap, not by the file: a file 100 times the cap is
refused while holding at most a few caps of memory (measured with ``tracemalloc``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile import in_child
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from record_factory import make_record

from evalkit.errors import EvalkitError
from evalkit.files import input as input_files
from evalkit.journal import reader as journal
from evalkit.ledger import reader as ledger

FILE_CAP = 64 * 1024
LINE_CAP = 4 * 1024
GOOD_LINE = json.dumps(make_record()).encode()


@contextlib.contextmanager
def small_caps() -> Iterator[None]:
    saved = {
        k: os.environ.get(k)
        for k in (input_files.MAX_FILE_BYTES_ENV, input_files.MAX_LINE_BYTES_ENV)
    }
    os.environ[input_files.MAX_FILE_BYTES_ENV] = str(FILE_CAP)
    os.environ[input_files.MAX_LINE_BYTES_ENV] = str(LINE_CAP)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# ------------------------------------------------------------------------------ readers


def _parse_json(path: str) -> Any:
    try:
        return input_files.parse_json(input_files.read_bytes(path, "file"), max_depth=32)
    except input_files.JsonInputError as exc:  # parse_json sees text, not a file: name it here
        raise EvalkitError(f"{path}: {exc}") from None


def _facts_record(path: str) -> Any:
    from evalkit.cli.facts import _load_record

    return _load_record(path)


def _kappa_labels(path: str) -> Any:
    from evalkit.cli.stats import read_long_labels

    return read_long_labels(Path(path))


def _threshold_counts(path: str) -> Any:
    from evalkit.cli.stats import read_counts

    return read_counts(Path(path), "n", "cluster")


def _agreement_labels(path: str) -> Any:
    from evalkit.analyses.agreement import load_labels

    return len(load_labels(path))


def _journal(path: str) -> Any:
    read = journal.read(path)
    return len(read.records), len(read.diagnostics)


def _verify(path: str) -> Any:
    from evalkit.verify.rescore import verify_record

    return verify_record(
        "main-2026-09-19-session-1-eval-20261001T000000000Z", os.path.dirname(path), path
    )


def _report(path: str) -> Any:
    from evalkit.verify.rescore import find_record
    from evalkit.views.report import render_report

    record, _ = find_record("main-2026-09-19-session-1-eval-20261001T000000000Z", path)
    return len(input_files.escape_surrogates(render_report(record)).encode("utf-8"))


def _ledger(path: str) -> Any:
    f = ledger.read_jsonl(path)
    return f.state, len(f.lines), len(f.diagnostics)


def _main(argv: list[str]) -> int:
    from evalkit.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def _calibrate_labels(path: str) -> Any:
    from evalkit.calibration import read_labels

    return read_labels(path)


def _gold_file(path: str) -> Any:
    from evalkit.gold.sets import read_jsonl_objects

    return len(read_jsonl_objects(Path(path)))


def _lock(path: str) -> Any:
    from evalkit.prereg.lock import read_lock

    return read_lock(path)


def _parameters_file(path: str) -> Any:
    from evalkit.prereg.study_params import load_parameters_file

    return load_parameters_file(path)


def _notebook(path: str) -> Any:
    from evalkit.prereg.study_params import read_notebook

    return len(read_notebook(path))


def _certificate(path: str) -> Any:
    from evalkit.calibration.certificate_check import verify_certificate

    return verify_certificate(path)


def _run_log(path: str) -> Any:
    from evalkit.judge.runlog import read_runlog

    return len(read_runlog(path).entries)


def _item_labels(path: str) -> Any:
    from evalkit.files.labels import read_item_labels

    return read_item_labels(path)


READERS: dict[str, Callable[[str], Any]] = {
    "calibrate --labels": _calibrate_labels,
    "gold file": _gold_file,
    "prereg.read_lock": _lock,
    "study -f params": _parameters_file,
    "study notebook": _notebook,
    "calibration certificate": _certificate,
    "judge run log": _run_log,
    "stats prevalence labels": _item_labels,
    "input_files.read_bytes": lambda p: len(input_files.read_bytes(p, "file")),
    "input_files.read_text": lambda p: len(input_files.read_text(p, "file")),
    "input_files.parse_json": lambda p: _parse_json(p),
    "input_files.split_lines": lambda p: sum(
        1 for _ in input_files.split_lines(input_files.read_bytes(p, "file"))
    ),
    "ledger.read_jsonl": _ledger,
    "journal.read": _journal,
    "verify": _verify,
    "report": _report,
    "facts --record": _facts_record,
    "stats kappa --labels": _kappa_labels,
    "stats thresholds --csv": _threshold_counts,
    "agreement.load_labels": _agreement_labels,
    "cli journal": lambda p: _main(["journal", "--journal", p]),
    "cli facts --record": lambda p: _main(["facts", "--record", p]),
    "cli stats kappa": lambda p: _main(["stats", "kappa", "--labels", p]),
}
SUFFIX = {
    "agreement.load_labels": ".csv",
    "study -f params": ".yaml",
    "stats prevalence labels": ".csv",
    "study notebook": ".ipynb",
}


def _run(name: str, path: str) -> Any:
    """The reader's result; an EvalkitError is an answer too, anything else fails the test."""
    with small_caps():
        try:
            result = READERS[name](path)
        except EvalkitError as exc:
            assert path in str(exc) or os.path.basename(path) in str(exc) or "run id" in str(exc)
            return "refused"
    if name.startswith("cli "):
        assert result in (0, 1), f"{name} exit {result}"  # 2 would be an internal failure
    return result


# ------------------------------------------------------------------------ hostile bytes


def _nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


_PIECES = st.one_of(
    st.binary(max_size=300),
    st.integers(1, 200_000).map(lambda n: b"[" * n),
    st.integers(1, 3000).map(_nested),
    st.sampled_from(
        [
            GOOD_LINE,
            GOOD_LINE.replace(b"main-", b"s\\ud800-", 1),  # an escaped lone surrogate
            GOOD_LINE.replace(b"main-", b"s\xed\xa0\x80-", 1),  # a UTF-8-encoded surrogate
            GOOD_LINE.replace(b"main-", b"s\x00-", 1),  # a raw NUL inside a string
            b"item_id,rater,label",
            b"item,rater,label\ni1,a,pass\ni1,b,fail",
            b"n,cluster\n1,a\n2,b",
            b"\xef\xbb\xbf",
            b"\x00" * 100,
            b'"\\udc80"',
            b"1e400",
            b"NaN",
        ]
    ),
    st.integers(LINE_CAP + 1, 3 * LINE_CAP).map(lambda n: b'{"x":"' + b"y" * n + b'"}'),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
HOSTILE = st.lists(_PIECES, min_size=0, max_size=6).map(b"\n".join)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=HOSTILE, name=st.sampled_from(sorted(READERS)))
def test_no_reader_ever_tracebacks_on_hostile_bytes(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(
            folder, "eval.jsonl" if "journal" in name else "input" + SUFFIX.get(name, "")
        )
        Path(path).write_bytes(data)
        _run(name, path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=HOSTILE)
def test_the_journal_accounts_for_every_non_blank_line(data: bytes) -> None:
    """Each non-blank line is a record or a diagnostic naming it; none is lost, none counted
    twice."""
    with tempfile.TemporaryDirectory() as folder, small_caps():
        path = Path(folder) / "eval.jsonl"
        path.write_bytes(data)
        try:
            got = journal.read(path)
        except EvalkitError as exc:
            assert "cap" in str(exc) and len(data) > FILE_CAP
            return
        non_blank = []
        for line in input_files.split_lines(data, max_line_bytes_=LINE_CAP):
            raw = line.data
            if raw is not None and line.number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if raw is None or raw.strip():
                non_blank.append(line.number)
        named = sorted([*got.line_numbers, *(d.line for d in got.diagnostics)])
        assert named == non_blank


# ------------------------------------------------------------------------------ non-files


def _make(kind: str, folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "dangling":
        os.symlink(os.path.join(folder, "gone"), path)
    elif kind == "loop":
        os.symlink(path, path)
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["fifo", "dev-zero", "directory", "dangling", "loop"]),
    name=st.sampled_from(sorted(READERS)),
)
@pytest.mark.slow
def test_no_reader_hangs_or_reads_a_non_file(kind: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _make(
            kind, folder, "eval.jsonl" if "journal" in name else "input" + SUFFIX.get(name, "")
        )
        outcome = in_child(_run, name, path, timeout=20)
        assert outcome.kind == "returned", (name, kind, outcome.kind, outcome.traceback)
        if name == "ledger.read_jsonl":
            assert outcome.value[0] == "unreadable"
        elif not name.startswith("cli "):
            assert outcome.value == "refused", (name, kind, outcome.value)
        else:
            assert outcome.value == 1


# ---------------------------------------------------------------------------- memory bound


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("growth", ["big-file", "huge-line"])
def test_memory_is_bounded_by_the_cap_not_the_file(tmp_path: Path, name: str, growth: str) -> None:
    """A file 100 times the byte cap is refused; a line 12 times the line cap (in a file
    under the byte cap) is not parsed. Either way the reader holds a few caps of memory."""
    path = tmp_path / ("eval.jsonl" if "journal" in name else "input" + SUFFIX.get(name, ""))
    if growth == "big-file":
        path.write_bytes((GOOD_LINE + b"\n") * (100 * FILE_CAP // len(GOOD_LINE)))
    else:
        path.write_bytes(GOOD_LINE + b"\n" + b'{"x":[' + b"1," * (6 * LINE_CAP) + b"1]}\n")
        assert path.stat().st_size < FILE_CAP
    warm = tmp_path / ("warm.jsonl" if "journal" in name else "warm" + SUFFIX.get(name, ""))
    warm.write_bytes(GOOD_LINE + b"\n")
    _run(name, str(warm))  # imports and caches first: they are not the reader's memory
    tracemalloc.start()
    try:
        _run(name, str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert peak < 12 * FILE_CAP, f"{name}: peak {peak} bytes for a {size}-byte file"
