r"""Reading a metrics directory (``sessions.jsonl``, ``events.jsonl`` and its rotated history).

Bad data never raises here: every skipped or doubtful line becomes a :class:`Diagnostic`
(file, line, reason) the caller can read, and ``strict=True`` turns the first one into an
:class:`~evalkit.errors.EvalkitError`. The reading mirrors the reference engine byte for byte:

* Files are decoded as UTF-8 with invalid bytes replaced by U+FFFD (Node's ``readFileSync(p,
  'utf8')``), a BOM is *not* stripped, and lines are split on ``\n`` only.
* ``sessions.jsonl`` (the reference's canonical sessions reader): a line is trimmed with
  JavaScript's ``trim()`` (which also removes a BOM, NBSP, ...) and parsed; blank lines are
  skipped silently; a line that does not parse is skipped.
* rubric-v1's ``events.jsonl`` (``readJsonlFile(p, {skipInvalid: true})``): a blank line is
  skipped, the *untrimmed* line is parsed (a BOM makes it unparseable, so it is skipped), and
  any JSON value is kept (rubric-v1 keeps non-object event lines). If the path exists but
  cannot be read, that reference engine failed the whole evaluation (state ``unreadable``).
* rubric-v2's event sources (``parseEventLines``): like rubric-v1, but a line that is not a
  plain object is also counted as unreadable.
* rubric-v2 reads the whole rotated history (SPEC section 1 "Rotation") and reports gaps:
  a missing archive named by a rotation tombstone, a hole in the legacy ``.1``..``.20`` ring,
  a source that cannot be read.
* Files are read through :mod:`evalkit.files.input`: regular files only, bounded by its byte
  and line caps. A path with no directory entry is ``absent``; an entry that cannot be read
  (a directory, a FIFO, a device such as ``/dev/zero``, a dangling symlink, a symlink loop,
  no permission, a file over the cap) is ``unreadable`` and, under rubric-v2, a gap. A
  dangling or looping symlink is deliberately not ``absent``, although the reference's
  ``existsSync`` (which follows symlinks) said so: "no events" and "events we could not read"
  are different evidence states. No conformance vector holds a symlink.

Field access helpers (:func:`get_number`, :func:`get_str`) treat a missing or ill-typed field
as unknown (``None``), never as zero.

Checked during development against a transcription of the reference readers run under Node
(``parseEventLines``, ``readEventsWithRotations``, ``readJsonlFile``, the sessions reader) on
1,900 generated metrics folders: same events, order, unreadable counts, gaps and session values.
One deliberate difference: a *relative* ``archived_as`` is looked up in the metrics folder,
where the reference looked in its working directory.
"""

from __future__ import annotations

import errno
import hashlib
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol

from evalkit.errors import EvalkitError, SessionResolutionError
from evalkit.files.hashing import HashAhead, hash_range
from evalkit.files.input import (
    InputTooLargeError,
    max_file_bytes,
    max_line_bytes,
    open_regular,
    unreadable_reason,
)
from evalkit.js.numbers import is_js_number
from evalkit.js.timestamps import format_iso, parse_iso_z
from evalkit.ledger.parse import (
    TOMBSTONE_EVENT,
    Diagnostic,
    Line,
    Parsed,
    gc_paused,
    parse_file,
)

__all__ = [
    "ARCHIVE_DIR_NAME",
    "ARCHIVE_NAME_RE",
    "LEGACY_RING_MAX",
    "ROTATION_EVENT",
    "Diagnostic",
    "EventReading",
    "EventSink",
    "FileState",
    "Gap",
    "JsonlFile",
    "Ledger",
    "LedgerView",
    "Line",
    "ReadCounts",
    "ReadPoint",
    "get_number",
    "get_path",
    "get_str",
    "iter_diagnostics",
    "prefix_sha256",
    "read_jsonl",
    "read_ledger",
    "read_metrics_dir",
    "read_session_values",
]

#: Event written as the first line of a fresh active file after a rotation (the tombstone).
ROTATION_EVENT = TOMBSTONE_EVENT
#: Folder beside ``events.jsonl`` holding rotated archives.
ARCHIVE_DIR_NAME = "_archive"
#: Exact archive name shape; any other file in ``_archive/`` is not part of the ledger.
ARCHIVE_NAME_RE = re.compile(
    r"events-(?:[0-9]{8}T[0-9]{6}Z|unknown)_[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?\.jsonl\Z"
)
#: Upper bound of the legacy ``events.jsonl.1`` .. ``.20`` ring.
LEGACY_RING_MAX = 20
#: How a ledger file is named in a reason ("ledger file '<path>': ...").
_WHAT = "ledger file"


