"""The scoring engine: a ledger's sessions -> evaluation records (SPEC section 2).

Three entry points, one path: :func:`score_session` (one session), :func:`score_records`
(every session's record, in one pass) and :func:`score_ledger` (every session's verdicts as a
table). Each reads the ledger once (:func:`evalkit.ledger.reader.read_ledger`), measures sessions
through one event index (:class:`evalkit.scoring.measure.LedgerMeasure`) and lets the rubric's pure
scorers decide, so a session's record is the same whichever entry point built it.

Scoring is clock-free: the ``timestamp`` parameter (default: now) only names the run.

A ``judge`` (:class:`evalkit.record.judging.RecordJudge`, off by default) adds its judge
dimensions after the deterministic ones; a batch hands it ``judge.batch_size`` records at
most, the next batch submitted before one is handed on, and a record whose judge calls went
unanswered is held back (listed, not yielded).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import sys
import threading
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit._version import __version__
from evalkit.errors import EvalkitError, ValidationError
from evalkit.js.numbers import json_number
from evalkit.js.values import is_non_empty_trimmed
from evalkit.ledger.nothing_to_score import NoSession, blank_id_lines, no_session, why_none_scored
from evalkit.ledger.parse import gc_paused
from evalkit.ledger.reader import Diagnostic, Ledger, ReadPoint, read_ledger
from evalkit.provenance.git import evalkit_commit
from evalkit.provenance.host import hostname_hash
from evalkit.provenance.repository import PACKAGE_DIR
from evalkit.record.contract import make_run_id
from evalkit.record.judging import Judging, RecordJudge
from evalkit.rubrics import Rubric, get_rubric
from evalkit.rubrics.dimensions.shared import ledger_gap_note
from evalkit.scoring.eval_record import EvalRecord, Harness, Provenance
from evalkit.scoring.measure import EventDigest, LedgerMeasure, Measured
from evalkit.scoring.run_inputs import RunInputs

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LEDGER_COLUMNS",
    "SAMPLE_METRICS_DIR",
    "EvalRecord",
    "JudgeUnanswered",
    "Refused",
    "ScoredRecords",
    "Scorer",
    "build_run_id",
    "read_batch",
    "score_ledger",
    "score_records",
    "score_session",
]

#: The small hand-written sample ledger shipped with the package (for the demo).
SAMPLE_METRICS_DIR = PACKAGE_DIR / "data" / "sample"
#: Columns of :func:`score_ledger`'s table.
LEDGER_COLUMNS = ("session_id", "dimension", "status", "score", "evidence")

#: ``<session_id>-eval-<timestamp without '-', ':' and '.'>`` (the record module's builder).
build_run_id = make_run_id


def read_batch(
    metrics_dir: str | os.PathLike[str], *, resume: Mapping[str, ReadPoint] | None = None
) -> Ledger:
    """The ledger of ``metrics_dir`` read for scoring: events digested a block at a time.

    :func:`evalkit.ledger.reader.read_ledger` with an :class:`EventDigest` per event source,
    so the reading never holds more than one block of event objects. ``resume``: earlier
    readings of the event sources, by path (a source only appended to is read from there on).
    """
    return read_ledger(metrics_dir, sinks=EventDigest, resume=resume)


class JudgeUnanswered(EvalkitError):
    """The judge's calls for a record did not all get an answer: the record is not made."""


def _with_judge(record: EvalRecord, dims: list[dict[str, Any]] | None) -> EvalRecord:
    """``record`` carrying the judge dimensions ``dims`` (None: its calls went unanswered)."""
    if dims is None:
        raise JudgeUnanswered(
            f"session {record.session_id!r}: the judge's calls did not all get an answer "
            "(their errors are in the run log); no record was made: run again to retry them"
        )
    return dataclasses.replace(record, judge_dimensions=tuple(dims))


def _check_session_id(session_id: str) -> None:
    # The reference resolves such a record, then its record validation refuses it.
    if not is_non_empty_trimmed(session_id):
        raise ValidationError(
            f"session_id: must be a non-empty string, not only whitespace (got {session_id!r})"
        )


