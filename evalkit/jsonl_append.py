r"""Append complete lines to a JSON-lines file: all or nothing, safe across processes.

One set of write rules for every append-only JSON-lines file evalkit writes (the run log of
``evalkit judge run``; the journal keeps the same rules in :mod:`evalkit.journal`):

* **Locked.** The whole append holds an exclusive ``fcntl.flock`` on the file itself, so two
  writers (two processes, or two threads with their own appender) never interleave bytes.
* **Complete lines.** Each line is one serialized JSON value without a line break, followed by
  ``\n``; ``os.write`` is looped over short writes. When the file does not end in a newline (a
  writer died mid-line long ago), the new lines start on a fresh line, so the torn fragment
  stays one unreadable line and never swallows a new one.
* **Durable.** The data is fsynced before the lock is released; a file this appender created
  has its directory entry fsynced too.
* **All or nothing.** When a write or the fsync fails (a full disk, a signal), the file is
  truncated back to its size before the append and the error is re-raised: an append leaves
  every line it was given, or none of them, never part of one.

Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import input_file_error
from evalkit.input_files import dumps

__all__ = ["LineAppender", "append_lines", "encode_line"]


def encode_line(obj: Any) -> str:
    """``obj`` as one compact JSON line body (no newline; no NaN/Infinity; surrogate-safe)."""
    text = dumps(obj, separators=(",", ":"))
    if "\n" in text or "\r" in text:  # json escapes these inside strings; keep the invariant
        raise EvalkitError("JSON serialization produced a line break")
    return text


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class LineAppender:
    """An open JSON-lines file that appends batches of complete lines (module docstring).

    ``what`` names the file's role in error messages ("run log"). Missing parent directories
    are created. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str], what: str = "file") -> None:
        self.path = Path(path)
        self.what = what
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        try:
            self._fd: int | None = os.open(
                self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
            )
        except OSError as exc:
            raise input_file_error(exc, what, self.path) from exc
        if created:  # make the new directory entry durable too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def append(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (JSON line bodies, see :func:`encode_line`) all or nothing."""
        if self._fd is None:
            raise EvalkitError(f"{self.what} {str(self.path)!r}: the appender is closed")
        if not lines:
            return
        for line in lines:
            if "\n" in line or "\r" in line:
                raise EvalkitError(f"{self.what}: a line to append holds a line break")
        payload = "".join(line + "\n" for line in lines).encode("utf-8")
        fd = self._fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # a torn earlier write: start on a fresh line
            try:
                _write_all(fd, payload)
                os.fsync(fd)
            except BaseException:
                # all or nothing: cut back whatever part of this append reached the file
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                raise
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LineAppender:
        """The appender itself (closed on exit)."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the file."""
        self.close()


def append_lines(path: str | os.PathLike[str], lines: Sequence[str], what: str = "file") -> None:
    """Append ``lines`` to the JSON-lines file at ``path`` all or nothing (module docstring)."""
    with LineAppender(path, what) as appender:
        appender.append(lines)
