"""The journal file on disk: errors that name it, and all-or-nothing appends under one lock.

``append`` validates and seals one record, then writes exactly one complete line while holding
an exclusive ``fcntl.flock`` on the journal file itself, and fsyncs before releasing the lock.
:class:`JournalAppender` does the same for a batch (``evalkit score --all --journal``): one lock
for the batch, one write per line, one fsync at the end. Earlier bytes are never rewritten;
when the file does not end in a newline (a writer died in the middle of a line) the first new
record starts on a fresh line, so the torn fragment stays a single unreadable line and never
swallows a record.

Every appended line is sealed (:func:`evalkit.record_seal.seal_record`: its
``provenance.record_sha256`` is computed over the validated record, last), so a line edited
afterwards no longer matches its seal and is read as ``changed``, never as a record.

All-or-nothing, per record: when writing a line fails (a full disk, a short write, an I/O
error), the file is truncated back to its size before that line under the same lock and synced
(the records of the batch before it are then on disk); when the final ``fsync`` fails, the file
is truncated back to its size before the batch. :class:`JournalWriteError` says what is on
disk: nothing of the record (or of the batch), or, when the truncation or its sync failed too,
that bytes may remain from which offset. Only regular files are journals: a FIFO, a device or
a directory is refused before anything is written. Lone surrogates (legal in a JSON string,
not in UTF-8) are written as ``\\udXXX`` escapes (:func:`evalkit.input_files.dumps`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import (
    InputFileError,
    InputIsADirectoryError,
    InputNotFoundError,
    input_file_error,
)
from evalkit.input_files import InputNotRegularError, dumps
from evalkit.record import validate_record
from evalkit.record_seal import seal_record

if TYPE_CHECKING:
    from evalkit.calibration_status import CalibrationAcceptance

__all__ = [
    "JournalAppender",
    "JournalIsADirectoryError",
    "JournalNotFoundError",
    "JournalNotRegularError",
    "JournalWriteError",
    "append",
    "append_many",
    "dumps_record",
    "journal_os_error",
]


class JournalNotFoundError(InputNotFoundError):
    """There is no journal file at the path (an ``EvalkitError`` and a ``FileNotFoundError``)."""


class JournalIsADirectoryError(InputIsADirectoryError):
    """The journal path is a directory (an ``EvalkitError`` and an ``IsADirectoryError``)."""


class JournalNotRegularError(InputNotRegularError):
    """The journal path is a FIFO, a device or a socket: never read from or appended to."""


class JournalWriteError(OSError):
    """An append failed; the message says what is on disk.

    ``offset`` is the journal's size before the record (or the batch) that failed;
    ``remains`` is False when the journal is known to be back at that size (nothing of it is
    there) and True when bytes may remain after ``offset`` (the truncation or its sync
    failed). ``appended`` counts the records of a batch that are on disk before ``offset``.
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
        return self.message


def journal_os_error(exc: OSError, path: Path) -> OSError:
    """The journal's own error for a path the user got wrong; other OSErrors unchanged."""
    if isinstance(exc, FileNotFoundError) and path.is_symlink():
        return InputFileError(
            f"journal {str(path)!r}: a dangling symlink (its target does not exist); "
            "nothing is created behind it",
            path,
            exc.errno,
        )
    if isinstance(exc, FileNotFoundError):
        return JournalNotFoundError(
            f"journal {str(path)!r}: no such file (nothing has been recorded there)",
            path,
            exc.errno,
        )
    if isinstance(exc, IsADirectoryError) or (
        isinstance(exc, InputNotRegularError) and path.is_dir()
    ):
        return JournalIsADirectoryError(
            f"journal {str(path)!r}: is a directory, not a journal file "
            "(name the eval.jsonl file inside it)",
            path,
            exc.errno,
        )
    if isinstance(exc, InputFileError):
        return exc
    return input_file_error(exc, "journal", path)


def dumps_record(record: dict[str, Any]) -> str:
    """Serialize a record as one compact JSON line body (no newline, no NaN/Infinity, lone
    surrogates escaped as ``\\udXXX`` so the line is always UTF-8).
    """
    text = dumps(record, separators=(",", ":"))
    if "\n" in text or "\r" in text:  # json escapes these inside strings; keep the invariant
        raise EvalkitError("record serialization produced a line break")
    return text