class EventSink(Protocol):
    """What takes a batch reading's event objects, a block at a time, in file order.

    A reading resumed from a :class:`ReadPoint` also needs the sink's class to have
    ``merged(sinks)``: the sink of consecutive parts of a file, in file order.
    """

    def add(self, records: list[dict[str, Any]]) -> object:
        """Take one block's objects (a list the reader does not keep)."""


FileState = Literal["absent", "empty", "present", "unreadable"]
#: How a rubric reads the events: ``active-file`` (rubric-v1: ``events.jsonl`` only, every
#: parseable line) or ``rotation`` (rubric-v2: object lines of the whole rotated history).
EventReading = Literal["active-file", "rotation"]


@dataclass(frozen=True, slots=True)
class ReadCounts:
    """What the reader counted while parsing a file (so a batch need not keep its records).

    ``n_records``: object lines (rubric-v2's events); ``n_raw_values``: lines ``JSON.parse``
    accepts untrimmed (rubric-v1's); ``tombstones``: the rotation tombstones among the
    objects; ``first_timestamp_ms``: the earliest strict ISO-8601-``Z`` timestamp among them,
    when ``dated``; ``end``: the byte offset after the last complete line, ``next_line`` the
    number the next line gets (where a reading of an appended tail starts); ``partial``: a
    last line without its newline was read too; ``sha256``: of the bytes before ``end`` (when
    asked for); ``resumed_at``: the offset the reading resumed from (0: the whole file);
    ``restarted``: why a :class:`ReadPoint` given was not resumed from (the file changed).
    """

    n_records: int
    n_raw_values: int
    tombstones: tuple[dict[str, Any], ...]
    dated: bool = False
    first_timestamp_ms: float | None = None
    end: int = 0
    next_line: int = 1
    partial: bool = False
    sha256: str | None = None
    resumed_at: int = 0
    restarted: str | None = None


@dataclass(frozen=True)
class ReadPoint:
    """Where an earlier batch reading of a file stopped, and what it had read up to there.

    ``file`` is that reading (:func:`read_jsonl` with a sink and ``hashed``: its
    ``counts.sha256`` hashes the bytes before ``counts.end``), made under the caps
    ``line_cap`` and ``byte_cap``. A reading resumed from it checks that hash against the
    file first, so an appended file is read from ``end`` on and any other change (rewritten,
    rotated, truncated) reads the whole file again.
    """

    file: JsonlFile
    line_cap: int
    byte_cap: int
    #: the file's first ``end`` bytes being hashed already (a rerun: the cursor started it)
    ahead: HashAhead | None = field(default=None, compare=False, repr=False)

    @property
    def end(self) -> int:
        """The byte offset the earlier reading stopped at (after its last complete line)."""
        return self.file.counts.end if self.file.counts is not None else 0