class Scorer:
    """One rubric's reading of one ledger, ready to score any of its sessions.

    The ledger is read once (pass a :class:`~evalkit.ledger.reader.Ledger` already read, or a metrics
    directory); windows, peers and the event index are built on first use and shared by every
    session scored through it.
    """

    def __init__(self, ledger: Ledger | str | os.PathLike[str], rubric: str | Rubric) -> None:
        self.rubric = get_rubric(rubric)
        self.ledger = ledger if isinstance(ledger, Ledger) else read_batch(ledger)
        #: the rubric text's hash, read once for every record this reading scores
        self.rubric_sha256 = self.rubric.sha256
        rotation = self.rubric.event_reading == "rotation"
        self.view = self.ledger.view(self.rubric.event_reading)
        note = ledger_gap_note(self.view.gap_kinds, self.view.unreadable_event_lines)
        self.measure = LedgerMeasure(
            self.view.session_values,
            self.view.events,
            attribute_by_id=rotation,
            ledger_note=note if rotation else "",
            event_digests=self.view.event_digests,
            events_present=self.view.events_present,
        )

    def record(self, measured: Measured, run: RunInputs) -> EvalRecord:
        """The record of a measured session under the run's (validated) inputs.

        Raises :class:`~evalkit.errors.ValidationError` when the session id is only
        whitespace, as the reference's record validation does.
        """
        _check_session_id(measured.resolution.session_id)
        over = run.overrides
        rub = self.rubric
        return EvalRecord(
            run_id=build_run_id(measured.resolution.session_id, run.timestamp),
            session_id=measured.resolution.session_id,
            rubric_version=rub.version,
            provenance=Provenance(self.rubric_sha256, evalkit_commit(), measured.inputs_sha256),
            model=run.model,
            harness=Harness(
                plugin_version=over.get("plugin_version", __version__),
                platform=over.get("platform", sys.platform),
                host_class=over.get("host_class", measured.host_class),
                hostname_hash=over.get("hostname_hash", hostname_hash()),
            ),
            kpis=measured.context.kpis,
            dimensions=rub.score(measured.context),
            timestamp=run.timestamp,
            handle=run.handle,
            resolution=measured.resolution,
            ledger_diagnostics=self.view.diagnostics,
        )

    def score(self, session_id: str | None, run: RunInputs) -> EvalRecord:
        """:func:`score_session` over this reading of the ledger."""
        return self.record(self.measure.resolve(session_id), run)


def score_session(
    metrics_dir: str | os.PathLike[str],
    session_id: str | None = None,
    rubric: str | Rubric = "rubric-v2",
    *,
    timestamp: str | None = None,
    model_id: str | None = None,
    model_source: str | None = None,
    handle: str | None = None,
    harness: Mapping[str, Any] | None = None,
    judge: RecordJudge | None = None,
    run: RunInputs | None = None,
) -> EvalRecord:
    """Score one session of ``metrics_dir`` under ``rubric`` and return its record.

    ``session_id`` selects a session explicitly (``None`` or ``""``: the resolution cascade).
    ``timestamp`` (ISO-8601, default now) names the run: ``run_id`` is built from it, never
    from the clock. ``model_id``/``model_source`` default to ``"unknown"``/``"self-report"``
    (evalkit cannot know which model ran the session unless told). ``harness`` may override
    ``plugin_version``, ``platform``, ``host_class`` or ``hostname_hash`` (defaults: the
    evalkit version, ``sys.platform``, the ``host_class`` of the session's start event,
    the first 16 hex of sha256(hostname)). ``handle`` None means anonymized. ``judge`` adds
    its judge dimensions (module docstring). ``run``: these run inputs already validated
    (:class:`~evalkit.scoring.run_inputs.RunInputs`), instead of the keyword arguments.

    Raises :class:`~evalkit.errors.SessionResolutionError` when no session resolves,
    :class:`~evalkit.errors.ValidationError` when the resolved id is only whitespace or a
    parameter is invalid, :class:`~evalkit.errors.VersionMismatchError` for an unknown rubric,
    :class:`JudgeUnanswered` when a judge was given and its calls did not all get an answer.
    """
    rub = get_rubric(rubric)
    if run is None:  # argument errors come before the ledger is read
        run = RunInputs.of(
            timestamp=timestamp,
            model_id=model_id,
            model_source=model_source,
            handle=handle,
            harness=harness,
        )
    record = Scorer(read_batch(metrics_dir), rub).score(session_id, run)
    if judge is None:
        return record
    [dims] = judge.judge_records([record.to_dict(sealed=False)])
    return _with_judge(record, dims)


