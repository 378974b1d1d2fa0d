r"""Append complete lines to a JSON-lines file: all or nothing, safe across processes.

The one line appender of evalkit: the journal (:mod:`evalkit.journal.file`, which validates
and seals each record first) and the run log of ``evalkit judge run`` (:class:`LineAppender`)
both write through :class:`AppendHold`, so one set of write rules holds for both:

* **Regular files only, never through a link.** The file is opened with ``O_NONBLOCK`` and
  ``O_NOFOLLOW`` and checked with ``fstat`` on the open descriptor: a FIFO, a device or a
  directory is refused before a byte is written, and a symbolic link (dangling or not) is
  named, never followed into a file this writer did not create. Missing parent directories
  are created.
* **Only the writer's own file.** A writer names what its lines look like (:class:`FirstLine`):
  a non-empty file whose first line is not one of them (a gold file, a ledger, someone's
  notes) is refused before a byte is written.
* **Locked.** A hold keeps an exclusive ``fcntl.flock`` on the file itself, so two writers
  (two processes, or two threads with their own descriptor) never interleave bytes.
* **Complete lines.** Each line is one serialized JSON value without a line break, followed by
  ``\n``; ``os.write`` is looped over short writes. When the file does not end in a newline (a
  writer died mid-line long ago), the new lines start on a fresh line, so the torn fragment
  stays one unreadable line and never swallows a new one. Earlier bytes are never rewritten.
* **Durable.** The hold fsyncs once before it releases the lock; a file this module created
  has its directory entry fsynced too (an empty file whose entry cannot be synced is removed).
* **All or nothing.** A hold makes one or more writes (the journal: one record each; the run
  log: one batch of lines). When a write fails (a full disk, a short write, an I/O error, a
  signal), the file is truncated back to its size before that write and synced; the writes
  before it stay. When the final fsync fails, the file is truncated back to its size before
  the hold. :class:`AppendError` says what is on disk: nothing of the write (or of the hold),
  or, when the truncation or its sync failed too, that bytes may remain from which offset.

Standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.errors import InputFileError, input_file_error
from evalkit.files.input import InputNotRegularError, clip, dumps
from evalkit.files.output import OutputRefusedError

__all__ = [
    "AppendError",
    "AppendHold",
    "FirstLine",
    "LineAppender",
    "append_lines",
    "encode_line",
    "open_for_append",
]

#: Maps an ``OSError`` met while opening ``path`` to the error the caller raises.
OpenErrorMap = Callable[[OSError, Path], OSError]
#: The most of a first line read to tell whose file it is.
_FIRST_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class FirstLine:
    """What the first line of a writer's own file looks like: ``pattern`` searched in it.

    ``lines`` names them for the refusal ("journal records").
    """

    lines: str
    pattern: re.Pattern[bytes]

    def owns(self, first: bytes) -> bool:
        """Whether ``first`` (a file's first line, or its first bytes) is one of the lines."""
        return self.pattern.search(first) is not None


class AppendError(OSError):
    """An append failed; the message says what is on disk.

    ``offset`` is the file's size before the write (or the hold) that failed; ``remains`` is
    False when the file is known to be back at that size (nothing of it is there) and True
    when bytes may remain after ``offset`` (the truncation or its sync failed). ``appended``
    counts the lines of the hold that are on disk before ``offset`` (the journal: records).
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path,
        offset: int,
        remains: bool,
        cause: OSError,
        appended: int = 0,
    ) -> None:
        super().__init__(cause.errno, message, os.fspath(path))
        self.message = message
        self.offset = offset
        self.remains = remains
        self.appended = appended

    def __str__(self) -> str:
        """The message (not OSError's ``[Errno n] ...: 'path'`` form)."""
        return self.message


def encode_line(obj: Any) -> str:
    r"""``obj`` as one compact JSON line body.

    No newline, no NaN/Infinity; lone surrogates are escaped as ``\udXXX`` so the line is
    always UTF-8 (:func:`evalkit.files.input.dumps`).
    """
    text = dumps(obj, separators=(",", ":"))
    if "\n" in text or "\r" in text:  # json escapes these inside strings; keep the invariant
        raise EvalkitError("JSON serialization produced a line break")
    return text


def _refused(exc: OSError, what: str, target: Path, map_error: OpenErrorMap | None) -> OSError:
    if exc.errno in (errno.ELOOP, errno.ENOENT, errno.EEXIST) and target.is_symlink():
        if not target.exists():
            return InputFileError(
                f"{what} {str(target)!r}: a dangling symlink (its target does not exist); "
                "nothing is created behind it",
                target,
                exc.errno,
            )
        return OutputRefusedError(
            f"{what} {str(target)!r}: is a symbolic link; evalkit never appends through a link "
            "into a file it did not create (name the file itself); nothing was written",
            target,
            exc.errno,
        )
    return map_error(exc, target) if map_error else input_file_error(exc, what, target)


def _check_owner(fd: int, what: str, target: Path, owner: FirstLine) -> None:
    """Refuse a non-empty file whose first line is not one of ``owner``'s lines."""
    head = os.pread(fd, _FIRST_LINE_BYTES, 0)
    if not head:
        return
    first = head.split(b"\n", 1)[0]
    if owner.owns(first):
        return
    shown = clip(first.decode("utf-8", "replace"), 60)
    raise OutputRefusedError(
        f"{what} {str(target)!r}: its first line is not one of evalkit's {owner.lines} "
        f"({shown!r}); evalkit appends only to its own files (name another file); nothing "
        "was written",
        target,
        errno.EPERM,
    )


def _sync_new_entry(fd: int, target: Path, what: str, error_type: type[AppendError]) -> None:
    """Make a just-created file's directory entry durable; on failure remove it if still empty.

    Called under the lock, so no appender of this module writes between the check and the
    removal.
    """
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        removed = os.fstat(fd).st_size == 0
        if removed:
            target.unlink(missing_ok=True)
        state = "it was removed again" if removed else "it was left in place"
        raise error_type(
            f"{what} {str(target)!r}: the new {what} file's directory entry could not be "
            f"synced ({exc}); nothing was written and {state}",
            path=target,
            offset=0,
            remains=False,
            cause=exc,
        ) from exc


def open_for_append(
    path: str | os.PathLike[str],
    what: str,
    *,
    owner: FirstLine | None = None,
    map_error: OpenErrorMap | None = None,
    error_type: type[AppendError] = AppendError,
) -> int:
    """An ``O_APPEND`` descriptor on the regular file ``path``, created when missing.

    ``what`` names the file's role in messages ("journal", "run log"). Missing parent
    directories are created; a file this call creates has its directory entry fsynced (under
    the lock) before the descriptor is returned. Anything but a regular file, a symbolic link,
    and (with ``owner``) a non-empty file whose first line is not ``owner``'s are refused
    before a byte is written (:class:`~evalkit.files.output.OutputRefusedError` for the last
    two). An ``OSError`` met while opening (and the refusal of a non-regular file, an
    :class:`~evalkit.files.input.InputNotRegularError`) goes through ``map_error``, by default
    :func:`~evalkit.files.errors.input_file_error`; a failed directory sync raises
    ``error_type``. The caller closes the descriptor.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # O_NONBLOCK: opening a FIFO never blocks; O_EXCL tells whether this call created the file;
    # O_NOFOLLOW: a link is refused (ELOOP), never followed into someone else's file
    flags = (
        os.O_RDWR
        | os.O_APPEND
        | os.O_NONBLOCK
        | os.O_NOCTTY
        | os.O_NOFOLLOW
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        try:
            fd, created = os.open(target, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            fd, created = os.open(target, flags), False
    except OSError as exc:
        raise _refused(exc, what, target, map_error) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
            refusal = InputNotRegularError(
                f"{what} {str(target)!r}: is {kind}, not a regular file; nothing was written",
                target,
                errno.EINVAL,
            )
            raise _refused(refusal, what, target, map_error)
        os.set_blocking(fd, True)
        if owner is not None and not created:
            _check_owner(fd, what, target, owner)
        if created:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                _sync_new_entry(fd, target, what, error_type)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``; on failure the OSError carries ``written`` (bytes that made it)."""
    view = memoryview(data)
    done = 0
    while done < len(data):
        try:
            n = os.write(fd, view[done:])
        except OSError as exc:
            exc.written = done  # type: ignore[attr-defined]
            raise
        if n <= 0:
            short = OSError(errno.EIO, f"write returned {n} after {done} of {len(data)} bytes")
            short.written = done  # type: ignore[attr-defined]
            raise short
        done += n


def _phrases(unit: str, count: int) -> tuple[str, str]:
    """How a message names ``count`` lines and their bytes ("the record", "the record line")."""
    if count != 1:
        return f"{count} {unit}s", f"{count} {unit}s"
    return f"the {unit}", "the line" if unit == "line" else f"the {unit} line"


class AppendHold:
    """One exclusive hold of an open JSON-lines file: writes of whole lines, all or nothing.

    Entering takes the lock on ``fd`` (a descriptor from :func:`open_for_append`) and notes the
    file's size; :meth:`write` appends lines (one write, no sync); leaving fsyncs once when
    anything was written and releases the lock (the descriptor stays open). ``what`` names the
    file ("journal"), ``unit`` what one line holds ("record"; "line" by default), and
    ``error_type`` the :class:`AppendError` subclass raised. A failed write truncates the file
    back to its size before that write (the writes before it stay, and are synced on leaving);
    a failed final sync truncates it back to its size at entry.
    """

    def __init__(
        self,
        fd: int,
        path: str | os.PathLike[str],
        what: str = "file",
        *,
        unit: str = "line",
        error_type: type[AppendError] = AppendError,
    ) -> None:
        self.fd = fd
        self.path = Path(path)
        self.what = what
        self.unit = unit
        self.error_type = error_type
        self.appended = 0
        self._held = False
        self._start = 0
        self._length = 0
        self._fresh_line = True

    def __enter__(self) -> AppendHold:
        """Take the lock; the hold itself."""
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            self._start = os.fstat(self.fd).st_size
            # a torn previous write: the first line starts on a fresh line
            self._fresh_line = self._start == 0 or os.pread(self.fd, 1, self._start - 1) == b"\n"
        except BaseException:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            raise
        self._held = True
        return self

    def write(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (JSON line bodies, see :func:`encode_line`) in one write.

        All or nothing: raises ``error_type`` (the file back at its size before this write, or
        the message says which bytes may remain) when the write fails; an ``EvalkitError``,
        with nothing written, when a line holds a line break.
        """
        if not self._held:
            raise EvalkitError(f"{self.what} {str(self.path)!r}: append outside its hold")
        if not lines:
            return
        if any("\n" in line or "\r" in line for line in lines):
            raise EvalkitError(f"{self.what}: a line to append holds a line break")
        payload = "".join(line + "\n" for line in lines).encode("utf-8")
        if not self._fresh_line:
            payload = b"\n" + payload
        offset = self._start + self._length
        try:
            _write_all(self.fd, payload)
        except OSError as exc:
            error = self._roll_back(offset, len(payload), exc, len(lines))
            error.appended = self.appended
            if self.appended and not error.remains:
                error.message += (
                    f"; the {self.appended} {self.unit}(s) appended before it in this batch "
                    "are on disk"
                )
            raise error from exc
        except BaseException:  # a signal mid-write: cut this write back, then let it through
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, offset)
                os.fsync(self.fd)
            raise
        self._fresh_line = True
        self._length += len(payload)
        self.appended += len(lines)

    def __exit__(self, *exc_info: object) -> None:
        """Sync what was written (all of it, or none: see the class) and release the lock."""
        if not self._held:
            return
        self._held = False
        try:
            if self._length:
                try:
                    os.fsync(self.fd)
                except OSError as err:
                    raise self._roll_back(self._start, self._length, err, self.appended) from err
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _roll_back(self, offset: int, length: int, exc: OSError, count: int) -> AppendError:
        """Truncate the file back to ``offset`` after a failed write or sync of ``count`` lines.

        Their bytes start at ``offset``, ``length`` of them; the error to raise says what is
        on disk.
        """
        item, line = _phrases(self.unit, count)
        written = getattr(exc, "written", length)  # a failed fsync: every byte was written
        where = f"{self.what} {str(self.path)!r}"
        failed = f"appending {item} failed ({exc})"
        fields: dict[str, Any] = {"path": self.path, "offset": offset, "cause": exc}
        try:
            os.ftruncate(self.fd, offset)
        except OSError as trunc:
            return self.error_type(
                f"{where}: {failed}, and truncating the {self.what} back to its previous "
                f"{offset} bytes failed too ({trunc}): {written} of {line}'s {length} bytes may "
                f"remain from byte offset {offset} (a line that does not parse is reported as "
                "unreadable and never read as a record; remove it by hand after checking)",
                remains=written > 0,
                **fields,
            )
        try:
            os.fsync(self.fd)
        except OSError as sync:
            return self.error_type(
                f"{where}: {failed}; the {self.what} was truncated back to its previous {offset} "
                f"bytes, but that truncation could not be synced ({sync}): after a crash the "
                f"disk may still hold up to {written} bytes of {line} from byte offset {offset}",
                remains=written > 0,
                **fields,
            )
        return self.error_type(
            f"{where}: {failed}; the {self.what} was truncated back to its previous {offset} "
            f"bytes, so nothing of {item} is on disk",
            remains=False,
            **fields,
        )


class LineAppender:
    """An open JSON-lines file that appends batches of complete lines (module docstring).

    Each :meth:`append` is one :class:`AppendHold`: locked, one write, fsynced, all or nothing.
    ``what`` names the file's role in error messages ("run log"); ``owner`` what its lines look
    like (a file whose first line is not one of them is refused). Use as a context manager, or
    call :meth:`close`.
    """

    def __init__(
        self, path: str | os.PathLike[str], what: str = "file", owner: FirstLine | None = None
    ) -> None:
        self.path = Path(path)
        self.what = what
        self._fd: int | None = open_for_append(self.path, what, owner=owner)

    def append(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (JSON line bodies, see :func:`encode_line`) all or nothing.

        Returns once they are fsynced; raises :class:`AppendError` (the file as it was, or the
        message says which bytes may remain) when they cannot be written.
        """
        if self._fd is None:
            raise EvalkitError(f"{self.what} {str(self.path)!r}: the appender is closed")
        with AppendHold(self._fd, self.path, self.what) as hold:
            hold.write(lines)

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LineAppender:
        """The appender itself (closed on exit)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the file."""
        self.close()


def append_lines(
    path: str | os.PathLike[str],
    lines: Sequence[str],
    what: str = "file",
    owner: FirstLine | None = None,
) -> None:
    """Append ``lines`` to the JSON-lines file at ``path`` all or nothing (module docstring)."""
    with LineAppender(path, what, owner) as appender:
        appender.append(lines)
