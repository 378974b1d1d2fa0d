"""The ``eval.jsonl`` journal: append-only, one record per line, the single source of truth.

Writing: ``append`` validates the record, then writes exactly one complete line while holding
an exclusive ``fcntl.flock`` on the journal file itself, and fsyncs before releasing the lock.
Earlier bytes are never rewritten; when the file does not end in a newline (a writer died in
the middle of a line) the new record starts on a fresh line, so the torn fragment stays a
single unreadable line and never swallows the new record.

Every appended line is sealed (:func:`evalkit.record_seal.seal_record`: its
``provenance.record_sha256`` is computed over the validated record, last), so a line edited
afterwards no longer matches its seal and is read as ``changed``, never as a record.

Appends are all-or-nothing: when writing or syncing fails (a full disk, a short write, an I/O
error from ``fsync``), the file is truncated back to its previous size under the same lock
and synced again, and :class:`JournalWriteError` says what is on disk: nothing of the record
(the truncation held), or, when the truncation or its sync failed too, that bytes of the
record line may remain from which offset. Only regular files are journals: a FIFO, a device
or a directory is refused before anything is written. Lone surrogates (legal in a JSON
string, not in UTF-8) are written as ``\\udXXX`` escapes (:func:`evalkit.input_files.dumps`).

Reading: ``read`` never stops at a bad line. It reads through :mod:`evalkit.input_files`
(regular files only, bounded by the byte and line caps). Malformed JSON, invalid UTF-8, a line
over the line cap, JSON nested deeper than :data:`MAX_RECORD_DEPTH`, a torn last line, a
non-object line or a record that fails validation is reported in ``diagnostics`` with its line
number (a sealed record whose content no longer matches its seal is ``changed``: it was
edited after it was written); every valid record is returned normalized; run ids seen more than once are listed in
``duplicates`` (the reference engine can append the same run twice).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import (
    InputFileError,
    InputIsADirectoryError,
    InputNotFoundError,
    input_file_error,
)
from evalkit.input_files import (
    InputNotRegularError,
    JsonInputError,
    RawLine,
    clip,
    dumps,
    escape_surrogates,
    parse_json,
    read_bytes,
    split_lines,
)
from evalkit.record import validate_record, validate_stored
from evalkit.record_seal import SealMismatchError, seal_record

if TYPE_CHECKING:
    from evalkit.calibration_status import CalibrationAcceptance

__all__ = [
    "JOURNAL_NAME",
    "MAX_RECORD_DEPTH",
    "DiagnosticKind",
    "JournalDiagnostic",
    "JournalIsADirectoryError",
    "JournalNotFoundError",
    "JournalNotRegularError",
    "JournalRead",
    "JournalWriteError",
    "append",
    "dumps_record",
    "raw_lines",
    "read",
]

#: The journal's file name in a metrics directory (``<metrics-dir>/eval.jsonl``, SPEC section 1).
JOURNAL_NAME = "eval.jsonl"

#: Deepest array/object nesting a journal line may have: a record is four levels deep, so
#: anything far deeper is not a record, and refusing it keeps recursive code away from it.
MAX_RECORD_DEPTH = 32

_BOM = b"\xef\xbb\xbf"


class DiagnosticKind(StrEnum):
    """Why a journal line was not read as a record."""

    TORN = "torn"  # the last line, without its newline, and not parseable: a cut write
    MALFORMED = "malformed"  # not JSON (or not UTF-8, too long, nested too deeply)
    NOT_OBJECT = "not-object"  # JSON, but not an object
    INVALID = "invalid"  # an object that breaks the record contract
    CHANGED = "changed"  # a sealed record whose content no longer matches its seal


class JournalNotFoundError(InputNotFoundError):
    """There is no journal file at the path (an ``EvalkitError`` and a ``FileNotFoundError``)."""


class JournalIsADirectoryError(InputIsADirectoryError):
    """The journal path is a directory (an ``EvalkitError`` and an ``IsADirectoryError``)."""


class JournalNotRegularError(InputNotRegularError):
    """The journal path is a FIFO, a device or a socket: never read from or appended to."""


class JournalWriteError(OSError):
    """An append failed; the message says what is on disk.

    ``offset`` is the journal's size before the append; ``remains`` is False when the journal
    is known to be back at that size (nothing of the record is there) and True when bytes of
    the record line may remain after ``offset`` (the truncation or its sync failed).
    """

    def __init__(
        self, message: str, *, path: Path, offset: int, remains: bool, cause: OSError
    ) -> None:
        super().__init__(cause.errno, message, os.fspath(path))
        self.message = message
        self.offset = offset
        self.remains = remains

    def __str__(self) -> str:
        return self.message


def _journal_os_error(exc: OSError, path: Path) -> OSError:
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


@dataclass(frozen=True)
class JournalDiagnostic:
    """One line of the journal that was skipped, with its 1-based line number.

    ``run_id`` is the line's ``run_id`` when the line is a JSON object carrying a string one
    (so that a lookup by run id can say "line N holds it, but it is not a valid record").
    """

    line: int
    kind: DiagnosticKind
    reason: str
    run_id: str | None = None

    @property
    def line_number(self) -> int:
        """Alias of ``line``."""
        return self.line

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind.value}: {self.reason}"


@dataclass(frozen=True)
class JournalRead:
    """What ``read`` found: valid records (normalized), skipped lines, duplicate run ids.

    ``line_numbers[i]`` is the 1-based line of ``records[i]``; ``duplicates`` maps each run id
    seen on more than one valid line to those line numbers.
    """

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    diagnostics: list[JournalDiagnostic] = field(default_factory=list)
    duplicates: dict[str, list[int]] = field(default_factory=dict)

    def find(self, run_id: str) -> list[tuple[int, dict[str, Any]]]:
        """Return ``(line, record)`` for every valid record with this run id, in file order.

        A run id holding a lone surrogate cannot be typed; when nothing matches exactly, the
        run id as evalkit prints it (the surrogate written ``\\udXXX``) matches too.
        """
        pairs = list(zip(self.line_numbers, self.records, strict=True))
        exact = [(line, rec) for line, rec in pairs if rec.get("run_id") == run_id]
        if exact or "\\u" not in run_id:
            return exact
        return [(line, rec) for line, rec in pairs if escape_surrogates(rec["run_id"]) == run_id]


def dumps_record(record: dict[str, Any]) -> str:
    """Serialize a record as one compact JSON line body (no newline, no NaN/Infinity, lone
    surrogates escaped as ``\\udXXX`` so the line is always UTF-8)."""
    text = dumps(record, separators=(",", ":"))
    if "\n" in text or "\r" in text:  # json escapes these inside strings; keep the invariant
        raise EvalkitError("record serialization produced a line break")
    return text


# ------------------------------------------------------------------------------------ append


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
        raise _journal_os_error(exc, target) from exc
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


def _roll_back(fd: int, target: Path, offset: int, length: int, exc: OSError) -> JournalWriteError:
    """Truncate the journal back to ``offset`` after a failed append; the error to raise says
    what is on disk afterwards."""
    written = getattr(exc, "written", length)  # a failed fsync: the whole line was written
    where = f"journal {str(target)!r}"
    failed = f"appending the record failed ({exc})"
    try:
        os.ftruncate(fd, offset)
    except OSError as trunc:
        return JournalWriteError(
            f"{where}: {failed}, and truncating the journal back to its previous {offset} "
            f"bytes failed too ({trunc}): {written} of the record line's {length} bytes may "
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
            f"may still hold up to {written} bytes of the record line from byte offset {offset}",
            path=target,
            offset=offset,
            remains=written > 0,
            cause=exc,
        )
    return JournalWriteError(
        f"{where}: {failed}; the journal was truncated back to its previous {offset} bytes, "
        "so nothing of the record is on disk",
        path=target,
        offset=offset,
        remains=False,
        cause=exc,
    )


def _sync_new_entry(fd: int, target: Path) -> None:
    """Make a just-created journal's directory entry durable before the record goes in; on
    failure remove the empty file again and say so."""
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


def _append_locked(fd: int, target: Path, payload: bytes, created: bool) -> None:
    if created:
        _sync_new_entry(fd, target)
    offset = os.fstat(fd).st_size
    if offset > 0 and os.pread(fd, 1, offset - 1) != b"\n":
        payload = b"\n" + payload  # a torn previous write: start a fresh line
    try:
        _write_all(fd, payload)
        os.fsync(fd)
    except OSError as exc:
        raise _roll_back(fd, target, offset, len(payload), exc) from exc


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
    written) for an invalid record, :class:`JournalIsADirectoryError` /
    :class:`JournalNotRegularError` (``EvalkitError``) when ``path`` is not a regular file, and
    :class:`JournalWriteError` (an ``OSError`` saying what is on disk) when writing fails.
    ``accepted``: the
    verified calibration certificates a judge dimension may claim (see ``validate_record``).
    """
    validated = validate_record(seal_record(record), accepted=accepted)
    payload = (dumps_record(validated) + "\n").encode("utf-8")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, created = _open_for_append(target)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            _append_locked(fd, target, payload, created)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return validated


