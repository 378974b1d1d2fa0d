"""A whole ledger into the journal: every session's record in one pass, incremental by default.

:func:`journal_ledger` is ``evalkit score --all --journal``: it takes the journal's lock,
reads what the journal already holds, scores the ledger once (:func:`evalkit.scoring.engine.
score_records`) and appends the new records under that one lock, one line each, one fsync at
the end (:class:`evalkit.journal.reader.JournalAppender`).

**Incremental.** A session whose latest record in the journal was scored under the same rubric
version and rubric text, with the same model and handle, from the same inputs
(``provenance.inputs_sha256``: the session record and what was measured for it) is not
scored again (:func:`evalkit.journal.reader.latest_inputs`); ``rescore=True`` scores every session.
Reading the journal under the lock means two batches run at once never both append a session.

**With a judge** (:class:`evalkit.record.judging.RecordJudge`) each record gets its judge
dimensions before it is appended; a session counts as unchanged only when its latest record
also carries this judge's dimensions, and one whose judge calls went unanswered is held back
(``held_back``), never appended without them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import journal
from evalkit.journal.cursor import (
    NO_CURSOR,
    Cursor,
    HashedPrefix,
    JournalPoint,
    file_sha256,
    load_cursor,
    save_cursor,
)
from evalkit.ledger.nothing_to_score import NoSession
from evalkit.ledger.parse import gc_paused
from evalkit.ledger.reader import Diagnostic, Ledger
from evalkit.rubrics import get_rubric
from evalkit.scoring.affected import ScoringState, affected_positions, scoring_state
from evalkit.scoring.engine import Refused, ScoredRecords, score_records
from evalkit.scoring.run_inputs import RunInputs

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance
    from evalkit.record.judging import RecordJudge

__all__ = ["JournalingResult", "deterministic_rows", "journal_ledger"]

#: ``progress(total)``: a bar (e.g. ``tqdm``) with ``update(n)`` and ``close()``, advanced once
#: per session done (scored, unchanged or refused).
Progress = Callable[[int], Any]


@dataclass(frozen=True)
class JournalingResult:
    """What a batch appended, which sessions it left unchanged, which it refused.

    ``appended``: the records as written, in ledger order; ``unchanged``: sessions not scored
    again; ``refused``: what ``score_session`` refuses (not raised); ``no_session``: why the
    ledger gives no session to score (None when it gives one).
    """

    journal: Path
    rubric_version: str
    appended: tuple[dict[str, Any], ...]
    unchanged: tuple[str, ...]
    refused: tuple[Refused, ...]
    diagnostics: tuple[Diagnostic, ...]
    held_back: tuple[str, ...] = ()  # sessions whose judge calls went unanswered
    no_session: NoSession | None = None
    #: why the cursor could not be used for all of the reading (a source or the journal
    #: read whole again), one note each
    reading: tuple[str, ...] = ()
    #: ``(path, offset)`` of each event source read from its cursor's offset on
    resumed: tuple[tuple[str, int], ...] = ()

    @property
    def scored(self) -> int:
        """How many records the batch appended."""
        return len(self.appended)

    def summary(self) -> str:
        """One line: scored and appended, unchanged (skipped), refused."""
        held = (
            f", {len(self.held_back)} held back (judge calls unanswered)" if self.held_back else ""
        )
        return (
            f"{self.scored} scored and appended to {self.journal}, {len(self.unchanged)} "
            f"unchanged (skipped), {len(self.refused)} refused{held} ({self.rubric_version})"
        )


def journal_ledger(
    metrics_dir: str | os.PathLike[str],
    journal_path: str | os.PathLike[str],
    rubric: str = "rubric-v2",
    *,
    rescore: bool = False,
    timestamp: str | None = None,
    model_id: str | None = None,
    model_source: str | None = None,
    handle: str | None = None,
    accepted: CalibrationAcceptance | None = None,
    progress: Progress | None = None,
    judge: RecordJudge | None = None,
    run: RunInputs | None = None,
    create_empty: bool = True,
) -> JournalingResult:
    """Score every eligible session of ``metrics_dir`` and append the records to the journal.

    The arguments are those of :func:`evalkit.scoring.engine.score_records` (one ``timestamp`` names
    the whole batch). Unless ``rescore``, sessions with nothing new since their latest record
    are skipped (module docstring). ``run``: the run inputs already validated
    (:class:`~evalkit.scoring.run_inputs.RunInputs`), instead of the keywords.
    ``create_empty=False``: a ledger with no session to score leaves the journal alone (not
    even created); the result's ``no_session`` says why. Raises what
    ``score_records`` raises before anything is
    scored, and :class:`evalkit.journal.reader.JournalWriteError` when an append fails (its message
    and ``appended`` say which records of the batch are on disk).
    """
    with gc_paused():  # one pause for the run (see evalkit.ledger.parse.gc_paused)
        return _journal_ledger(
            metrics_dir,
            journal_path,
            rubric,
            rescore=rescore,
            timestamp=timestamp,
            model_id=model_id,
            model_source=model_source,
            handle=handle,
            accepted=accepted,
            progress=progress,
            judge=judge,
            run=run,
            create_empty=create_empty,
        )


def _journal_ledger(
    metrics_dir: str | os.PathLike[str],
    journal_path: str | os.PathLike[str],
    rubric: str,
    *,
    rescore: bool,
    timestamp: str | None,
    model_id: str | None,
    model_source: str | None,
    handle: str | None,
    accepted: CalibrationAcceptance | None,
    progress: Progress | None,
    judge: RecordJudge | None,
    run: RunInputs | None,
    create_empty: bool,
) -> JournalingResult:
    rub = get_rubric(rubric)
    if run is None:
        run = RunInputs.of(
            timestamp=timestamp, model_id=model_id, model_source=model_source, handle=handle
        )
    # a judged batch reads the journal whole (never the cursor's map), a rescore not at all:
    # no hash of it ahead
    found, why = load_cursor(journal_path, journal_ahead=judge is None and not rescore)
    notes = [f"{why}; the ledger is read whole"] if found is None and why != NO_CURSOR else []
    # the ledger is read (and every argument checked) before the journal is even opened;
    # a source only appended to since the cursor is read from where it stopped
    batch = score_records(
        metrics_dir, rub, run=run, resume=found.points if found else {}, judge=judge
    )
    notes += _source_notes(batch.ledger, found)
    if batch.no_session is not None and not create_empty:
        return _result(Path(journal_path), batch, (), notes)
    model = run.model.to_dict()
    key = {
        "rubric_version": rub.version,
        "rubric_sha256": batch.rubric_sha256,
        "model": {"id": model["id"], "source": model["source"]},
        "handle": run.handle,
    }
    latest: dict[str, str] | None = None
    prefix: HashedPrefix | None = None  # the journal as the cursor left it, when it was checked
    with journal.JournalAppender(journal_path, accepted=accepted) as out:
        if not rescore:
            # under the lock: what the journal holds cannot change before we append
            if judge is None:
                known, keep, note, state, prefix = _known_inputs(journal_path, accepted, found, key)
            else:  # judged records: the journal read whole, never the cursor's map
                known, keep, note, state = _judged_inputs(journal_path, accepted, key, judge)
            notes += [note] if note else []
            only = None
            if state is not None:  # the journal is the cursor's: measure what the tail can reach
                old = ScoringState.from_dict(state)
                only = affected_positions(batch.ledger, batch.scorer.measure, old)
            batch.skip_unchanged(known, measure_only=only)
            latest = known if keep else None
        bar = None if progress is None else progress(len(batch))
        if bar is not None:
            batch.on_session = lambda: bar.update(1)
        try:
            # unsealed and handed over: the appender links, seals and encodes it once
            appended = tuple(
                out.append(record.to_dict(sealed=False), owned=True) for record in batch
            )
        finally:
            if bar is not None:
                bar.close()
        point = None
        if latest is not None:  # the journal as this batch leaves it, hashed under the lock
            latest.update(
                (rec["session_id"], rec["provenance"]["inputs_sha256"]) for rec in appended
            )
            size = os.path.getsize(journal_path)
            now = scoring_state(batch.ledger, batch.scorer.measure)
            sha = file_sha256(journal_path, prefix)
            point = JournalPoint(size, sha, key, latest, None if now is None else now.to_dict())
    if appended or not _nothing_new(batch.ledger, found, point):
        save_cursor(journal_path, batch.ledger, point)
    return _result(Path(journal_path), batch, appended, notes)


def _nothing_new(ledger: Ledger, found: Cursor | None, point: JournalPoint | None) -> bool:
    """Whether the cursor already says all this batch would write into it.

    The same sources, each resumed with nothing appended, and the same journal point.
    """
    if found is None or point is None or found.journal is None:
        return False
    sources = ledger.event_sources
    same = {src.path for src in sources} == set(found.points) and all(
        src.counts is not None and src.counts.resumed_at and src.counts.resumed_at == src.counts.end
        for src in sources
    )
    return same and point == found.journal


def _known_inputs(
    journal_path: str | os.PathLike[str],
    accepted: CalibrationAcceptance | None,
    found: Cursor | None,
    key: Mapping[str, Any],
) -> tuple[dict[str, str], bool, str | None, Mapping[str, Any] | None, HashedPrefix | None]:
    """Each session's latest inputs hash under ``key``: from the cursor, else the journal read.

    With whether the map may be kept in a cursor (not when a record has a judge dimension,
    whose validity can change with the accepted calibrations while the bytes do not), a note
    when a cursor was there but did not fit, and, when it fits, the cursor's scoring state and
    the journal hashed (:meth:`JournalPoint.check`).
    """
    note = None
    if found is not None and found.journal is not None:
        why, prefix = found.journal.check(journal_path, key)
        if why is None:
            return dict(found.journal.latest), True, None, found.journal.state, prefix
        note = f"cursor: {why}; the journal is read whole"
    held = journal.read(journal_path, accepted=accepted)
    keep = all(
        dim.get("method") == "deterministic" for rec in held.records for dim in rec["dimensions"]
    )
    return journal.latest_inputs(held, **key), keep, note, None, None


def _judged_inputs(
    journal_path: str | os.PathLike[str],
    accepted: CalibrationAcceptance | None,
    key: Mapping[str, Any],
    judge: RecordJudge,
) -> tuple[dict[str, str], bool, None, None]:
    """:func:`_known_inputs` for a judged batch: the journal read whole, never kept in a cursor.

    A session is unchanged only when its latest record also carries this judge's dimensions.
    """
    held = journal.read(journal_path, accepted=accepted)
    known = journal.latest_inputs(held, **key)
    latest = {
        r["session_id"]: r for r in held.records if r["rubric_version"] == key["rubric_version"]
    }
    return {s: h for s, h in known.items() if judge.already_judged(latest[s])}, False, None, None


def _source_notes(ledger: Ledger, found: Cursor | None) -> list[str]:
    """Why a source the cursor named was read whole again (it changed), or why none was.

    The cursor names its files by path: a ledger moved, or reached by another path, matches
    none of them and is read whole (once; the next batch resumes from the new paths).
    """
    paths = {src.path for src in ledger.event_sources}
    if found is not None and found.points and not paths & set(found.points):
        return [
            "cursor: it names none of this ledger's event files (the ledger moved, or is "
            "reached by another path); the ledger is read whole"
        ]
    return [
        f"cursor: {src.path}: {src.counts.restarted}; read whole"
        for src in ledger.event_sources
        if src.counts is not None and src.counts.restarted
    ]


def _result(
    path: Path,
    batch: ScoredRecords,
    appended: tuple[dict[str, Any], ...],
    notes: list[str],
) -> JournalingResult:
    return JournalingResult(
        journal=path,
        rubric_version=batch.rubric_version,
        appended=appended,
        unchanged=tuple(batch.unchanged),
        refused=tuple(batch.refused),
        diagnostics=batch.diagnostics,
        held_back=tuple(batch.held_back),
        no_session=batch.no_session,
        reading=tuple(notes),
        resumed=tuple(
            (src.path, src.counts.resumed_at)
            for src in batch.ledger.event_sources
            if src.counts is not None and src.counts.resumed_at
        ),
    )


def deterministic_rows(records: Iterable[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """``(session_id, dimension, status, score, evidence)`` of each deterministic dimension.

    Over ``records``: the rows of ``score --all``'s table
    (:data:`evalkit.scoring.engine.LEDGER_COLUMNS`).
    """
    for rec in records:
        for dim in rec["dimensions"]:
            if dim["method"] == "deterministic":
                yield (
                    rec["session_id"],
                    dim["id"],
                    dim["status"],
                    dim.get("score"),
                    dim["evidence"],
                )
