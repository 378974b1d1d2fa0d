"""Offline re-verify: is the stored record, byte for byte, what the engine writes for it?

Each field is checked the only way it can be: fields derived from the ledger are re-scored
from the same metrics directory under the stored rubric version; fields derived from other
fields are reproduced; run inputs are passed back to the engine and checked for form and
consistency, bound by the seal (:mod:`evalkit.record.seal`); judge dimensions are re-derived
from their run log (:mod:`evalkit.verify.judged`). The engine's record is then compared with
the stored line as JSON values, exactly (:mod:`evalkit.verify.diff`); any difference exits 1,
an unknown rubric text exits 3. The whole rule, field by field, with the chain and copies, is
in docs/RECORDS.md ("How `verify` decides").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import journal
from evalkit.errors import EvalkitError, SessionResolutionError
from evalkit.files.input import dumps_bytes, orjson_bytes
from evalkit.journal.chain import CHAIN_FIELD, CHAIN_KEY, ChainReport
from evalkit.journal.reader import JOURNAL_NAME, DiagnosticKind, JournalRead
from evalkit.js.timestamps import timestamp_ms
from evalkit.ledger.files import describe_sessions_file
from evalkit.ledger.parse import gc_paused
from evalkit.ledger.reader import Ledger
from evalkit.record.contract import Method, validate_stored
from evalkit.record.seal import (
    SEAL_FIELD,
    SealMismatchError,
    seal_record,
    without_seal,
)
from evalkit.rubrics import RUBRIC_VERSIONS
from evalkit.scoring.engine import Scorer, read_batch
from evalkit.scoring.run_inputs import RunInputs
from evalkit.verify.checks import rubric_hashes, run_input_checks, text_version, version_check
from evalkit.verify.diff import (
    DriftKind,
    FieldDrift,
    broken_seal,
    diff_records,
    duplicate_keys,
    evidence_tokens,
)
from evalkit.verify.judged import rederive
from evalkit.verify.result import (
    CLAIMS,
    JournalEntry,
    JournalVerification,
    VerifyOutcome,
    VerifyResult,
)

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "CLAIMS",
    "DriftKind",
    "FieldDrift",
    "JournalVerification",
    "VerifyOutcome",
    "VerifyResult",
    "evidence_tokens",
    "find_record",
    "verify_journal",
    "verify_record",
]

_PASSED_BACK_HARNESS = ("plugin_version", "platform", "hostname_hash")


# ------------------------------------------------------------------------- the stored line


@dataclass(frozen=True)
class _Stored:
    """The verified copy: validated (the run's inputs) and as parsed (for the comparison)."""

    record: dict[str, Any]
    raw: dict[str, Any]
    drifts: tuple[FieldDrift, ...]
    notes: tuple[str, ...]
    line: int | None = None
    changed: bool = False  # its seal no longer matches its content
    data: bytes | None = None  # its line's bytes (None: a record given by value)


def _validated(
    raw: Mapping[str, Any], accepted: CalibrationAcceptance | None
) -> tuple[dict[str, Any], bool]:
    """The record a stored value stands for, and whether it was changed after it was written.

    It is validated as a journal line is read; a changed record is validated without its seal
    (the comparison reports the seal).
    """
    try:
        return validate_stored(raw, accepted=accepted), False
    except SealMismatchError:
        return validate_stored(without_seal(raw), accepted=accepted), True


def _encoded(record: Mapping[str, Any]) -> bytes | None:
    """``record`` as the journal writes it (:meth:`evalkit.journal.file.JournalAppender.append`).

    None for a value the journal could not have written (``1e400`` read as infinity, say).
    """
    try:
        return dumps_bytes(record, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def _duplicate_keys(data: bytes, value: Mapping[str, Any]) -> list[str]:
    """Keys written twice in one object of the line ``data`` that parsed to ``value``.

    A line that is its value written again holds none (re-encoding keeps one copy of a key),
    so only a line written some other way is scanned key by key.
    """
    # any encoder that writes each key once will do; where orjson writes a number otherwise
    # than the line does, the bytes differ and json is tried
    return [] if orjson_bytes(value) == data or _encoded(value) == data else duplicate_keys(data)


def _is_the_line(expected: dict[str, Any], raw: Mapping[str, Any], data: bytes) -> bool:
    """Whether the line ``data`` (parsed: ``raw``, its seal intact) is ``expected`` sealed.

    Without sealing ``expected``: given the line's own seal, ``expected`` must write, by
    orjson, the very bytes of the line and equal its parsed value. Equal bytes give equal
    tokens, so equal types where ``json`` writes them differently (``1`` and ``1.0``), and
    equal values rule out a NaN or an infinity (orjson writes ``null`` for them): so the
    canonical form of ``expected`` is the line's, and its seal the one the line carries.
    """
    provenance = raw.get("provenance")
    seal = provenance.get("record_sha256") if isinstance(provenance, Mapping) else None
    if not isinstance(seal, str):
        return False
    candidate = {**expected, "provenance": {**expected["provenance"], "record_sha256": seal}}
    return orjson_bytes(candidate) == data and candidate == raw


class _JournalView:
    """One read of a journal, indexed by run id, each line's bytes and value kept from it."""

    def __init__(self, path: Path, accepted: CalibrationAcceptance | None) -> None:
        try:
            self.read: JournalRead = journal.read(path, accepted=accepted, keep_lines=True)
        except FileNotFoundError:
            raise EvalkitError(f"{path}: no journal (nothing has been recorded there)") from None
        self.path = path
        self.accepted = accepted
        self._copies: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for line, rec in zip(self.read.line_numbers, self.read.records, strict=True):
            self._copies.setdefault(rec["run_id"], []).append((line, rec))
        self._invalid: dict[str, list[Any]] = {}
        for diag in self.read.diagnostics:
            if diag.run_id is not None:
                self._invalid.setdefault(diag.run_id, []).append(diag)
        self._lines: dict[int, tuple[bytes, Any]] = self.read.lines or {}

    def run_ids(self) -> list[tuple[int, str]]:
        """(first line, run id) of every run id the journal holds, valid or not."""
        first: dict[str, int] = {}
        for rid, pairs in self._copies.items():
            first[rid] = pairs[0][0]
        for rid, diags in self._invalid.items():
            first[rid] = min(first.get(rid, diags[0].line), diags[0].line)
        return sorted((line, rid) for rid, line in first.items())

    def raw(self, line: int) -> bytes | None:
        """The bytes of ``line`` as read (BOM and CR dropped); None for a line over the cap."""
        kept = self._lines.get(line)
        return kept[0] if kept is not None else None

    def value(self, line: int) -> Any:
        """What ``line`` parsed to, before normalization (None: no JSON, or over the cap)."""
        kept = self._lines.get(line)
        return kept[1] if kept is not None else None

    def copies(self, run_id: str) -> list[tuple[int, dict[str, Any]]]:
        """Valid copies of ``run_id``.

        Exact, else as evalkit prints it, surrogates escaped
        (:meth:`evalkit.journal.reader.JournalRead.find`).
        """
        exact = self._copies.get(run_id, [])
        if exact or "\\u" not in run_id:
            return list(exact)
        return self.read.find(run_id)

    def invalid(self, run_id: str) -> list[Any]:
        return list(self._invalid.get(run_id, []))

    def lines_of(self, run_id: str) -> list[int]:
        """Every line holding ``run_id``: its valid copies and the lines that are not."""
        return [line for line, _ in self.copies(run_id)] + [d.line for d in self.invalid(run_id)]

    def unknown(self, run_id: str) -> EvalkitError:
        invalid = self.invalid(run_id)
        if invalid:
            d = invalid[-1]
            return EvalkitError(
                f"{self.path}: line {d.line} holds run id {run_id!r} but is not a valid record: "
                f"{d.reason}"
            )
        n = len(self.read.diagnostics)
        hint = f"; {n} unreadable line(s) in the journal" if n else ""
        return EvalkitError(f"{self.path}: unknown run id {run_id!r}{hint}")

    def _changed_copy(self, run_id: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
        """With no valid copy: the last line holding ``run_id`` valid but for its seal.

        That record was changed after it was written; returned as (line, validated, parsed).
        """
        changed = [d for d in self.invalid(run_id) if d.kind is DiagnosticKind.CHANGED]
        if not changed:
            raise self.unknown(run_id)
        line = changed[-1].line
        raw = self.value(line)
        if not isinstance(raw, dict):  # the reader found a record there: cannot happen
            raise EvalkitError(f"{self.path}: line {line} is not the record it was read as")
        try:
            return line, _validated(raw, self.accepted)[0], raw
        except EvalkitError as exc:  # invalid for another reason too: that is the one to name
            raise EvalkitError(
                f"{self.path}: line {line} holds run id {run_id!r} but is not a valid record: {exc}"
            ) from None

    def locate(self, run_id: str) -> _Stored:
        """The copy of ``run_id`` to verify, and how the other lines holding it differ from it.

        The copy is the last valid one; else the last one changed after it was written.
        """
        copies = self.copies(run_id)
        if copies:
            line, record = copies[-1]
            raw = self.value(line)
            if not isinstance(raw, dict):  # the reader found a record there: cannot happen
                raise EvalkitError(f"{self.path}: line {line} is not the record it was read as")
        else:
            line, record, raw = self._changed_copy(run_id)
        drifts = self._copy_drifts(copies, raw, line)
        drifts += [
            FieldDrift(
                "record",
                f"key {key!r}",
                "written twice in one object",
                "written once",
                "JSON readers disagree on which copy wins",
                DriftKind.DUPLICATE,
            )
            for key in _duplicate_keys(self.raw(line) or b"", raw)
        ]
        drifts += [
            FieldDrift(
                "record",
                f"line {d.line}",
                d.reason,
                "no other line with this run id",
                "a line carrying this run id is not a valid record",
                DriftKind.DUPLICATE,
            )
            for d in self.invalid(record["run_id"])
            if d.line != line
        ]
        notes = []
        if len(copies) > 1:
            lines = ", ".join(str(n) for n, _ in copies)
            notes.append(f"run id appears {len(copies)} times (lines {lines}); verifying the last")
        return _Stored(
            record, raw, tuple(drifts), tuple(notes), line, changed=not copies, data=self.raw(line)
        )

    def _copy_drifts(
        self, copies: list[tuple[int, dict[str, Any]]], last: Any, last_line: int
    ) -> list[FieldDrift]:
        """How every other valid copy of the run id differs from the verified one."""
        out: list[FieldDrift] = []
        for line, _ in copies:
            value = self.value(line) if line != last_line else None
            if not isinstance(value, dict):
                continue
            out += [
                FieldDrift(
                    d.dimension,
                    d.field,
                    d.stored,
                    d.rescored,
                    f"line {line} and line {last_line} are copies of this run id that differ",
                    DriftKind.DUPLICATE,
                    (f"line {line}", f"line {last_line}"),
                )
                for d in diff_records(_unplaced(value), _unplaced(last))
            ]
        return out


def _unplaced(record: Any) -> Any:
    """A record without what its place in the journal gives it: its link, and so its seal.

    Two valid copies of one run id are the same record when they differ only there (the
    same run written twice lands on two places of the chain).
    """
    provenance = record.get("provenance") if isinstance(record, dict) else None
    if not isinstance(provenance, dict) or CHAIN_KEY not in provenance:
        return record
    placed = (CHAIN_KEY, "record_sha256")
    return {**record, "provenance": {k: v for k, v in provenance.items() if k not in placed}}


def find_record(
    run_id: str,
    journal_path: str | os.PathLike[str],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Return the stored record with ``run_id`` (its last copy) and notes about its copies.

    Raises ``EvalkitError`` when the journal does not exist or holds no such run id.
    ``accepted``: the verified calibration certificates a judge dimension may claim.
    """
    view = _JournalView(Path(journal_path), accepted)
    copies = view.copies(run_id)
    if not copies:
        raise view.unknown(run_id)
    notes: list[str] = []
    if len(copies) > 1:
        lines = ", ".join(str(line) for line, _ in copies)
        notes.append(f"run id appears {len(copies)} times (lines {lines}); the last is shown")
    return copies[-1][1], notes


# ---------------------------------------------------------------------------- re-scoring


class _Scorers:
    """One read of the ledger, one :class:`~evalkit.scoring.engine.Scorer` per rubric version.

    Both are made when first needed (a journal of version mismatches never reads the ledger).
    """

    def __init__(self, metrics_dir: str | os.PathLike[str]) -> None:
        self.metrics_dir = metrics_dir
        self._ledger: Ledger | None = None
        self._by_version: dict[str, Scorer] = {}
        self._hashes: dict[str, str] | None = None

    @property
    def rubric_hashes(self) -> dict[str, str]:
        """Every rubric text's sha256, hashed once per run (a text that cannot be read raises)."""
        if self._hashes is None:
            self._hashes = rubric_hashes()
        return self._hashes

    def get(self, rubric_version: str) -> Scorer:
        if self._ledger is None:
            # events digested a block at a time: the index is all a re-score reads of them
            self._ledger = read_batch(self.metrics_dir)
        scorer = self._by_version.get(rubric_version)
        if scorer is None:
            scorer = self._by_version[rubric_version] = Scorer(self._ledger, rubric_version)
        return scorer


def _expected(stored: Mapping[str, Any], scorers: _Scorers) -> tuple[dict[str, Any], Any]:
    """The record the engine writes for the stored record's inputs, and its session's end.

    Its deterministic part, with the stored engine commit in place, unsealed: the caller seals
    it once it is complete; the end is the session's ``completed_at`` as the ledger holds it. A label this evalkit does not know, on a rubric text it does, is
    re-scored under the version of that text (the diff then shows the label, and any verdict
    the label hid).
    """
    harness = stored["harness"]
    md = scorers.metrics_dir
    version = stored["rubric_version"]
    if version not in RUBRIC_VERSIONS:
        version = text_version(stored, scorers.rubric_hashes) or version
    try:
        run = RunInputs.of(
            timestamp=stored["timestamp"],
            model_id=stored["model"]["id"],
            model_source=stored["model"]["source"],
            handle=stored["handle"],
            harness={key: harness[key] for key in _PASSED_BACK_HARNESS if key in harness},
        )
        fresh = scorers.get(version).score(stored["session_id"], run)
    except SessionResolutionError as exc:
        where = describe_sessions_file(md)
        raise type(exc)(f"cannot re-score {stored['run_id']} from {md}: {exc} ({where})") from exc
    except EvalkitError as exc:
        raise type(exc)(f"cannot re-score {stored['run_id']} from {md}: {exc}") from exc
    record = fresh.to_dict(sealed=False)
    # a run input, checked by run_input_checks; the verifying engine's own commit is not it
    record["provenance"] = {**record["provenance"]}
    record["provenance"]["engine_commit"] = stored["provenance"]["engine_commit"]
    if CHAIN_KEY in stored["provenance"]:
        # the journal position it was written at: checked against the line before it
        record["provenance"][CHAIN_KEY] = stored["provenance"][CHAIN_KEY]
    session = fresh.resolution.record if fresh.resolution is not None else {}
    return record, session.get("completed_at")


def _chain_findings(
    found: _Stored, chain: ChainReport | None, lines: Iterable[int] = ()
) -> tuple[list[FieldDrift], list[str]]:
    """The ``chain`` drifts of the lines holding the run id (a link broken), or a note."""
    if chain is None or found.line is None:
        return [], ["its place in a journal was not checked (a record given by value)"]
    drifts = [
        FieldDrift(
            "record",
            CHAIN_FIELD,
            f"line {line}",
            "the line before it",
            broken.reason,
            DriftKind.CHAIN,
        )
        for line in sorted({found.line, *lines})
        if (broken := chain.break_at(line)) is not None
    ]
    if drifts:
        return drifts, []
    if found.line in chain.unchained:
        return [], [
            f"unchained: written before this journal chained its records (line {found.line}); "
            "whether a line was deleted or moved around it cannot be checked"
        ]
    return [], []


def _timestamp_drift(stored: Mapping[str, Any], completed_at: Any) -> list[FieldDrift]:
    """A record scored before its session ended: its timestamp (a run input) is invalid.

    No drift when the session's end is not known (no ``completed_at``, or one ``Date.parse``
    cannot read): that is unknown, never a pass or a fail of the record.
    """
    end = timestamp_ms(completed_at)
    when = timestamp_ms(stored["timestamp"])
    if end is None or when is None or when >= end:
        return []
    return [
        FieldDrift(
            "record",
            "timestamp",
            stored["timestamp"],
            f"at or after the session's end ({completed_at})",
            "a session is scored once it has ended: a timestamp before its end is invalid",
        )
    ]


def _verify(
    found: _Stored,
    scorers: _Scorers,
    journal: Path | None = None,
    accepted: CalibrationAcceptance | None = None,
    chain: ChainReport | None = None,
    lines: Iterable[int] = (),
) -> VerifyResult:
    stored = found.record
    chain_drifts, chain_notes = _chain_findings(found, chain, lines)
    found = replace(
        found, drifts=(*found.drifts, *chain_drifts), notes=(*found.notes, *chain_notes)
    )
    run_id = stored["run_id"]
    judges = [d for d in found.raw["dimensions"] if d.get("method") == Method.JUDGE]
    judge_ids = tuple(str(d.get("id")) for d in judges)

    mismatch, current_sha = version_check(stored, scorers.rubric_hashes)
    broken = broken_seal(found.raw) if found.changed else None
    if mismatch is not None and broken is not None:
        # changed after it was written: that is drift, whatever version it now claims
        return VerifyResult(
            run_id=run_id,
            outcome=VerifyOutcome.DRIFT,
            rubric_version=stored["rubric_version"],
            drifts=(*found.drifts, broken),
            mismatch=mismatch,
            stored_sha256=stored["provenance"]["rubric_sha256"],
            current_sha256=current_sha,
            unverified_dimensions=judge_ids,
            notes=(*found.notes, f"not re-scored: {mismatch}"),
        )
    if mismatch is not None:
        return VerifyResult(
            run_id=run_id,
            outcome=VerifyOutcome.VERSION_MISMATCH,
            rubric_version=stored["rubric_version"],
            mismatch=mismatch,
            stored_sha256=stored["provenance"]["rubric_sha256"],
            current_sha256=current_sha,
            unverified_dimensions=judge_ids,
            notes=found.notes,
        )

    expected, completed_at = _expected(stored, scorers)
    deterministic_ids = tuple(d["id"] for d in expected["dimensions"])
    drifts = list(found.drifts)
    input_drifts, notes = run_input_checks(stored)
    drifts += input_drifts + _timestamp_drift(stored, completed_at)
    journal_file = journal or Path(scorers.metrics_dir) / JOURNAL_NAME
    rederived = rederive(stored, judges, journal_file, accepted)
    drifts += rederived.drifts
    notes += rederived.notes
    # the judge dimensions as their run logs give them, after the deterministic ones; the seal
    # is computed last, over the whole record
    expected["dimensions"] += [
        d for d in rederived.dimensions if d.get("id") not in deterministic_ids
    ]
    data = found.data
    if not found.changed and data is not None and _is_the_line(expected, found.raw, data):
        differences: list[FieldDrift] = []  # the line, byte for byte, is the engine's record
    else:
        sealed = seal_record(expected)
        # its orjson bytes are not the line's (_is_the_line said so, and the seal of a changed
        # line matches no content); json's differ from them where a float does
        if data is not None and data == _encoded(sealed):
            differences = []
        else:
            differences = diff_records(found.raw, sealed)
    if broken is not None and all(d.field != SEAL_FIELD for d in differences):
        # an edit the engine's record happens to match (a reverted verdict, say) still broke
        # the seal: the line was changed after it was written
        differences.append(broken)
    drifts += differences
    outcome = VerifyOutcome.DRIFT if drifts else VerifyOutcome.AGREEMENT
    if rederived.missing and not drifts:  # a verdict that cannot be re-derived never agrees
        outcome = VerifyOutcome.JUDGE_LOG_MISSING
        notes += rederived.missing
    return VerifyResult(
        run_id=run_id,
        outcome=outcome,
        rubric_version=stored["rubric_version"],
        drifts=tuple(drifts),
        stored_sha256=stored["provenance"]["rubric_sha256"],
        current_sha256=current_sha,
        verified_dimensions=deterministic_ids,
        unverified_dimensions=judge_ids,
        notes=found.notes + tuple(notes),
    )


def verify_record(
    record_or_run_id: str | Mapping[str, Any],
    metrics_dir: str | os.PathLike[str],
    journal_path: str | os.PathLike[str] | None = None,
    *,
    accepted: CalibrationAcceptance | None = None,
) -> VerifyResult:
    """Re-score a stored record from ``metrics_dir`` and compare it byte for byte.

    ``record_or_run_id`` is a record (dict) or a run id looked up in ``journal_path`` (default
    ``<metrics_dir>/eval.jsonl``). Returns a ``VerifyResult`` (the rule: docs/RECORDS.md);
    raises ``EvalkitError`` for an unknown run id, an invalid stored record, or a session the
    ledger no longer resolves.
    ``accepted``: the verified calibration certificates a judge dimension may claim
    (``validate_record``; default: ``uncalibrated`` only).
    """
    if isinstance(record_or_run_id, str):
        path = Path(journal_path) if journal_path else Path(metrics_dir) / JOURNAL_NAME
        view = _JournalView(path, accepted)
        found, chain = view.locate(record_or_run_id), view.read.chain
        lines = view.lines_of(found.record["run_id"])
    elif isinstance(record_or_run_id, Mapping):
        raw = dict(record_or_run_id)
        record, changed = _validated(raw, accepted)
        found, chain, lines = _Stored(record, raw, (), (), changed=changed), None, []
        path = Path(journal_path) if journal_path else Path(metrics_dir) / JOURNAL_NAME
    else:
        raise EvalkitError(
            f"record_or_run_id: expected a run id or a record, got {type(record_or_run_id).__name__}"
        )
    return _verify(found, _Scorers(metrics_dir), path, accepted, chain=chain, lines=lines)


def _entries(view: _JournalView, scorers: _Scorers) -> Iterator[tuple[int, JournalEntry]]:
    for first, run_id in view.run_ids():
        try:
            found = view.locate(run_id)
            session = found.record["session_id"]
            result = _verify(
                found,
                scorers,
                view.path,
                view.accepted,
                chain=view.read.chain,
                lines=view.lines_of(run_id),
            )
            yield first, JournalEntry(found.line or first, run_id, session, result)
        except EvalkitError as exc:
            yield first, JournalEntry(first, run_id, None, error=str(exc))
    for diag in view.read.diagnostics:
        if diag.run_id is None:
            yield diag.line, JournalEntry(diag.line, None, None, error=str(diag))


def verify_journal(
    journal_path: str | os.PathLike[str] | None = None,
    metrics_dir: str | os.PathLike[str] = ".orchestrator/metrics",
    *,
    accepted: CalibrationAcceptance | None = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
) -> JournalVerification:
    """Re-verify every record of the journal in one pass over the ledger.

    ``journal_path`` defaults to ``<metrics_dir>/eval.jsonl``. One entry per run id (in the
    order of its first line), its outcome the one :func:`verify_record` gives for that run id
    (a :class:`~evalkit.verify.rescore.VerifyResult`, or the message of the error it raises), plus one
    ``unreadable`` entry per line that is no record and carries no run id. ``progress`` wraps
    the iteration over the run ids (``progress(iterable, total)``, e.g. a tqdm bar). Raises
    ``EvalkitError`` when there is no journal.
    """
    path = Path(journal_path) if journal_path else Path(metrics_dir) / JOURNAL_NAME
    with gc_paused():  # one pause for the run (see evalkit.ledger.parse.gc_paused)
        entries = _verify_all(path, metrics_dir, accepted, progress)
    return JournalVerification(path, Path(metrics_dir), entries)


def _verify_all(
    path: Path,
    metrics_dir: str | os.PathLike[str],
    accepted: CalibrationAcceptance | None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None,
) -> tuple[JournalEntry, ...]:
    view = _JournalView(path, accepted)
    scorers = _Scorers(metrics_dir)
    total = len(view.run_ids()) + sum(d.run_id is None for d in view.read.diagnostics)
    entries = _entries(view, scorers)
    iterable = progress(entries, total) if progress is not None else entries
    return tuple(entry for _, entry in sorted(iterable, key=lambda pair: pair[0]))
