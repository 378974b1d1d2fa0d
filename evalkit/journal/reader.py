"""The ``eval.jsonl`` journal: append-only, one record per line, the single source of truth.

Writing (:mod:`evalkit.journal.file`, re-exported here): ``append`` validates and seals one
record and appends it as one line under an exclusive lock, fsynced; ``append_many`` and
:class:`JournalAppender` append a batch under one lock, one write per line, one fsync at the
end; every record is all-or-nothing, and a failure says what is on disk.

Reading: ``read`` never stops at a bad line. It reads through :mod:`evalkit.files.input`
(regular files only, bounded by the byte and line caps). Malformed JSON, invalid UTF-8, a line
over the line cap, JSON nested deeper than :data:`MAX_RECORD_DEPTH`, a torn last line, a
non-object line or a record that fails validation is reported in ``diagnostics`` with its line
number (a sealed record whose content no longer matches its seal is ``changed``: it was
edited after it was written); every valid record is returned normalized; run ids seen more than once are listed in
``duplicates`` (the reference engine can append the same run twice).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.display import ROWS_SHOWN, Readable
from evalkit.errors import EvalkitError
from evalkit.files.input import (
    JsonInputError,
    RawLine,
    clip,
    escape_surrogates,
    parse_json_line,
    read_bytes,
    split_lines,
)
from evalkit.journal.chain import ChainReport, check_chain, link_of, reference
from evalkit.journal.file import (
    JOURNAL_NAME,
    JournalAppender,
    JournalIsADirectoryError,
    JournalNotFoundError,
    JournalNotRegularError,
    JournalWriteError,
    append,
    append_many,
    dumps_record,
    journal_os_error,
)
from evalkit.record.contract import validate_stored
from evalkit.record.seal import SealMismatchError

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "JOURNAL_NAME",
    "MAX_RECORD_DEPTH",
    "DiagnosticKind",
    "JournalAppender",
    "JournalDiagnostic",
    "JournalIsADirectoryError",
    "JournalNotFoundError",
    "JournalNotRegularError",
    "JournalRead",
    "JournalWriteError",
    "append",
    "append_many",
    "dumps_record",
    "latest_inputs",
    "latest_records",
    "read",
]

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
        """``line N: kind: reason``."""
        return f"line {self.line}: {self.kind.value}: {self.reason}"


@dataclass(frozen=True, repr=False)
class JournalRead(Readable):
    """What ``read`` found: valid records (normalized), skipped lines, duplicate run ids.

    ``line_numbers[i]`` is the 1-based line of ``records[i]``; ``duplicates`` maps each run id
    seen on more than one valid line to those line numbers; ``chain`` says whether each
    record follows the line before it.
    """

    path: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    diagnostics: list[JournalDiagnostic] = field(default_factory=list)
    duplicates: dict[str, list[int]] = field(default_factory=dict)
    #: the journal's chain (:mod:`evalkit.journal.chain`): where it starts, where it breaks
    chain: ChainReport = field(default_factory=ChainReport)
    #: with ``read(..., keep_lines=True)``: line number -> (its bytes as parsed, BOM and CR
    #: dropped; its parsed value, None when no JSON) for every non-blank line read
    lines: dict[int, tuple[bytes, Any]] | None = None

    def _headline(self) -> str:
        versions = sorted({str(rec.get("rubric_version")) for rec in self.records})
        return (
            f"journal {self.path.name}: {len(self.records)} records "
            f"({', '.join(versions) or 'no rubric'}), {len(self.diagnostics)} line(s) skipped, "
            f"{len(self.duplicates)} run id(s) on several lines"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("file", str(self.path)), ("records", len(self.records))]
        rows += [
            (f"line {d.line}", f"{d.kind.value}: {d.reason}") for d in self.diagnostics[:ROWS_SHOWN]
        ]
        if len(self.diagnostics) > ROWS_SHOWN:
            rows.append(("...", f"and {len(self.diagnostics) - ROWS_SHOWN} more (.diagnostics)"))
        return rows

    def find(self, run_id: str) -> list[tuple[int, dict[str, Any]]]:
        r"""Return ``(line, record)`` for every valid record with this run id, in file order.

        A run id holding a lone surrogate cannot be typed; when nothing matches exactly, the
        run id as evalkit prints it (the surrogate written ``\udXXX``) matches too.
        """
        pairs = list(zip(self.line_numbers, self.records, strict=True))
        exact = [(line, rec) for line, rec in pairs if rec.get("run_id") == run_id]
        if exact or "\\u" not in run_id:
            return exact
        return [(line, rec) for line, rec in pairs if escape_surrogates(rec["run_id"]) == run_id]

    def missing(self, run_id: str) -> str:
        """Why :meth:`find` found no valid record of ``run_id``, for an error message.

        A line that holds the run id but is no valid record (changed after it was written, a
        broken field) is named with its line and the reason, never "no record".
        """
        held = [d for d in self.diagnostics if d.run_id == run_id]
        if held:
            d = held[-1]
            return f"line {d.line} holds run id {run_id!r} but is not a valid record: {d.reason}"
        return f"no valid record with run id {run_id!r}"


# -------------------------------------------------------------------------------------- read


def _line_record(
    number: int,
    raw: bytes,
    unterminated: bool,
    accepted: CalibrationAcceptance | None = None,
) -> tuple[dict[str, Any] | JournalDiagnostic, Any]:
    """The normalized, validated record on one non-blank line, or why it is not one.

    With the line's parsed value (``None`` when it is no JSON).
    """
    try:
        value, finite = parse_json_line(raw, max_depth=MAX_RECORD_DEPTH)
    except JsonInputError as exc:
        if unterminated:
            kind = DiagnosticKind.TORN
            reason = f"last line is cut off mid-write (no newline, not parseable: {exc})"
        else:
            kind = DiagnosticKind.MALFORMED
            reason = f"not a JSON line ({exc}); a torn earlier write looks like this too"
        return JournalDiagnostic(number, kind, reason), None
    if not isinstance(value, dict):
        return JournalDiagnostic(
            number, DiagnosticKind.NOT_OBJECT, f"JSON {type(value).__name__}, not a record object"
        ), value
    run_id = value.get("run_id")
    try:
        return validate_stored(value, accepted=accepted, finite=finite), value
    except EvalkitError as exc:
        kind = (
            DiagnosticKind.CHANGED if isinstance(exc, SealMismatchError) else DiagnosticKind.INVALID
        )
        return JournalDiagnostic(
            number, kind, clip(str(exc), 500), run_id if isinstance(run_id, str) else None
        ), value


def _journal_lines(target: Path) -> Iterator[tuple[RawLine, bytes | None]]:
    """The lines of the journal at ``target`` (a BOM before the first line dropped).

    Each with its bytes exactly as in the file (BOM and CR kept: what a link hashes), None
    for a line over the line cap.
    """
    try:
        data = read_bytes(target, "journal")
    except OSError as exc:
        raise journal_os_error(exc, target) from exc
    for line in split_lines(data):
        exact = line.data
        if exact is not None and line.length > len(exact):
            exact += b"\r"  # split_lines drops a CR before the newline
        if line.number == 1 and line.data is not None and line.data.startswith(_BOM):
            line = RawLine(1, line.data[len(_BOM) :], line.unterminated, line.length)
        yield line, exact


def read(
    path: str | os.PathLike[str],
    *,
    accepted: CalibrationAcceptance | None = None,
    keep_lines: bool = False,
) -> JournalRead:
    """Read every line of the journal at ``path``; never stops at a bad line.

    Raises :class:`JournalNotFoundError` when there is no journal and
    :class:`JournalIsADirectoryError` when ``path`` is a directory; both are ``EvalkitError``
    and the matching ``OSError`` subclass, and name the file. A FIFO, a device, a dangling
    symlink or a file over the byte cap is refused the same way (an ``EvalkitError`` naming
    the path and the reason). Blank lines are ignored; a UTF-8 BOM on the first line and a CR
    before the newline are tolerated. ``accepted``: the verified calibration certificates a
    judge dimension may claim (``validate_record``; the default accepts ``uncalibrated``
    only), so a record's validity is a function of content alone. ``keep_lines``: keep each
    line's bytes and parsed value too (``JournalRead.lines``), for a reader that compares them.
    """
    target = Path(path)
    result = JournalRead(path=target, lines={} if keep_lines else None)
    seen: dict[str, list[int]] = {}
    links: list[tuple[int, str | None, bool, Any]] = []
    for line, exact in _journal_lines(target):
        raw = line.data
        if raw is None:
            result.diagnostics.append(
                JournalDiagnostic(
                    line.number,
                    DiagnosticKind.MALFORMED,
                    f"line of {line.length} bytes exceeds the line cap; not read",
                )
            )
            links.append((line.number, None, False, None))
            continue
        if not raw.strip():
            continue
        got, value = _line_record(line.number, raw, line.unterminated, accepted)
        if result.lines is not None:
            result.lines[line.number] = (raw, value)
        linked, link = link_of(value)
        is_record = (
            linked or not isinstance(got, JournalDiagnostic) or (got.kind is DiagnosticKind.CHANGED)
        )
        ref = reference(exact, value) if exact is not None else None
        links.append((line.number, ref, is_record, link if linked else ...))
        if isinstance(got, JournalDiagnostic):
            result.diagnostics.append(got)
            continue
        result.records.append(got)
        result.line_numbers.append(line.number)
        seen.setdefault(got["run_id"], []).append(line.number)
    result.duplicates.update({rid: lines for rid, lines in seen.items() if len(lines) > 1})
    return replace(result, chain=check_chain(links))


#: what names a run or places its record in a journal: two runs over the same inputs differ
#: only there (:func:`latest_records`)
_PLACING = ("run_id", "timestamp")
_PLACING_PROVENANCE = ("record_sha256", "previous_line_sha256")


def latest_records(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Session id -> its latest record, without what names the run or places it in a journal.

    ``records`` in journal order. What an incremental run must leave as a full rescore would:
    the records' content, whatever run wrote each and wherever it landed.
    """
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        provenance = {k: v for k, v in rec["provenance"].items() if k not in _PLACING_PROVENANCE}
        body = {k: v for k, v in rec.items() if k not in _PLACING}
        out[rec["session_id"]] = {**body, "provenance": provenance}
    return out