@dataclass(frozen=True)
class Refused:
    """A session :func:`score_session` refuses, and why (the error it would raise)."""

    session_id: str
    reason: str
    error: str  # the exception's class name, e.g. "ValidationError"

    def __str__(self) -> str:
        """``'<session id>': <reason>``, as the summary of a batch lists it."""
        return f"{self.session_id!r}: {self.reason}"


class ScoredRecords:
    """The records of a ledger's sessions, built as they are iterated (once).

    ``sessions`` are the ids considered, in ledger order (``len()`` is their number, for a
    progress bar). While iterating, a session that :func:`score_session` refuses is appended
    to ``refused`` (never raised), and one whose inputs hash equals its ``known_inputs`` entry
    to ``unchanged`` (not scored). ``diagnostics`` are the ledger reading's; ``no_session``
    says why the ledger gives no session to score (None when a line of ``sessions.jsonl``
    gives one). ``on_session``, when set, is called once per session done (scored, unchanged
    or refused). With a ``judge``, records go to it ``judge.batch_size`` at a time; a session
    whose judge calls went unanswered is listed in ``held_back``, not yielded.
    """

    def __init__(
        self,
        scorer: Scorer,
        positions: list[int],
        missing: list[str],
        *,
        run: RunInputs,
        known_inputs: Mapping[str, str],
        judge: RecordJudge | None = None,
    ) -> None:
        self.judge = judge
        self.held_back: list[str] = []
        self.rubric_version = scorer.rubric.version
        self.rubric_sha256 = scorer.rubric_sha256
        self.run = run
        self.timestamp = run.timestamp
        self.diagnostics: tuple[Diagnostic, ...] = scorer.view.diagnostics
        #: the ledger as read (its event sources say where a rerun may resume)
        self.ledger = scorer.ledger
        records = scorer.measure.records
        self.no_session: NoSession | None = no_session(scorer.ledger.sessions)
        self.sessions: tuple[str, ...] = tuple(records[p]["session_id"] for p in positions)
        self.refused: list[Refused] = [
            Refused(sid, f"session not found: {sid}", "SessionResolutionError") for sid in missing
        ]
        self.unchanged: list[str] = []
        self._scorer = scorer
        self._positions = positions
        self._known = known_inputs
        self._only: set[int] | None = None
        self._started = False
        self.on_session: Callable[[], object] | None = None

    def __len__(self) -> int:
        """How many sessions the batch considers (for a progress bar)."""
        return len(self._positions)

    def skip_unchanged(
        self, known_inputs: Mapping[str, str], *, measure_only: Collection[int] | None = None
    ) -> None:
        """Skip, when iterated, the sessions whose inputs did not change.

        A session whose inputs hash equals its entry in ``known_inputs`` (session id ->
        ``provenance.inputs_sha256``) is not scored but listed in ``unchanged``.
        ``measure_only``: the positions whose inputs may have changed since ``known_inputs``
        was that ledger's (:func:`evalkit.scoring.affected.affected_positions`); any other
        session with a known hash is listed unchanged without being measured. Call it before
        iterating.
        """
        if self._started:
            raise EvalkitError("skip_unchanged must come before the records are iterated")
        self._known = dict(known_inputs)
        self._only = None if measure_only is None else set(measure_only)

    @property
    def scorer(self) -> Scorer:
        """The reading the records are scored from."""
        return self._scorer

    def __iter__(self) -> Iterator[EvalRecord]:
        """The records, built as they are asked for; a second iteration raises."""
        if self._started:
            raise EvalkitError("ScoredRecords can be iterated once (score the ledger again)")
        self._started = True
        return self._generate() if self.judge is None else self._judged(self.judge)

    def _judged(self, judge: RecordJudge) -> Iterator[EvalRecord]:
        """The records of :meth:`_generate`, through the judge ``judge.batch_size`` at most.

        Sessions are scored in a thread meanwhile, so scoring overlaps the judge's calls
        (which wait on the network); the queue between them is bounded.
        """
        size = max(1, judge.batch_size)
        ready: queue.Queue[Any] = queue.Queue(maxsize=2 * size)
        done, stop = object(), threading.Event()

        def put(item: Any) -> bool:
            while not stop.is_set():  # a consumer that stopped never leaves it blocked
                try:
                    ready.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            records = self._generate()
            try:
                for record in records:
                    if not put(record):
                        return
            except BaseException as exc:  # handed to the consumer, raised there
                put(exc)
            finally:
                records.close()  # the collector's pause ends with the scoring
            put(done)

        threading.Thread(target=produce, name="score-records", daemon=True).start()
        try:
            yield from self._consume(judge, ready, done, size)
        finally:
            stop.set()

    def _consume(
        self, judge: RecordJudge, ready: queue.Queue[Any], done: object, size: int
    ) -> Iterator[EvalRecord]:
        """Batch after batch, each submitted before the one before it is handed on.

        So the judge's calls for the next batch run while this batch's records are written.
        """
        pending: tuple[list[EvalRecord], Judging] | None = None
        finished = False
        while not finished:
            records, finished = _next_batch(ready, done, size)
            submitted = None
            if records:
                dicts = [r.to_dict(sealed=False) for r in records]
                submitted = (records, judge.submit_records(dicts))
            if pending is not None:
                yield from self._with_judgement(*pending)
            pending = submitted
        if pending is not None:
            yield from self._with_judgement(*pending)

    def _with_judgement(self, records: list[EvalRecord], collect: Judging) -> Iterator[EvalRecord]:
        for record, dims in zip(records, collect(), strict=True):
            if dims is None:
                self.held_back.append(record.session_id)
            else:
                yield dataclasses.replace(record, judge_dimensions=tuple(dims))

    def _generate(self) -> Generator[EvalRecord, None, None]:
        # the collector stays paused while the batch runs (restored when it ends or is closed):
        # re-enabling it between records would walk the whole ledger again and again
        with gc_paused():
            measure = self._scorer.measure
            records, only, known = measure.records, self._only, self._known
            for position in self._positions:
                if only is not None and position not in only:
                    sid = records[position]["session_id"]
                    refused = None if sid in known else _refused_id(sid)
                    if sid in known or refused is not None:
                        # nothing appended can reach it: as it was scored (or refused)
                        if refused is None:
                            self.unchanged.append(sid)
                        else:
                            self.refused.append(refused)
                        if self.on_session is not None:
                            self.on_session()
                        continue
                measured = measure.measure(position)
                sid = measured.resolution.session_id
                if self._known.get(sid) == measured.inputs_sha256:
                    self.unchanged.append(sid)
                else:
                    try:
                        record = self._scorer.record(measured, self.run)
                    except EvalkitError as exc:
                        self.refused.append(Refused(sid, str(exc), type(exc).__name__))
                    else:
                        yield record
                if self.on_session is not None:
                    self.on_session()