# -------------------------------------------------------------------------------------- read


def _line_record(
    number: int,
    raw: bytes,
    unterminated: bool,
    accepted: CalibrationAcceptance | None = None,
) -> dict[str, Any] | JournalDiagnostic:
    """The normalized, validated record on one non-blank line, or why it is not one."""
    try:
        value = parse_json(raw, max_depth=MAX_RECORD_DEPTH)
    except JsonInputError as exc:
        if unterminated:
            kind = DiagnosticKind.TORN
            reason = f"last line is cut off mid-write (no newline, not parseable: {exc})"
        else:
            kind = DiagnosticKind.MALFORMED
            reason = f"not a JSON line ({exc}); a torn earlier write looks like this too"
        return JournalDiagnostic(number, kind, reason)
    if not isinstance(value, dict):
        return JournalDiagnostic(
            number, DiagnosticKind.NOT_OBJECT, f"JSON {type(value).__name__}, not a record object"
        )
    run_id = value.get("run_id")
    try:
        return validate_stored(value, accepted=accepted)
    except EvalkitError as exc:
        kind = (
            DiagnosticKind.CHANGED if isinstance(exc, SealMismatchError) else DiagnosticKind.INVALID
        )
        return JournalDiagnostic(
            number, kind, clip(str(exc), 500), run_id if isinstance(run_id, str) else None
        )