def latest_inputs(
    read: JournalRead,
    *,
    rubric_version: str,
    rubric_sha256: str,
    model: Mapping[str, Any],
    handle: str | None,
) -> dict[str, str]:
    """Session id -> ``provenance.inputs_sha256`` of its latest valid record of a rubric.

    The latest record under ``rubric_version`` counts, for the sessions whose latest such
    record was scored under the same rubric text (``rubric_sha256``) with the same run inputs
    that change a record's content (``model`` id and source, ``handle``) and carries an inputs
    hash: a batch that finds the same hash for a session has nothing new to score for it
    (``evalkit score --all --journal``). The run's environment (plugin version, platform, host,
    engine commit) and its timestamp do not count: re-running a newer evalkit over an unchanged
    ledger adds nothing.
    """
    latest: dict[str, dict[str, Any]] = {}
    for rec in read.records:
        if rec["rubric_version"] == rubric_version:
            latest[rec["session_id"]] = rec
    wanted = {"id": model["id"], "source": model["source"]}
    out: dict[str, str] = {}
    for session_id, rec in latest.items():
        inputs = rec["provenance"].get("inputs_sha256")
        if (
            isinstance(inputs, str)
            and rec["provenance"]["rubric_sha256"] == rubric_sha256
            and rec["model"] == wanted
            and rec["handle"] == handle
        ):
            out[session_id] = inputs
    return out