def _next_batch(ready: queue.Queue[Any], done: object, size: int) -> tuple[list[Any], bool]:
    """The next batch and whether the scoring ended; a scoring error is raised here.

    Whatever is scored already, one at least and ``size`` at most: the judge's calls start
    with the first record, and batches grow while earlier ones are in flight.
    """
    batch = [ready.get()]
    while len(batch) < size and batch[-1] is not done:
        try:
            batch.append(ready.get_nowait())
        except queue.Empty:
            break
    records = [r for r in batch if r is not done]
    for item in records:
        if isinstance(item, BaseException):
            raise item
    return records, batch[-1] is done


def _refused_id(session_id: str) -> Refused | None:
    """How the record of a session with this id is refused whatever it measures, else None."""
    try:
        _check_session_id(session_id)
    except ValidationError as exc:
        return Refused(session_id, str(exc), type(exc).__name__)
    return None


def score_records(
    metrics_dir: str | os.PathLike[str],
    rubric: str | Rubric = "rubric-v2",
    *,
    timestamp: str | None = None,
    session_ids: Collection[str] | None = None,
    model_id: str | None = None,
    model_source: str | None = None,
    handle: str | None = None,
    harness: Mapping[str, Any] | None = None,
    known_inputs: Mapping[str, str] | None = None,
    judge: RecordJudge | None = None,
    run: RunInputs | None = None,
    resume: Mapping[str, ReadPoint] | None = None,
) -> ScoredRecords:
    """Every eligible session's record, in one pass over the ledger.

    Yields (lazily, once) one :class:`EvalRecord` per session of the canonical reading, in
    ledger order, each equal field for field to ``score_session(metrics_dir, session_id=that
    id, rubric=rubric, timestamp=..., ...)`` with the same arguments; ``timestamp`` (default:
    now, taken once) names every record of the batch. ``session_ids`` restricts the batch to
    those ids (still in ledger order); an id the ledger does not hold is refused. Sessions
    ``score_session`` refuses (an id of whitespace only, an id not in the ledger) are listed
    in the result's ``refused``, never raised. ``known_inputs`` maps a session id to the
    ``provenance.inputs_sha256`` of a record already scored under this rubric and these run
    inputs: a session whose inputs still hash to it is not scored again (listed in
    ``unchanged``). ``judge`` adds its judge dimensions (module docstring). ``run``: the run
    inputs already validated, instead of the keywords. ``resume``: earlier readings of the
    event sources (:func:`read_batch`); the records are the same as from a whole reading.

    Raises, before anything is scored, what ``score_session`` raises for the whole batch: a
    missing metrics directory, an invalid timestamp or model, an unknown rubric.
    """
    if isinstance(session_ids, str):
        raise EvalkitError(
            f"session_ids: a collection of session ids, not one string ({session_ids!r})"
        )
    rub = get_rubric(rubric)
    if run is None:
        run = RunInputs.of(
            timestamp=timestamp,
            model_id=model_id,
            model_source=model_source,
            handle=handle,
            harness=harness,
        )
    scorer = Scorer(read_batch(metrics_dir, resume=resume), rub)
    records = scorer.measure.records
    if session_ids is None:
        positions, missing = list(range(len(records))), []
    else:
        wanted = set(session_ids)
        positions = [i for i, rec in enumerate(records) if rec["session_id"] in wanted]
        held = {records[i]["session_id"] for i in positions}
        missing = [sid for sid in dict.fromkeys(session_ids) if sid not in held]
    return ScoredRecords(
        scorer,
        positions,
        missing,
        run=run,
        known_inputs=known_inputs or {},
        judge=judge,
    )