@dataclass(frozen=True)
class JsonlFile:
    """One JSONL file as read, its lines and what the reader said about them.

    ``state`` is ``absent`` (no such path), ``empty`` (exists, no non-blank line), ``present``
    (at least one non-blank line) or ``unreadable`` (a folder where the file should be, no
    permission, ...; ``error`` says which). A file read for a sink (an event source of a batch
    reading, :func:`read_metrics_dir` with ``sink``) keeps no records: ``lines`` then holds only
    the lines that are not objects, ``digest`` is the sink that took the objects block by block,
    and :attr:`event_records` / :attr:`values` / :attr:`raw_values` are not available.
    """

    path: str
    state: FileState
    lines: tuple[Line, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    error: str | None = None
    #: (:attr:`event_records`, :attr:`unreadable_lines`) as the reader found them while parsing
    #: (else computed from :attr:`lines`); derived data, so not compared
    read_split: tuple[tuple[dict[str, Any], ...], tuple[int, ...]] | None = field(
        default=None, repr=False, compare=False
    )
    #: True when the bytes cannot hold a rotation tombstone (its event name does not occur in
    #: them, and no backslash that could start a ``\\u`` escape spelling it), so
    #: :func:`_find_gaps` need not look at every event
    no_tombstone: bool = field(default=False, repr=False, compare=False)
    #: the sink that took the objects (a batch reading); None when they are kept
    digest: Any = field(default=None, repr=False, compare=False)
    #: what the reader counted and found while parsing (None: computed from the records)
    counts: ReadCounts | None = field(default=None, repr=False, compare=False)
    #: of a reading resumed from a :class:`ReadPoint`: the sink of what was read after it
    appended: Any = field(default=None, repr=False, compare=False)

    @property
    def kept(self) -> bool:
        """Whether the records were kept (not handed to a sink)."""
        return self.digest is None

    def _records_kept(self, what: str) -> None:
        if self.digest is not None:
            raise EvalkitError(
                f"{self.path}: {what} is not available: the file was read for a batch, which "
                "keeps no records (read it with read_metrics_dir() to have them)"
            )

    @property
    def exists(self) -> bool:
        """Whether the path has a directory entry (any state but ``absent``)."""
        return self.state != "absent"

    @cached_property
    def values(self) -> tuple[Any, ...]:
        """Every line that parses after the JavaScript trim, any JSON type.

        The sessions reading, before canonicalisation.
        """
        self._records_kept("its values")
        return tuple(ln.value for ln in self.lines if ln.error is None)

    @cached_property
    def raw_values(self) -> tuple[Any, ...]:
        """Every line ``JSON.parse`` accepts *untrimmed*, any JSON type (rubric-v1's events)."""
        self._records_kept("its raw values")
        return tuple(ln.value for ln in self.lines if ln.error is None and not ln.padded)

    @cached_property
    def objects(self) -> tuple[dict[str, Any], ...]:
        """The ``dict`` values among :attr:`values`."""
        self._records_kept("its objects")
        return tuple(
            ln.value for ln in self.lines if ln.error is None and isinstance(ln.value, dict)
        )

    @cached_property
    def event_records(self) -> tuple[dict[str, Any], ...]:
        """What rubric-v2 reads from this source: raw lines that parse to a plain object."""
        self._records_kept("event_records")
        if self.read_split is not None:
            return self.read_split[0]
        # the condition of Line.is_event_record, inlined: this runs once per event line
        return tuple(
            ln.value
            for ln in self.lines
            if ln.error is None and not ln.padded and ln.value.__class__ is dict
        )

    @cached_property
    def unreadable_lines(self) -> tuple[int, ...]:
        """Line numbers rubric-v2 counts as unreadable (malformed, BOM-padded or non-object)."""
        if self.read_split is not None:
            return self.read_split[1]
        return tuple(
            ln.line_no
            for ln in self.lines
            if ln.error is not None or ln.padded or ln.value.__class__ is not dict
        )

    @property
    def unreadable_count(self) -> int:
        """How many lines rubric-v2 counts as unreadable."""
        return len(self.unreadable_lines)

    @cached_property
    def malformed_lines(self) -> tuple[int, ...]:
        """Line numbers that do not parse even after the JavaScript trim.

        Every reader skips them.
        """
        return tuple(ln.line_no for ln in self.lines if ln.error is not None)

    @cached_property
    def first_timestamp_ms(self) -> float | None:
        """Earliest strict ISO-8601-``Z`` timestamp among :attr:`event_records`.

        As the reference's ``summarizeEventRecords`` finds it; it orders rotated sources.
        """
        if self.counts is not None and self.counts.dated:
            return self.counts.first_timestamp_ms
        return _earliest_iso_z(rec.get("timestamp") for rec in self.event_records)

    @cached_property
    def tombstones(self) -> tuple[dict[str, Any], ...]:
        """The rotation tombstones among :attr:`event_records`, in file order."""
        if self.counts is not None:
            return self.counts.tombstones
        if self.no_tombstone:
            return ()
        return tuple(r for r in self.event_records if r.get("event") == ROTATION_EVENT)

    @property
    def n_event_records(self) -> int:
        """How many object lines rubric-v2 reads from this source."""
        return self.counts.n_records if self.counts is not None else len(self.event_records)

    @property
    def n_raw_values(self) -> int:
        """How many lines ``JSON.parse`` accepts untrimmed (rubric-v1's events)."""
        return self.counts.n_raw_values if self.counts is not None else len(self.raw_values)


def _earliest_iso_z(timestamps: Iterable[object]) -> float | None:
    """The smallest :func:`~evalkit.js.timestamps.parse_iso_z` instant among ``timestamps``.

    Skips, without parsing, every string whose first 19 characters (``YYYY-MM-DDTHH:MM:SS``)
    sort after those of the best instant so far. Safe because a strict string's instant is
    never earlier than its characters say: in-range fields order lexically as they do in
    time, and the two overflows ``Date.parse`` allows (day 29-31 past a month's end, hour
    ``24:00``) only move the instant later. A ledger in time order is then parsed once.
    """
    best: float | None = None
    best_key: str | None = None
    for ts in timestamps:
        if ts.__class__ is not str:
            continue
        if best_key is not None and ts[:19] > best_key:  # type: ignore[index]
            continue
        ms = parse_iso_z(ts)
        if ms is not None and (best is None or ms < best):
            best = ms
            key = format_iso(ms)
            best_key = key[:19] if key[0].isdigit() else None  # year 10000: no shortcut
    return best


@dataclass(frozen=True, slots=True)
class Gap:
    """A part of the event history rubric-v2 should have read but could not.

    ``kind`` is the reference's: ``missing-archive`` (a rotation tombstone names an archive
    that is not on disk), ``ring-hole`` (``events.jsonl.N`` missing below a present higher
    slot) or ``unreadable-source`` (a source that exists but cannot be read).
    """

    kind: Literal["missing-archive", "ring-hole", "unreadable-source"]
    archived_as: str
    reported_by: str
    detail: str | None = None


@dataclass(frozen=True)
class Ledger:
    """A metrics directory as read.

    ``events`` is the active ``events.jsonl`` (all rubric-v1 reads); ``event_sources`` is the
    rubric-v2 history in reading order (archives, legacy ring, active file; by earliest
    parseable timestamp, undatable last, ties by path); ``gaps`` what that history lacks.
    """

    path: str
    sessions: JsonlFile
    events: JsonlFile
    event_sources: tuple[JsonlFile, ...]
    gaps: tuple[Gap, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    @property
    def rotation_gaps(self) -> tuple[str, ...]:
        """``archived_as`` of every rotation tombstone whose archive is not on disk."""
        return tuple(g.archived_as for g in self.gaps if g.kind == "missing-archive")

    @property
    def events_v1(self) -> tuple[Any, ...]:
        """rubric-v1's event list: the active file's lines ``JSON.parse`` accepts untrimmed.

        Any JSON type; a BOM-prefixed line is skipped.
        """
        return self.events.raw_values

    @property
    def events_v2(self) -> tuple[dict[str, Any], ...]:
        """rubric-v2's event list: object lines of every source, sources in reading order."""
        out: list[dict[str, Any]] = []
        for src in self.event_sources:
            out.extend(src.event_records)
        return tuple(out)

    @property
    def unreadable_event_lines(self) -> int:
        """rubric-v2's count of unreadable event lines over all sources."""
        return sum(src.unreadable_count for src in self.event_sources)

    @property
    def unreadable_event_refs(self) -> tuple[tuple[str, int], ...]:
        """``(path, line)`` of every unreadable event line, sources in reading order."""
        return tuple((src.path, n) for src in self.event_sources for n in src.unreadable_lines)

    @property
    def events_complete(self) -> bool:
        """True when rubric-v2 saw the whole history (no gap)."""
        return not self.gaps

    def diagnostics_read_by(self, rotation: bool) -> tuple[Diagnostic, ...]:
        """The diagnostics of what a rubric reads.

        All of them for the rotated history (``rotation``, rubric-v2); else those of
        ``sessions.jsonl`` and ``events.jsonl``.
        """
        if rotation:
            return self.diagnostics
        own = {self.sessions.path, self.events.path}
        return tuple(d for d in self.diagnostics if d.file in own)

    def view(self, reading: EventReading) -> LedgerView:
        """What a rubric that reads the events as ``reading`` reads of this ledger.

        Of a batch reading (:func:`read_metrics_dir` with ``sinks``) the events are the sinks
        of the sources read, in reading order (``event_digests``), not the objects.
        """
        rotation = reading == "rotation"
        sources = self.event_sources if rotation else (self.events,)
        digests = tuple(src.digest for src in sources if src.digest is not None)
        if rotation:
            present = any(src.n_event_records for src in sources)
        else:
            present = self.events.n_raw_values > 0
        events: tuple[Any, ...] = ()
        if not digests:
            events = self.events_v2 if rotation else self.events_v1
        return LedgerView(
            session_values=self.sessions.values,
            events=events,
            gap_kinds=tuple(g.kind for g in self.gaps) if rotation else (),
            unreadable_event_lines=self.unreadable_event_lines if rotation else 0,
            diagnostics=self.diagnostics_read_by(rotation),
            event_digests=digests,
            events_present=present,
        )


@dataclass(frozen=True)
class LedgerView:
    """What one rubric reads of a metrics directory.

    rubric-v1 (``active-file``): the active events file with every parseable line, any JSON
    type; rubric-v2 (``rotation``): object lines of the whole rotated history, with its gaps
    (by kind) and the number of unreadable event lines, which the rubric reports in evidence.
    ``diagnostics`` are those of the files this reading reads. A batch reading hands the
    events to sinks instead (``event_digests``; ``events_present`` says whether there were any).
    """

    session_values: tuple[Any, ...]
    events: tuple[Any, ...]
    gap_kinds: tuple[str, ...] = ()
    unreadable_event_lines: int = 0
    diagnostics: tuple[Diagnostic, ...] = ()
    #: a batch reading's sinks, one per source read, in reading order (``events`` is then empty)
    event_digests: tuple[Any, ...] = ()
    #: whether the reading holds any event (``None``: whether ``events`` is non-empty)
    events_present: bool | None = None


# --------------------------------------------------------------------------------------------
# Field access
# --------------------------------------------------------------------------------------------


def get_path(obj: object, *path: str) -> Any:
    """Follow ``path`` through nested dicts.

    ``None`` as soon as a step is not a dict or lacks the key.
    """
    cur: Any = obj
    for key in path:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur


def get_number(obj: object, *path: str) -> int | float | None:
    """The finite number at ``path``, else ``None`` (missing, a string, a bool, NaN, +-inf).

    A missing field is unknown, never 0. The value keeps its type (``int`` stays ``int``).
    """
    value = get_path(obj, *path)
    if is_js_number(value) and math.isfinite(value):
        return value
    return None


def get_str(obj: object, *path: str) -> str | None:
    """The string at ``path``, else ``None``."""
    value = get_path(obj, *path)
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------------------------
# Reading one file
# --------------------------------------------------------------------------------------------


def read_jsonl(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    max_line_bytes_: int | None = None,
    sink: EventSink | None = None,
    dated: bool = False,
    hashed: bool = False,
    resume: ReadPoint | None = None,
) -> JsonlFile:
    """Read one JSONL file a block at a time; never raises for bad content or an unreadable path.

    Each non-blank line becomes a :class:`Line`; malformed, padded (BOM, NBSP) and non-object
    lines also produce a :class:`Diagnostic`. Blank lines (after the JavaScript trim) are
    skipped silently, as by every reference reader. With ``sink`` the objects go to it block
    by block and are not kept (a batch reading; ``dated`` also finds the earliest timestamp
    among them, which orders rotated sources).

    Nothing at the path (``lstat`` finds no entry) is ``absent``. Anything else that is not a
    readable regular file is ``unreadable`` with the reason, never ``absent`` and never an
    unbounded or blocking read: a directory, a FIFO, a device such as ``/dev/zero``, a
    dangling symlink, a symlink loop, no permission. A line over the line cap is a malformed
    line. A file over the byte cap (:func:`evalkit.files.input.max_file_bytes`) is the one
    thing that raises: :class:`~evalkit.files.input.InputTooLargeError` names the file, its
    size and the setting that raises the cap, because reading it as unreadable would turn
    every event-derived verdict into cannot-determine without a word.

    ``hashed``: also hash the bytes read (``counts.sha256``, what a :class:`ReadPoint` checks).
    ``resume`` (with ``sink``): an earlier reading of this file; when the file still starts
    with the bytes it read, only what was appended since is parsed and the two readings are
    joined (``counts.resumed_at``), else the whole file is read (``counts.restarted`` says why).
    """
    p = os.fspath(path)
    if not os.path.lexists(p):
        return JsonlFile(p, "absent")
    try:
        fd = open_regular(p, _WHAT)
    except OSError as exc:
        return _unreadable(p, exc)
    dating = None if sink is None else _Dating(sink, dated)
    line_cap, byte_cap = max_line_bytes(max_line_bytes_), max_file_bytes(max_bytes)
    try:
        with gc_paused():
            prefix, restarted = (None, None)
            if resume is not None and sink is not None:
                prefix, restarted = _resumable(fd, resume, line_cap, byte_cap, dated)
            start = 0 if prefix is None else resume.end  # type: ignore[union-attr]
            parsed = parse_file(
                p,
                fd,
                line_cap=line_cap,
                byte_cap=byte_cap,
                sink=dating,
                offset=start,
                first_line=1 if prefix is None else resume.file.counts.next_line,  # type: ignore[union-attr]
            )
            sha = None
            if hashed or prefix is not None:
                sha = _hash_range(fd, prefix or hashlib.sha256(), start, parsed.end)
    except InputTooLargeError:
        raise
    except OSError as exc:  # an I/O error in the middle of the file
        return _unreadable(p, exc)
    finally:
        os.close(fd)
    read = _as_file(p, parsed, dating, sha=sha, restarted=restarted)
    if prefix is None:
        return read
    return _joined(resume.file, read)  # type: ignore[union-attr]


def _resumable(
    fd: int, point: ReadPoint, line_cap: int, byte_cap: int, dated: bool
) -> tuple[Any, str | None]:
    """The hash of the file's first ``point.end`` bytes when they are those read before.

    Else None and why the whole file is read again.
    """
    counts = point.file.counts
    if counts is None or counts.sha256 is None or counts.partial or point.file.digest is None:
        return None, "the earlier reading cannot be resumed"
    if dated and not counts.dated:
        # a lone source is not dated (dating costs a pass); now several are ordered by date
        return None, "the event history now has several sources, to be ordered by date"
    if (point.line_cap, point.byte_cap) != (line_cap, byte_cap):
        return None, "the line or byte cap changed since the earlier reading"
    size = os.fstat(fd).st_size
    if size < counts.end:
        return None, f"it is shorter ({size} bytes) than the {counts.end} bytes read before"
    h = None if point.ahead is None else point.ahead.result(os.fstat(fd))
    if h is None:
        h = hashlib.sha256()
        _hash_range(fd, h, 0, counts.end)
    if h.hexdigest() != counts.sha256:
        return None, f"its first {counts.end} bytes changed (rewritten or rotated)"
    return h, None


def prefix_sha256(path: str | os.PathLike[str], end: int) -> str | None:
    """sha256 of the first ``end`` bytes of the file at ``path``; None when it holds fewer."""
    try:
        fd = open_regular(os.fspath(path), _WHAT)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size < end:
            return None
        return _hash_range(fd, hashlib.sha256(), 0, end)
    except OSError:
        return None
    finally:
        os.close(fd)


def _hash_range(fd: int, h: Any, start: int, stop: int) -> str:
    """Feed bytes ``start``..``stop`` of ``fd`` to the hash ``h``; its hex digest after them."""
    return str(hash_range(fd, h, start, stop).copy().hexdigest())


def _joined(prefix: JsonlFile, tail: JsonlFile) -> JsonlFile:
    """One file's reading from an earlier reading of its start and a reading of the rest."""
    a, b = prefix.counts, tail.counts
    assert a is not None and b is not None  # both batch readings
    firsts = [t for t in (a.first_timestamp_ms, b.first_timestamp_ms) if t is not None]
    counts = ReadCounts(
        a.n_records + b.n_records,
        a.n_raw_values + b.n_raw_values,
        a.tombstones + b.tombstones,
        dated=a.dated and b.dated,
        first_timestamp_ms=min(firsts) if firsts else None,
        end=b.end,
        next_line=b.next_line,
        partial=b.partial,
        sha256=b.sha256,
        resumed_at=a.end,
    )
    lines = prefix.lines + tail.lines
    return JsonlFile(
        tail.path,
        "present" if lines or counts.n_records else "empty",
        lines,
        prefix.diagnostics + tail.diagnostics,
        read_split=((), prefix.unreadable_lines + tail.unreadable_lines),
        no_tombstone=not counts.tombstones,
        digest=type(prefix.digest).merged((prefix.digest, tail.digest)),
        counts=counts,
        appended=tail.digest,
    )


def _unreadable(p: str, exc: OSError) -> JsonlFile:
    reason = f"cannot read file: {unreadable_reason(exc, _WHAT, p)}"
    return JsonlFile(p, "unreadable", diagnostics=(Diagnostic(p, None, reason),), error=reason)


class _Dating:
    """A sink's wrapper that also finds the earliest timestamp among the objects, if asked."""

    __slots__ = ("dated", "first", "sink")

    def __init__(self, sink: EventSink, dated: bool) -> None:
        self.sink, self.dated = sink, dated
        self.first: float | None = None

    def __call__(self, records: list[dict[str, Any]]) -> None:
        if self.dated:
            first = _earliest_iso_z(rec.get("timestamp") for rec in records)
            if first is not None and (self.first is None or first < self.first):
                self.first = first
        self.sink.add(records)


def _as_file(
    p: str,
    parsed: Parsed,
    dating: _Dating | None,
    *,
    sha: str | None = None,
    restarted: str | None = None,
) -> JsonlFile:
    state: FileState = "present" if parsed.lines or parsed.n_records else "empty"
    counts = ReadCounts(
        parsed.n_records,
        parsed.n_raw_values,
        tuple(parsed.tombstones),
        dated=dating is not None and dating.dated,
        first_timestamp_ms=None if dating is None else dating.first,
        end=parsed.end,
        next_line=parsed.next_line,
        partial=parsed.partial,
        sha256=sha,
        restarted=restarted,
    )
    return JsonlFile(
        p,
        state,
        tuple(parsed.lines),
        tuple(parsed.diagnostics),
        read_split=(tuple(parsed.records), tuple(parsed.unreadable)),
        no_tombstone=not parsed.tombstones,
        digest=None if dating is None else dating.sink,
        counts=counts,
    )


# --------------------------------------------------------------------------------------------
# Reading a metrics directory
# --------------------------------------------------------------------------------------------


def _archive_names(events_path: str) -> tuple[list[str], JsonlFile | None]:
    """The archive paths of ``_archive/``, or the one unreadable source an unlistable folder is.

    An archive folder that is there but cannot be listed (a dangling symlink, a symlink loop,
    no permission) is one unreadable source.
    """
    archive_dir = os.path.join(os.path.dirname(events_path), ARCHIVE_DIR_NAME)
    try:
        names = sorted(os.listdir(archive_dir))
    except OSError as exc:
        plain_file = exc.errno == errno.ENOTDIR and not os.path.islink(archive_dir)
        if plain_file or not os.path.lexists(archive_dir):
            return [], None  # no archive folder: nothing rotated here, not a gap
        if exc.errno == errno.ELOOP:
            why = "a symlink loop"
        elif exc.errno == errno.ENOENT:
            why = "a dangling symlink (its target does not exist)"
        else:
            why = exc.strerror or type(exc).__name__
        reason = f"cannot list the archive folder: {why}"
        diag = Diagnostic(archive_dir, None, reason)
        return [], JsonlFile(archive_dir, "unreadable", diagnostics=(diag,), error=reason)
    return [os.path.join(archive_dir, n) for n in names if ARCHIVE_NAME_RE.match(n)], None


def _ring_slots(events_path: str) -> tuple[list[int], list[int]]:
    # lexists: a dangling symlink in a slot is an unreadable source, not a hole
    present = [i for i in range(1, LEGACY_RING_MAX + 1) if os.path.lexists(f"{events_path}.{i}")]
    highest = present[-1] if present else 0
    holes = [i for i in range(1, highest) if i not in present]
    return present, holes


def _source_order_key(src: JsonlFile) -> tuple[float, str]:
    first = src.first_timestamp_ms
    return (math.inf if first is None else first, src.path)


def _archive_on_disk(target: str, on_disk: set[str], base_dir: str) -> bool:
    if target in on_disk or os.path.abspath(target) in on_disk:
        return True
    # The writer records an absolute path; a relative one is taken relative to the metrics
    # folder (the reference resolved it against its working directory, which a re-run
    # elsewhere cannot reproduce).
    candidate = target if os.path.isabs(target) else os.path.join(base_dir, target)
    return os.path.exists(candidate)


def _find_gaps(
    sources: list[JsonlFile], events_path: str, ring_holes: Iterable[int], base_dir: str
) -> list[Gap]:
    on_disk = {s.path for s in sources} | {os.path.abspath(s.path) for s in sources}
    gaps: list[Gap] = []
    for src in sources:
        for rec in src.tombstones:
            target = rec.get("archived_as")
            if not isinstance(target, str) or not target:
                continue
            if not _archive_on_disk(target, on_disk, base_dir):
                gaps.append(Gap("missing-archive", target, src.path))
    for slot in ring_holes:
        gaps.append(Gap("ring-hole", f"{events_path}.{slot}", events_path))
    for src in sources:
        if src.state == "unreadable":
            gaps.append(Gap("unreadable-source", src.path, src.path, src.error))
    return gaps


def _gap_diagnostic(gap: Gap) -> Diagnostic:
    if gap.kind == "missing-archive":
        return Diagnostic(gap.reported_by, None, f"rotated archive not on disk: {gap.archived_as}")
    return Diagnostic(gap.archived_as, None, "legacy ring slot missing below a present slot")


def read_metrics_dir(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    sinks: Callable[[], EventSink] | None = None,
    resume: Mapping[str, ReadPoint] | None = None,
) -> Ledger:
    """Read ``sessions.jsonl``, ``events.jsonl`` and the rotated event history of ``path``.

    Never raises for bad data unless ``strict=True``, which raises
    :class:`~evalkit.errors.EvalkitError` naming ``file:line: reason`` of the first
    diagnostic; a ledger file over the byte cap raises (:func:`read_jsonl`). A missing
    directory reads as absent files (with a diagnostic). ``sinks`` makes a batch reading: each
    event source hands its objects, block by block, to a sink of its own (``sinks()``) and
    keeps none of them, so the reading holds one block of events at a time. ``resume`` (with
    ``sinks``): earlier readings of event sources by path (:class:`ReadPoint`); each source is
    then hashed, and one that was only appended to is read from where it stopped.
    """
    with gc_paused():
        return _read_metrics_dir(os.fspath(path), strict, sinks, resume)


def _read_metrics_dir(
    root: str,
    strict: bool,
    sinks: Callable[[], EventSink] | None,
    resume: Mapping[str, ReadPoint] | None = None,
) -> Ledger:
    sessions_path = os.path.join(root, "sessions.jsonl")
    events_path = os.path.join(root, "events.jsonl")
    pre: list[Diagnostic] = []
    if not os.path.isdir(root):
        pre.append(Diagnostic(root, None, "metrics directory not found or not a directory"))

    # hashed for a resumable reading: the next batch checks that it was only appended to
    sessions = read_jsonl(sessions_path, hashed=resume is not None)
    archives, unlisted = _archive_names(events_path)
    ring, holes = _ring_slots(events_path)
    paths = [*archives, *(f"{events_path}.{i}" for i in ring)]
    active = os.path.lexists(events_path)
    # one source (the common case) needs no dating
    dated = len(paths) + active + (unlisted is not None) > 1

    def read(p: str) -> JsonlFile:
        if sinks is None:
            return read_jsonl(p)
        if resume is None:
            return read_jsonl(p, sink=sinks(), dated=dated)
        return read_jsonl(p, sink=sinks(), dated=dated, hashed=True, resume=resume.get(p))

    events = read(events_path)
    sources = [] if unlisted is None else [unlisted]
    sources += [read(p) for p in paths]
    if events.exists:
        sources.append(events)
    if len(sources) > 1:
        sources.sort(key=_source_order_key)
    gaps = _find_gaps(sources, events_path, holes, root)

    diagnostics = [*pre, *sessions.diagnostics]
    for src in sources:
        diagnostics.extend(src.diagnostics)
    # unreadable sources already carry their own file-level diagnostic
    diagnostics.extend(_gap_diagnostic(g) for g in gaps if g.kind != "unreadable-source")
    ledger = Ledger(root, sessions, events, tuple(sources), tuple(gaps), tuple(diagnostics))
    if strict and diagnostics:
        raise EvalkitError(f"ledger problem: {diagnostics[0]}")
    return ledger


def read_ledger(
    metrics_dir: str | os.PathLike[str],
    *,
    sinks: Callable[[], EventSink] | None = None,
    resume: Mapping[str, ReadPoint] | None = None,
) -> Ledger:
    """:func:`read_metrics_dir` for the public entry points, with their errors.

    A directory that is not there is a :class:`~evalkit.errors.SessionResolutionError` naming
    it (an absent ``sessions.jsonl`` in an existing one is not), a path that is not a path an
    ``EvalkitError``.
    """
    if not isinstance(metrics_dir, str | os.PathLike):
        raise EvalkitError(
            f"metrics_dir must be a path (str or os.PathLike), got {type(metrics_dir).__name__}"
        )
    if not os.path.isdir(metrics_dir):
        raise SessionResolutionError(
            f"metrics directory not found: {os.fspath(metrics_dir)!s} "
            "(expected a folder holding sessions.jsonl and events.jsonl)"
        )
    return read_metrics_dir(metrics_dir, sinks=sinks, resume=resume)


def read_session_values(metrics_dir: str | os.PathLike[str]) -> tuple[Any, ...]:
    """Parsed ``sessions.jsonl`` values of ``metrics_dir`` (before the canonical reading)."""
    return read_ledger(metrics_dir).sessions.values


def iter_diagnostics(ledger: Ledger) -> Iterator[str]:
    """The ledger's diagnostics as ``file:line: reason`` strings (for CLI output)."""
    for d in ledger.diagnostics:
        yield str(d)
