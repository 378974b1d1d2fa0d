"""A journal's cursor: how far a batch read each ledger file, so a rerun reads only what was added.

``eval.jsonl.cursor`` beside the journal holds, per event source the last batch read, where its
reading stopped, the sha256 of the bytes before that point and what they held (the event
digest, the lines that are not events, the counts), and, for the journal itself, its size, its
sha256 and each session's latest inputs hash under the run's rubric and inputs. A rerun
resumes a source only when the file still starts with those bytes, and uses the journal's map
only when the journal is byte for byte the one hashed; anything else (rewritten, rotated,
truncated, another evalkit version) is read whole again, and the batch says why. The cursor
is a cache keyed by content hashes: deleting it costs one full read, never a record.
``docs/INCREMENTAL.md`` has the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalkit._version import __version__
from evalkit.files.hashing import HashAhead
from evalkit.files.input import dumps, fast_json, max_file_bytes, max_line_bytes, orjson_bytes
from evalkit.ledger.parse import Diagnostic, Line
from evalkit.ledger.reader import JsonlFile, Ledger, ReadCounts, ReadPoint
from evalkit.scoring.measure import EventDigest

__all__ = [
    "CURSOR_FORM",
    "NO_CURSOR",
    "Cursor",
    "HashedPrefix",
    "JournalPoint",
    "cursor_path",
    "file_sha256",
    "load_cursor",
    "save_cursor",
]

#: Names the cursor's layout; another layout (or evalkit version) is not resumed from.
CURSOR_FORM = "evalkit-cursor/2"
_BLOCK = 8 << 20
#: Why :func:`load_cursor` found none on a first batch (a full read, nothing to say).
NO_CURSOR = "no cursor yet"


@dataclass(frozen=True)
class HashedPrefix:
    """A file's first ``length`` bytes, hashed: their sha256 object, to go on from."""

    sha256: Any
    length: int


@dataclass(frozen=True)
class JournalPoint:
    """The journal as a batch left it: size, sha256, and the latest inputs under ``key``."""

    end: int
    sha256: str
    key: Mapping[str, Any]
    latest: Mapping[str, str]
    #: what the batch read and measured (:class:`evalkit.scoring.affected.ScoringState`)
    state: Mapping[str, Any] | None = None
    #: the journal's first ``end`` bytes being hashed already (the cursor started it)
    ahead: HashAhead | None = field(default=None, compare=False, repr=False)

    def check(
        self, journal_path: str | os.PathLike[str], key: Mapping[str, Any]
    ) -> tuple[str | None, HashedPrefix | None]:
        """Why the journal or ``key`` is not the cursor's (None: it is), and the journal hashed.

        The hashed journal (None unless it is the cursor's) lets :func:`file_sha256` hash only
        what a batch appends after it, not the journal's first ``end`` bytes again.
        """
        if dict(key) != dict(self.key):
            return "the rubric, model or handle differs from the cursor's", None
        try:
            size = os.path.getsize(journal_path)
        except OSError as exc:
            return f"cannot read the journal ({exc.strerror})", None
        hashed = None
        if size == self.end:
            ahead = None if self.ahead is None else self.ahead.result(os.stat(journal_path))
            hashed = ahead if ahead is not None else _sha256_of(journal_path)
        if hashed is None or hashed.hexdigest() != self.sha256:
            return "the journal changed since the cursor was written", None
        return None, HashedPrefix(hashed, size)


@dataclass(frozen=True)
class Cursor:
    """Earlier readings of the event sources, by path, and the journal's point (if kept)."""

    points: Mapping[str, ReadPoint]
    journal: JournalPoint | None


def cursor_path(journal_path: str | os.PathLike[str]) -> Path:
    """Where the cursor of the journal at ``journal_path`` lives."""
    return Path(f"{os.fspath(journal_path)}.cursor")


def file_sha256(path: str | os.PathLike[str], prefix: HashedPrefix | None = None) -> str:
    """sha256 (hex) of the file's bytes, read a block at a time.

    With ``prefix``, only the bytes after it are read: the caller knows the file still starts
    with them (the journal, under its lock since it was checked).
    """
    if prefix is None:
        return _sha256_of(path).hexdigest()
    return _sha256_of(path, prefix.sha256.copy(), prefix.length).hexdigest()


def _sha256_of(path: str | os.PathLike[str], h: Any = None, start: int = 0) -> Any:
    h = hashlib.sha256() if h is None else h
    with open(path, "rb") as f:
        f.seek(start)
        while chunk := f.read(_BLOCK):
            h.update(chunk)
    return h


def load_cursor(
    journal_path: str | os.PathLike[str], *, journal_ahead: bool = True
) -> tuple[Cursor | None, str | None]:
    """The journal's cursor, or None and why there is none to use.

    The prefixes it will have checked (each event source's, and the journal's unless
    ``journal_ahead`` is False) start being hashed in threads at once
    (:class:`~evalkit.files.hashing.HashAhead`), while the caller reads the ledger.
    """
    path = cursor_path(journal_path)
    if not path.exists():
        return None, NO_CURSOR
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        meta = _loads(arrays.pop("meta").tobytes())
        if meta.get("form") != CURSOR_FORM or meta.get("evalkit") != __version__:
            return None, "cursor: written by another evalkit version"
        points = {
            src["path"]: _point(
                src, {k[len(f"{i}.") :]: v for k, v in arrays.items() if k.startswith(f"{i}.")}
            )
            for i, src in enumerate(meta["sources"])
        }
        j = meta.get("journal")
        point = None
        if j is not None:
            ahead = HashAhead(journal_path, j["end"]) if journal_ahead else None
            point = JournalPoint(
                j["end"], j["sha256"], j["key"], j["latest"], j.get("state"), ahead
            )
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a cursor is a cache: read whole
        return None, f"cursor: cannot be read ({type(exc).__name__}: {exc})"
    return Cursor(points, point), None