def score_ledger(
    metrics_dir: str | os.PathLike[str], rubric: str | Rubric = "rubric-v2"
) -> pd.DataFrame:
    """Score every session of ``metrics_dir``: one row per deterministic dimension.

    Columns ``session_id, dimension, status, score, evidence``; each session scored exactly as
    ``score_session(metrics_dir, session_id=that_id, rubric=rubric)`` scores it (``score`` is
    ``None`` for dimensions without one). Sessions are the canonical reading's, in ledger
    order; ids that ``score_session`` refuses (only whitespace) have no rows and are listed in
    ``df.attrs["skipped"]`` (where they are, ``file:line: ...``, in ``df.attrs["skipped_lines"]``);
    what the ledger reading skipped or doubted (``file:line: why``) in
    ``df.attrs["diagnostics"]``; why no session could be scored, when none could, in
    ``df.attrs["no_session"]`` (:meth:`evalkit.ledger.nothing_to_score.NoSession.to_dict`, else None).
    """
    import pandas as pd  # deferred: pandas is heavy and only the table needs it

    # the collector paused for the whole run; the ledger is freed (by reference counting) when
    # _verdict_rows returns, before the collector would walk it
    with gc_paused():
        rows, skipped, version, diagnostics, notes = _verdict_rows(metrics_dir, rubric)
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
    # object dtype keeps a null score None (not NaN) and an integral score an int
    frame = pd.DataFrame(
        {
            name: pd.Series(values, dtype=object)
            for name, values in zip(LEDGER_COLUMNS, columns, strict=True)
        }
    )
    frame.attrs["skipped"] = skipped
    frame.attrs["rubric_version"] = version
    frame.attrs["diagnostics"] = diagnostics
    frame.attrs.update(notes)
    return frame


def _verdict_rows(
    metrics_dir: str | os.PathLike[str], rubric: str | Rubric
) -> tuple[list[tuple[str, str, str, Any, str]], list[str], str, list[str], dict[str, Any]]:
    scorer = Scorer(read_batch(metrics_dir), rubric)
    rub = scorer.rubric
    rows: list[tuple[str, str, str, Any, str]] = []
    skipped: list[str] = []
    for measured in scorer.measure.measure_all():
        sid = measured.resolution.session_id
        if not is_non_empty_trimmed(sid):
            skipped.append(sid)
            continue
        for dim in rub.score(measured.context):
            score = json_number(dim.score) if dim.has_score else None  # as to_dict writes it
            rows.append((sid, dim.id, str(dim.status), score, dim.evidence))
    # as text: a frame's attrs travel into parquet metadata, as JSON
    sessions = scorer.ledger.sessions
    reason = None if rows else why_none_scored(sessions)
    notes = {
        "skipped_lines": list(blank_id_lines(sessions, skipped)) if skipped else [],
        "no_session": None if reason is None else reason.to_dict(),
    }
    return rows, skipped, rub.version, [str(d) for d in scorer.view.diagnostics], notes
