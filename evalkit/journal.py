"""The ``eval.jsonl`` journal: append-only, one record per line, the single source of truth.

Writing: ``append`` validates the record, then writes exactly one complete line while holding
an exclusive ``fcntl.flock`` on the journal file itself, and fsyncs before releasing the lock.
Earlier bytes are never rewritten; when the file does not end in a newline (a writer died in
the middle of a line) the new record starts on a fresh line, so the torn fragment stays a
single unreadable line and never swallows the new record.

Reading: ``read`` never stops at a bad line. Malformed JSON, a torn last line, a non-object
line or a record that fails validation is reported in ``diagnostics`` with its line number;
every valid record is returned normalized; run ids seen more than once are listed in
``duplicates`` (the reference engine can append the same run twice).
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import InputIsADirectoryError, InputNotFoundError, input_file_error
from evalkit.record import normalize_record, validate_record

if TYPE_CHECKING:
    from evalkit.calibration_status import CalibrationAcceptance

__all__ = [
    "DiagnosticKind",
    "JournalDiagnostic",
    "JournalIsADirectoryError",
    "JournalNotFoundError",
    "JournalRead",
    "append",
    "dumps_record",
    "read",
]


class DiagnosticKind(StrEnum):
    """Why a journal line was not read as a record."""

    TORN = "torn"  # the last line, without its newline, and not parseable: a cut write
    MALFORMED = "malformed"  # not JSON (or not UTF-8)
    NOT_OBJECT = "not-object"  # JSON, but not an object
    INVALID = "invalid"  # an object that breaks the record contract


class JournalNotFoundError(InputNotFoundError):
    """There is no journal file at the path (an ``EvalkitError`` and a ``FileNotFoundError``)."""


class JournalIsADirectoryError(InputIsADirectoryError):
    """The journal path is a directory (an ``EvalkitError`` and an ``IsADirectoryError``)."""


def _journal_os_error(exc: OSError, path: Path) -> OSError:
    """The journal's own error for a path the user got wrong; other OSErrors unchanged."""
    if isinstance(exc, FileNotFoundError):
        return JournalNotFoundError(
            f"journal {str(path)!r}: no such file (nothing has been recorded there)",
            path,
            exc.errno,
        )
    if isinstance(exc, IsADirectoryError):
        return JournalIsADirectoryError(
            f"journal {str(path)!r}: is a directory, not a journal file "
            "(name the eval.jsonl file inside it)",
            path,
            exc.errno,
        )
    return input_file_error(exc, "journal", path)


@dataclass(frozen=True)
class JournalDiagnostic:
    """One line of the journal that was skipped, with its 1-based line number."""

    line: int
    kind: DiagnosticKind
    reason: str

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
        """Return ``(line, record)`` for every valid record with this run id, in file order."""
        return [
            (line, rec)
            for line, rec in zip(self.line_numbers, self.records, strict=True)
            if rec.get("run_id") == run_id
        ]


def dumps_record(record: dict[str, Any]) -> str:
    """Serialize a record as one compact JSON line body (no newline, no NaN/Infinity)."""
    text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if "\n" in text or "\r" in text:  # json escapes these inside strings; keep the invariant
        raise EvalkitError("record serialization produced a line break")
    return text


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def append(
    path: str | os.PathLike[str],
    record: dict[str, Any],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> dict[str, Any]:
    """Validate ``record`` and append it to the journal at ``path`` as one line; return it.

    Safe across processes: the write happens under an exclusive ``flock`` on the journal and is
    fsynced before the lock is released. Nothing already in the file is rewritten. Missing
    parent directories are created. Raises ``ValidationError`` (nothing written) for an invalid
    record, :class:`JournalIsADirectoryError` (also an ``EvalkitError``) when ``path`` is a
    directory, and ``OSError`` when the file cannot be written. ``accepted``: the verified
    calibration certificates a judge dimension may claim (see ``validate_record``).
    """
    validated = validate_record(record, accepted=accepted)
    payload = (dumps_record(validated) + "\n").encode("utf-8")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    created = not target.exists()
    try:
        fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _journal_os_error(exc, target) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # a torn previous write: start a fresh line
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    if created:  # make the new directory entry durable too
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return validated


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def read(
    path: str | os.PathLike[str], *, accepted: CalibrationAcceptance | None = None
) -> JournalRead:
    """Read every line of the journal at ``path``; never stops at a bad line.

    Raises :class:`JournalNotFoundError` when there is no journal and
    :class:`JournalIsADirectoryError` when ``path`` is a directory; both are ``EvalkitError``
    and the matching ``OSError`` subclass, and name the file. Blank lines are ignored; a UTF-8
    BOM on the first line and a CR before the newline are tolerated. ``accepted``: the verified
    calibration certificates a judge dimension may claim (``validate_record``; the default
    accepts ``uncalibrated`` only), so a record's validity is a function of content alone.
    """
    target = Path(path)
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise _journal_os_error(exc, target) from exc
    raw_lines = data.split(b"\n")
    ends_with_newline = data.endswith(b"\n")
    if ends_with_newline:
        raw_lines.pop()  # the empty string after the final newline

    result = JournalRead(path=target)
    seen: dict[str, list[int]] = {}
    last_index = len(raw_lines) - 1
    for index, raw in enumerate(raw_lines):
        number = index + 1
        if index == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            continue
        unterminated = index == last_index and not ends_with_newline
        try:
            value = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as exc:
            if unterminated:
                kind = DiagnosticKind.TORN
                reason = f"last line is cut off mid-write (no newline, not parseable: {exc})"
            else:
                kind = DiagnosticKind.MALFORMED
                reason = f"not a JSON line ({exc}); a torn earlier write looks like this too"
            result.diagnostics.append(JournalDiagnostic(number, kind, reason))
            continue
        if not isinstance(value, dict):
            result.diagnostics.append(
                JournalDiagnostic(
                    number,
                    DiagnosticKind.NOT_OBJECT,
                    f"JSON {type(value).__name__}, not a record object",
                )
            )
            continue
        try:
            rec = validate_record(normalize_record(value), accepted=accepted)
        except EvalkitError as exc:
            result.diagnostics.append(JournalDiagnostic(number, DiagnosticKind.INVALID, str(exc)))
            continue
        result.records.append(rec)
        result.line_numbers.append(number)
        seen.setdefault(rec["run_id"], []).append(number)
    result.duplicates.update({rid: lines for rid, lines in seen.items() if len(lines) > 1})
    return result
