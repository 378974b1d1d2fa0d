r"""The journal file on disk: errors that name it, and all-or-nothing appends under one lock.

The mechanism is the one line appender of :mod:`evalkit.files.append` (locked, whole lines,
fsynced, all or nothing, regular files only); this module adds what makes a line a journal
record: ``append`` validates and seals one record, then writes exactly one complete line while
holding an exclusive ``fcntl.flock`` on the journal file itself, and fsyncs before releasing the
lock. :class:`JournalAppender` does the same for a batch (``evalkit score --all --journal``):
one lock for the batch, one write per line, one fsync at the end. Earlier bytes are never
rewritten; when the file does not end in a newline (a writer died in the middle of a line) the
first new record starts on a fresh line, so the torn fragment stays a single unreadable line
and never swallows a record.

Every appended line is sealed (:func:`evalkit.record.seal.seal_record`: its
``provenance.record_sha256`` is computed over the validated record, last), so a line edited
afterwards no longer matches its seal and is read as ``changed``, never as a record.

All-or-nothing, per record: when writing a line fails (a full disk, a short write, an I/O
error, a signal), the file is truncated back to its size before that line under the same lock
and synced (the records of the batch before it are then on disk); when the final ``fsync``
fails, the file is truncated back to its size before the batch. :class:`JournalWriteError`
says what is on disk: nothing of the record (or of the batch), or, when the truncation or its
sync failed too, that bytes may remain from which offset. Only regular files are journals: a
FIFO, a device or a directory is refused before anything is written. Lone surrogates (legal in
a JSON string, not in UTF-8) are written as ``\udXXX`` escapes
(:func:`evalkit.files.input.dumps`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.append import AppendError, AppendHold, FirstLine, encode_line, open_for_append
from evalkit.files.errors import (
    InputFileError,
    InputIsADirectoryError,
    InputNotFoundError,
    input_file_error,
)
from evalkit.files.input import InputNotRegularError, compact_bytes
from evalkit.journal.chain import CHAIN_KEY, last_line_reference
from evalkit.record.contract import validate_record
from evalkit.record.seal import seal_record, seal_with_canonical, without_seal

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "JOURNAL_LINES",
    "JOURNAL_NAME",
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

#: The journal's file name in a metrics directory (``<metrics-dir>/eval.jsonl``, SPEC section 1).
JOURNAL_NAME = "eval.jsonl"
#: A journal's lines: records (ours and the reference engine's, whatever their key order, a
#: torn one included). A file whose first line is none is never appended to.
JOURNAL_LINES = FirstLine(
    "journal records", re.compile(rb'^\s*\{.*"record_kind"\s*:\s*"session-eval"')
)


class JournalNotFoundError(InputNotFoundError):
    """There is no journal file at the path (an ``EvalkitError`` and a ``FileNotFoundError``)."""


class JournalIsADirectoryError(InputIsADirectoryError):
    """The journal path is a directory (an ``EvalkitError`` and an ``IsADirectoryError``)."""


class JournalNotRegularError(InputNotRegularError):
    """The journal path is a FIFO, a device or a socket: never read from or appended to."""


class JournalWriteError(AppendError):
    """An append to the journal failed; the message says what is on disk.

    ``offset`` is the journal's size before the record (or the batch) that failed;
    ``remains`` is False when the journal is known to be back at that size (nothing of it is
    there) and True when bytes may remain after ``offset`` (the truncation or its sync
    failed). ``appended`` counts the records of a batch that are on disk before ``offset``.
    """


def journal_os_error(exc: OSError, path: Path) -> OSError:
    """The journal's own error for a path the user got wrong; other OSErrors unchanged."""
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
            f"(name the {JOURNAL_NAME} file inside it)",
            path,
            exc.errno,
        )
    if isinstance(exc, InputNotRegularError):
        return JournalNotRegularError(str(exc), path, exc.errno)
    if isinstance(exc, InputFileError):
        return exc
    return input_file_error(exc, "journal", path)


#: A record as one compact JSON line body (no newline, no NaN/Infinity, lone surrogates
#: escaped): the journal's name for :func:`evalkit.files.append.encode_line`.
dumps_record = encode_line


