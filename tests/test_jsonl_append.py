"""The one line appender (``evalkit.files.append``) under failure, as the run log meets it.

The journal's own failure cases are pinned in ``test_journal_hostile.py`` and
``test_journal_batch.py``; these pin what the run log gained by sharing the journal's
mechanism: a failure says what is on disk (a failed truncation is no longer swallowed), a FIFO
or a dangling symlink is refused before anything is written, and a signal mid-write leaves
neither file with a fragment. Failures are injected at the OS boundary for the file's own
descriptor only (``faults.only_for``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from faults import only_for
from hostile import fifo, in_child
from record_factory import make_record

from evalkit.errors import EvalkitError
from evalkit.files.append import AppendError, AppendHold, LineAppender, append_lines, encode_line
from evalkit.journal import reader as journal


def _half_then(exc: BaseException) -> Any:
    """A write that goes half through, then fails with ``exc`` (a disk filling up, a signal)."""
    real = os.write
    calls: list[int] = []

    def write(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return int(real(fd, bytes(data[: len(data) // 2])))
        raise exc

    return write


def _fails(code: int) -> Any:
    def fail(fd: int, *args: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return fail


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "run.jsonl"
    append_lines(path, [encode_line({"kept": i}) for i in range(3)], "run log")
    return path, path.read_bytes()


def test_a_failed_run_log_append_says_nothing_of_it_is_on_disk(
    log: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, before = log
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "write", only_for(path, _half_then(enospc), os.write))
    with LineAppender(path, "run log") as appender, pytest.raises(AppendError) as info:
        appender.append([encode_line({"n": 1}), encode_line({"n": 2})])
    monkeypatch.undo()
    error = info.value
    assert error.errno == errno.ENOSPC and not error.remains and error.offset == len(before)
    assert f"run log {str(path)!r}: appending 2 lines failed" in str(error)
    assert f"truncated back to its previous {len(before)} bytes" in str(error)
    assert "nothing of 2 lines is on disk" in str(error)
    assert path.read_bytes() == before


def test_a_run_log_append_whose_truncation_fails_says_which_bytes_may_remain(
    log: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the shared mechanism the failed truncation was swallowed: the caller got the
    bare ENOSPC and no word of the fragment left in the file."""
    path, before = log
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "write", only_for(path, _half_then(enospc), os.write))
    monkeypatch.setattr(os, "ftruncate", only_for(path, _fails(errno.EROFS), os.ftruncate))
    with LineAppender(path, "run log") as appender, pytest.raises(AppendError) as info:
        appender.append([encode_line({"n": 1})])
    monkeypatch.undo()
    error = info.value
    partial = len(path.read_bytes()) - len(before)
    assert partial > 0 and error.remains and error.errno == errno.ENOSPC
    assert f"{partial} of the line's {partial * 2} bytes may remain" in str(error)
    assert f"from byte offset {len(before)}" in str(error)


def test_a_signal_mid_write_leaves_no_fragment_in_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal used to cut back only after an OSError: a KeyboardInterrupt between two
    partial writes left half a record line behind."""
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp="2026-10-01T00:00:01.000Z"))
    before = path.read_bytes()
    monkeypatch.setattr(os, "write", only_for(path, _half_then(KeyboardInterrupt()), os.write))
    with pytest.raises(KeyboardInterrupt):
        journal.append(path, make_record(timestamp="2026-10-01T00:00:02.000Z"))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert journal.read(path).diagnostics == []


def _append_one(path: str) -> None:
    append_lines(path, [encode_line({"a": 1})], "run log")


def test_a_fifo_is_never_a_run_log(tmp_path: Path) -> None:
    """Before: the lines went into the pipe, then the fsync failed with a bare EINVAL (a batch
    larger than the pipe's buffer blocked instead)."""
    path = fifo(tmp_path / "run.jsonl")
    outcome = in_child(_append_one, path, timeout=20)
    assert outcome.kind == "raised", outcome
    assert outcome.evalkit_error, outcome.traceback
    assert "run log" in outcome.message and "not a regular file" in outcome.message


def test_a_dangling_symlink_run_log_is_named_and_nothing_is_created_behind_it(
    tmp_path: Path,
) -> None:
    """Before: ``O_CREAT`` followed the link and created its target."""
    link = tmp_path / "run.jsonl"
    target = tmp_path / "elsewhere.jsonl"
    link.symlink_to(target)
    with pytest.raises(EvalkitError, match=r"run log .*a dangling symlink"):
        _append_one(str(link))
    assert not target.exists()


def test_a_hold_writes_only_while_held(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    append_lines(path, [])
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        hold = AppendHold(fd, path, "run log")
        with pytest.raises(EvalkitError, match="outside its hold"):
            hold.write(["{}"])
        with hold:
            hold.write(["{}"])
        with pytest.raises(EvalkitError, match="outside its hold"):
            hold.write(["{}"])
    finally:
        os.close(fd)
    assert path.read_bytes() == b"{}\n"