def _journal_lines(target: Path) -> Iterator[RawLine]:
    """The lines of the journal at ``target`` (a BOM before the first line dropped)."""
    try:
        data = read_bytes(target, "journal")
    except OSError as exc:
        raise _journal_os_error(exc, target) from exc
    for line in split_lines(data):
        if line.number == 1 and line.data is not None and line.data.startswith(_BOM):
            line = RawLine(1, line.data[len(_BOM) :], line.unterminated, line.length)
        yield line


def read(
    path: str | os.PathLike[str], *, accepted: CalibrationAcceptance | None = None
) -> JournalRead:
    """Read every line of the journal at ``path``; never stops at a bad line.

    Raises :class:`JournalNotFoundError` when there is no journal and
    :class:`JournalIsADirectoryError` when ``path`` is a directory; both are ``EvalkitError``
    and the matching ``OSError`` subclass, and name the file. A FIFO, a device, a dangling
    symlink or a file over the byte cap is refused the same way (an ``EvalkitError`` naming
    the path and the reason). Blank lines are ignored; a UTF-8 BOM on the first line and a CR
    before the newline are tolerated. ``accepted``: the verified calibration certificates a
    judge dimension may claim (``validate_record``; the default accepts ``uncalibrated``
    only), so a record's validity is a function of content alone.
    """
    target = Path(path)
    result = JournalRead(path=target)
    seen: dict[str, list[int]] = {}
    for line in _journal_lines(target):
        raw = line.data
        if raw is None:
            result.diagnostics.append(
                JournalDiagnostic(
                    line.number,
                    DiagnosticKind.MALFORMED,
                    f"line of {line.length} bytes exceeds the line cap; not read",
                )
            )
            continue
        if not raw.strip():
            continue
        got = _line_record(line.number, raw, line.unterminated, accepted)
        if isinstance(got, JournalDiagnostic):
            result.diagnostics.append(got)
            continue
        result.records.append(got)
        result.line_numbers.append(line.number)
        seen.setdefault(got["run_id"], []).append(line.number)
    result.duplicates.update({rid: lines for rid, lines in seen.items() if len(lines) > 1})
    return result


def raw_lines(path: str | os.PathLike[str], numbers: Iterable[int]) -> dict[int, bytes]:
    """The bytes of the journal's lines ``numbers`` (1-based) as :func:`read` parsed them (a
    BOM before line 1 and a CR before the newline dropped): for a byte-exact comparison."""
    wanted = set(numbers)
    return {
        line.number: line.data
        for line in _journal_lines(Path(path))
        if line.number in wanted and line.data is not None
    }