def _loads(data: bytes) -> Any:
    """The cursor's JSON, as ``json`` reads it; through orjson first when installed.

    The cursor holds values the ledger reading made (integers within 2**53, floats, strings),
    which orjson reads the same; what only ``json`` reads (Infinity, a lone surrogate) makes
    orjson refuse, and ``json`` reads it.
    """
    if fast_json is None:
        return json.loads(data)
    try:
        return fast_json.loads(data)
    except fast_json.JSONDecodeError:
        return json.loads(data)


def _point(src: Mapping[str, Any], arrays: Mapping[str, Any]) -> ReadPoint:
    c = src["counts"]
    counts = ReadCounts(
        c["n_records"],
        c["n_raw_values"],
        tuple(c["tombstones"]),
        dated=c["dated"],
        first_timestamp_ms=c["first_timestamp_ms"],
        end=c["end"],
        next_line=c["next_line"],
        sha256=c["sha256"],
    )
    lines = tuple(
        Line(n, None if v is None else json.loads(v), e, p) for n, v, e, p in src["lines"]
    )
    file = JsonlFile(
        src["path"],
        src["state"],
        lines,
        tuple(Diagnostic(f, ln, r) for f, ln, r in src["diagnostics"]),
        read_split=((), tuple(src["unreadable"])),
        no_tombstone=not counts.tombstones,
        digest=EventDigest.from_state(arrays, src["digest"]),
        counts=counts,
    )
    ahead = HashAhead(src["path"], counts.end) if counts.sha256 is not None else None
    return ReadPoint(file, src["line_cap"], src["byte_cap"], ahead)


def save_cursor(
    journal_path: str | os.PathLike[str], ledger: Ledger, journal: JournalPoint | None
) -> None:
    """Write the cursor of ``ledger`` as read and the journal's point (replacing it whole).

    Sources read with a hash and no last line cut short are kept; a write that fails leaves
    no cursor (the next batch reads whole), never half of one.
    """
    sources: list[dict[str, Any]] = []
    arrays: dict[str, Any] = {}
    for src in _resumable(ledger.event_sources):
        digest_arrays, digest_meta = src.digest.to_state()
        i = len(sources)
        arrays.update({f"{i}.{k}": v for k, v in digest_arrays.items()})
        sources.append(_source_meta(src, digest_meta))
    meta = {
        "form": CURSOR_FORM,
        "evalkit": __version__,
        "sources": sources,
        "journal": None
        if journal is None
        else {
            "end": journal.end,
            "sha256": journal.sha256,
            "key": dict(journal.key),
            "latest": dict(journal.latest),
            "state": None if journal.state is None else dict(journal.state),
        },
    }
    text = _meta_json(meta)
    target = cursor_path(journal_path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:  # written in place, not built in memory first
            np.savez(fh, meta=np.frombuffer(text, dtype=np.uint8), **arrays)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        with contextlib.suppress(OSError):
            target.unlink()  # a stale cursor would be checked, but none is cheaper to trust


def _meta_json(meta: Mapping[str, Any]) -> bytes:
    """The cursor's metadata as JSON: through orjson when installed, else ``json``.

    orjson writes a large ledger's cursor about ten times faster. It writes NaN and Infinity
    as ``null``, but the metadata holds no such float (the exit codes, any JSON values, are kept
    as arrays and ``json``-written text: ``EventDigest.to_state``); what orjson
    refuses (a lone surrogate, an integer beyond 64 bits) goes through ``json``, which writes
    what :func:`_loads` reads back.
    """
    data = orjson_bytes(meta)
    return dumps(meta, allow_nan=True).encode("utf-8") if data is None else data


def _resumable(sources: Sequence[JsonlFile]) -> list[JsonlFile]:
    return [
        s
        for s in sources
        if s.state != "unreadable"
        and s.digest is not None
        and s.counts is not None
        and s.counts.sha256 is not None
        and not s.counts.partial
    ]


def _source_meta(src: JsonlFile, digest: Mapping[str, Any]) -> dict[str, Any]:
    c = src.counts
    assert c is not None
    return {
        "path": src.path,
        "state": src.state,
        "line_cap": max_line_bytes(None),
        "byte_cap": max_file_bytes(None),
        "counts": {
            "n_records": c.n_records,
            "n_raw_values": c.n_raw_values,
            "tombstones": list(c.tombstones),
            "dated": c.dated,
            "first_timestamp_ms": c.first_timestamp_ms,
            "end": c.end,
            "next_line": c.next_line,
            "sha256": c.sha256,
        },
        "lines": [
            [ln.line_no, None if ln.error else dumps(ln.value, allow_nan=True), ln.error, ln.padded]
            for ln in src.lines
        ],
        "diagnostics": [[d.file, d.line, d.reason] for d in src.diagnostics],
        "unreadable": list(src.unreadable_lines),
        "digest": digest,
    }