def _linked(record: Mapping[str, Any], previous: str | None) -> dict[str, Any]:
    """``record`` without its seal, its provenance linked to the line before it.

    A shallow copy: only the top level and ``provenance`` are new. A record that is not a
    JSON object with a ``provenance`` object is returned as it is, for validation to refuse.
    """
    out = without_seal(record) if isinstance(record, Mapping) else record
    provenance = out.get("provenance") if isinstance(out, dict) else None
    if isinstance(provenance, Mapping):
        out["provenance"] = {
            **{k: v for k, v in provenance.items() if k != CHAIN_KEY},
            CHAIN_KEY: previous,
        }
    return out  # type: ignore[return-value]


class JournalAppender:
    """Appends records to one journal under one exclusive lock (a context manager).

    Entering opens the journal (created when missing, with its parent directories) and takes
    the lock; :meth:`append` validates and seals a record and writes its line (one write, no
    sync); leaving syncs once and releases the lock. A failed write truncates the journal back
    to the size before that record and raises :class:`JournalWriteError` (the records appended
    before it stay, and are synced); a failed final sync truncates it back to its size at
    entry. While the lock is held no other evalkit process appends, so a caller may read the
    journal (``evalkit.journal.reader.read``) and decide what to append from what it holds. The
    mechanism is :class:`evalkit.files.append.AppendHold`.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, accepted: CalibrationAcceptance | None = None
    ) -> None:
        self.path = Path(path)
        self.accepted = accepted
        self._hold: AppendHold | None = None
        self._previous: str | None = None

    @property
    def appended(self) -> int:
        """How many records this appender has written so far."""
        return 0 if self._hold is None else self._hold.appended

    def __enter__(self) -> JournalAppender:
        """Open and lock the journal, find the link of the first record; the appender itself."""
        fd = open_for_append(
            self.path,
            "journal",
            owner=JOURNAL_LINES,
            map_error=journal_os_error,
            error_type=JournalWriteError,
        )
        hold = AppendHold(fd, self.path, "journal", unit="record", error_type=JournalWriteError)
        try:
            hold.__enter__()
            try:
                # under the lock: no other appender can add a line before this one
                self._previous = last_line_reference(fd)
            except BaseException:
                hold.__exit__(None, None, None)
                raise
        except BaseException:
            os.close(fd)
            raise
        self._hold = hold
        return self

    def append(self, record: Mapping[str, Any], *, owned: bool = False) -> dict[str, Any]:
        """Chain, validate and seal ``record``, write its line; return the record as written.

        Its ``provenance.previous_line_sha256`` is set to the link of the line before it
        (:mod:`evalkit.journal.chain`), then the seal is computed over the record (once, and
        it is what the next record's link names), and the line is encoded once. ``owned``: the caller built ``record`` for this call and hands it
        over (it is not copied). ``ValidationError`` (nothing written) for an invalid record;
        :class:`JournalWriteError` when the write fails (the journal is back at its size
        before this record).
        """
        if self._hold is None:
            raise EvalkitError("JournalAppender.append outside its with-block")
        validated = validate_record(
            _linked(record, self._previous), accepted=self.accepted, owned=owned
        )
        sealed, canonical = seal_with_canonical(validated)
        data = compact_bytes(sealed, canonical)  # by orjson where the canonical bytes allow
        if b"\n" in data or b"\r" in data:  # json escapes these inside strings
            raise EvalkitError("JSON serialization produced a line break")
        self._hold.write([data.decode("utf-8")])
        self._previous = sealed["provenance"]["record_sha256"]
        return sealed

    def __exit__(self, *exc_info: object) -> None:
        """Sync the batch (all of it, or none: see the class), release the lock, close."""
        hold = self._hold
        if hold is None:
            return
        try:
            hold.__exit__(*exc_info)
        finally:
            os.close(hold.fd)


def append(
    path: str | os.PathLike[str],
    record: dict[str, Any],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> dict[str, Any]:
    """Validate ``record``, append it sealed to the journal at ``path``; return it as written.

    The record takes one line; any seal it carried is recomputed over the record as written.
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
    # refused before the journal is opened (or created); the link is known under the lock
    validate_record(seal_record(record), accepted=accepted)
    with JournalAppender(path, accepted=accepted) as out:
        return out.append(record)


def append_many(
    path: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> list[dict[str, Any]]:
    """Append ``records`` under one lock, one line each, one fsync; return them as written.

    ``records`` may be any iterable (consumed once). Each record is all-or-nothing: on a
    failure the records before it stay (and are synced), see :class:`JournalAppender`.
    """
    with JournalAppender(path, accepted=accepted) as out:
        return [out.append(record) for record in records]