def _open_for_append(target: Path) -> tuple[int, bool]:
    """An O_APPEND descriptor on the regular file ``target`` and whether this call created it.

    ``O_NONBLOCK`` keeps opening a FIFO from blocking; anything but a regular file is refused
    before a byte is written.
    """
    flags = os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd, created = os.open(target, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            fd, created = os.open(target, flags), False
    except OSError as exc:
        raise journal_os_error(exc, target) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
        raise JournalNotRegularError(
            f"journal {str(target)!r}: is {kind}, not a regular file; nothing was written",
            target,
            errno.EINVAL,
        )
    os.set_blocking(fd, True)
    return fd, created


def _write_all(fd: int, data: bytes) -> int:
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
    return done


def _roll_back(
    fd: int, target: Path, offset: int, length: int, exc: OSError, what: str = "the record"
) -> JournalWriteError:
    """Truncate the journal back to ``offset`` after a failed write or sync of ``what`` (whose
    bytes start at ``offset``, ``length`` of them); the error to raise says what is on disk.
    """
    written = getattr(exc, "written", length)  # a failed fsync: every byte was written
    where = f"journal {str(target)!r}"
    failed = f"appending {what} failed ({exc})"
    line = "the record line" if what == "the record" else what
    try:
        os.ftruncate(fd, offset)
    except OSError as trunc:
        return JournalWriteError(
            f"{where}: {failed}, and truncating the journal back to its previous {offset} "
            f"bytes failed too ({trunc}): {written} of {line}'s {length} bytes may "
            f"remain from byte offset {offset} (a line that does not parse is reported as "
            "unreadable and never read as a record; remove it by hand after checking)",
            path=target,
            offset=offset,
            remains=written > 0,
            cause=exc,
        )
    try:
        os.fsync(fd)
    except OSError as sync:
        return JournalWriteError(
            f"{where}: {failed}; the journal was truncated back to its previous {offset} "
            f"bytes, but that truncation could not be synced ({sync}): after a crash the disk "
            f"may still hold up to {written} bytes of {line} from byte offset {offset}",
            path=target,
            offset=offset,
            remains=written > 0,
            cause=exc,
        )
    return JournalWriteError(
        f"{where}: {failed}; the journal was truncated back to its previous {offset} bytes, "
        f"so nothing of {what} is on disk",
        path=target,
        offset=offset,
        remains=False,
        cause=exc,
    )


def _sync_new_entry(fd: int, target: Path) -> None:
    """Make a just-created journal's directory entry durable before the record goes in; on
    failure remove the empty file again and say so.
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
            Path(target).unlink(missing_ok=True)
        state = "it was removed again" if removed else "it was left in place"
        raise JournalWriteError(
            f"journal {str(target)!r}: the new journal file's directory entry could not be "
            f"synced ({exc}); nothing was written and {state}",
            path=target,
            offset=0,
            remains=False,
            cause=exc,
        ) from exc


class JournalAppender:
    """Appends records to one journal under one exclusive lock (a context manager).

    Entering opens the journal (created when missing, with its parent directories) and takes
    the lock; :meth:`append` validates and seals a record and writes its line (one write, no
    sync); leaving syncs once and releases the lock. A failed write truncates the journal back
    to the size before that record and raises :class:`JournalWriteError` (the records appended
    before it stay, and are synced); a failed final sync truncates it back to its size at
    entry. While the lock is held no other evalkit process appends, so a caller may read the
    journal (``evalkit.journal.read``) and decide what to append from what it holds.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, accepted: CalibrationAcceptance | None = None
    ) -> None:
        self.path = Path(path)
        self.accepted = accepted
        self.appended = 0
        self._fd: int | None = None
        self._start = 0
        self._length = 0
        self._fresh_line = True

    def __enter__(self) -> JournalAppender:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, created = _open_for_append(self.path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if created:
                _sync_new_entry(fd, self.path)
            self._start = os.fstat(fd).st_size
            # a torn previous write: the first line starts on a fresh line
            self._fresh_line = self._start == 0 or os.pread(fd, 1, self._start - 1) == b"\n"
        except BaseException:
            os.close(fd)  # closing releases the lock
            raise
        self._fd = fd
        return self

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and seal ``record``, write its line; return the record as written.

        ``ValidationError`` (nothing written) for an invalid record; :class:`JournalWriteError`
        when the write fails (the journal is back at its size before this record).
        """
        validated = validate_record(seal_record(record), accepted=self.accepted)
        self._write(validated)
        return validated

    def _write(self, validated: dict[str, Any]) -> None:
        fd = self._fd
        if fd is None:
            raise EvalkitError("JournalAppender.append outside its with-block")
        payload = (dumps_record(validated) + "\n").encode("utf-8")
        if not self._fresh_line:
            payload = b"\n" + payload
        offset = self._start + self._length
        try:
            _write_all(fd, payload)
        except OSError as exc:
            error = _roll_back(fd, self.path, offset, len(payload), exc)
            error.appended = self.appended
            if self.appended and not error.remains:
                error.message += (
                    f"; the {self.appended} record(s) appended before it in this batch are on disk"
                )
            raise error from exc
        self._fresh_line = True
        self._length += len(payload)
        self.appended += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self._length:
                try:
                    os.fsync(fd)
                except OSError as err:
                    what = "the record" if self.appended == 1 else f"{self.appended} records"
                    raise _roll_back(fd, self.path, self._start, self._length, err, what) from err
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def append(
    path: str | os.PathLike[str],
    record: dict[str, Any],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> dict[str, Any]:
    """Validate ``record`` and append it to the journal at ``path`` as one line, sealed (any
    seal it carried is recomputed over the record as written); return the line's record.

    Safe across processes: the write happens under an exclusive ``flock`` on the journal and is
    fsynced before the lock is released. Nothing already in the file is rewritten. Missing
    parent directories are created. All-or-nothing: a failed write or sync truncates the file
    back under the lock (see the module docstring). Raises ``ValidationError`` (nothing
    written, no file created) for an invalid record, :class:`JournalIsADirectoryError` /
    :class:`JournalNotRegularError` (``EvalkitError``) when ``path`` is not a regular file, and
    :class:`JournalWriteError` (an ``OSError`` saying what is on disk) when writing fails.
    ``accepted``: the verified calibration certificates a judge dimension may claim (see
    ``validate_record``).
    """
    validated = validate_record(seal_record(record), accepted=accepted)
    with JournalAppender(path, accepted=accepted) as out:
        out._write(validated)
    return validated


def append_many(
    path: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> list[dict[str, Any]]:
    """Append ``records`` (any iterable, consumed once) under one lock, one line each, one
    fsync at the end; return them as written. Each record is all-or-nothing: on a failure the
    records before it stay (and are synced), see :class:`JournalAppender`.
    """
    with JournalAppender(path, accepted=accepted) as out:
        return [out.append(record) for record in records]
