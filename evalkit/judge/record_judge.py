"""Judging records while they are written: ``score --journal --judge SPEC``.

:class:`ModelRecordJudge` implements :class:`evalkit.record.judging.RecordJudge` (the protocol
the engine and the batch journal take). For a batch of records it makes, for every record and
repeat, one call of the judge through the runner of ``judge run`` (bounded concurrency,
whole-call deadlines, the consecutive-failure stop), each call one line of the run log, and
turns each record's K calls into one verdict per judge dimension of its rubric:

* **the verdict** is the first call (in repeat order) that labels the dimension
  (:data:`evalkit.record.judging.AGGREGATION`, the aggregation the locked model-judge rule
  calibrated); no labelled call is ``cannot-determine``, saying why. A record whose calls did
  not all get an answer (an error) is held back, never written with a guess: a rerun asks
  the missing calls again (the run log resumes; a call already answered is never asked twice,
  the item being the record's content, not its run id);
* **the judge** goes into the dimension (:data:`evalkit.record.judging.JUDGE_KEY`): spec,
  reported model, prompt template sha256, parameters, K, aggregation, the run log relative to
  the journal and, per call, the sha256 of its run-log line;
* **the calibration status** is ``calibrated:...`` only when ``calibration`` (the caller's
  lookup of the repository's certificates: the calibration layer sits above this one) finds
  a verified certificate earned by exactly this identity for this dimension; else
  ``uncalibrated``.

:func:`derive_dimensions` is the same derivation from run-log lines alone, so ``verify`` re-derives
a stored judge dimension offline. The rule and its reasons: docs/JUDGES.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.append import LineAppender
from evalkit.judge.call_stream import CallStream
from evalkit.judge.items import ItemSource, JudgeItem, record_item
from evalkit.judge.parse import JUDGE_DIMENSION_IDS
from evalkit.judge.prompt import DEFAULT_INPUT_BUDGET
from evalkit.judge.redact import Redactor
from evalkit.judge.reply import CANNOT_PARSE, read_reply
from evalkit.judge.runlog import lock_runlog, read_runlog
from evalkit.judge.runner import (
    Call,
    EventLoop,
    JudgeHandle,
    RunSummary,
    check_resumable,
)
from evalkit.judge.specs import DEFAULT_MAX_CONSECUTIVE_ERRORS
from evalkit.record.judging import (
    AGGREGATION,
    JUDGE_KEY,
    Judging,
    identity_sha256,
    judge_identity,
)

__all__ = [
    "CalibrationLookup",
    "JudgeCalibration",
    "ModelRecordJudge",
    "derive_dimensions",
    "judge_block",
    "runlog_for",
]

_PARAM_KEYS = ("temperature", "max_tokens", "seed")


@dataclass(frozen=True)
class JudgeCalibration:
    """What a judge dimension's calibration is: a minted status and its reference, or why not."""

    status: str = "uncalibrated"
    reference: str | None = None
    reason: str = ""


#: ``lookup(dimension_id, identity) -> JudgeCalibration`` (the repository's certificates).
CalibrationLookup = Callable[[str, Mapping[str, Any]], JudgeCalibration]


def runlog_for(journal: str | os.PathLike[str]) -> Path:
    """The default run log of a journal: ``<journal stem>.judge.jsonl`` beside it."""
    path = Path(journal)
    return path.with_name(f"{path.stem}.judge.jsonl")


def _relative(run_log: Path, journal: Path) -> str:
    return Path(os.path.relpath(run_log.resolve(), journal.resolve().parent)).as_posix()


def _common(values: Sequence[Any]) -> Any:
    """The one value every entry agrees on, else None (several, or none known)."""
    known = set(values)
    return next(iter(known)) if len(known) == 1 else None


def judge_block(
    spec: str,
    params: Mapping[str, Any],
    repeats: int,
    run_log: str,
    lines: Sequence[Mapping[str, Any]],
    calls: list[dict[str, Any]],
) -> dict[str, Any]:
    """The judge of a dimension: its identity, its run log and the calls it read."""
    return {
        "spec": spec,
        "model": _common([line.get("model") for line in lines]),
        "prompt_template_sha256": _common([line.get("prompt_template_sha256") for line in lines]),
        "params": {key: params.get(key) for key in _PARAM_KEYS},
        "repeats": repeats,
        "aggregation": AGGREGATION,
        "run_log": run_log,
        "calls": calls,
    }


def derive_dimensions(
    item: JudgeItem,
    rubric_version: str,
    answers: Sequence[tuple[Mapping[str, Any], str]],
    *,
    spec: str,
    params: Mapping[str, Any],
    run_log: str,
) -> list[dict[str, Any]]:
    """The judge dimensions K answered calls give (module docstring), uncalibrated.

    ``answers`` holds, in repeat order, each call's run-log line and its sha256.
    """
    lines = [line for line, _ in answers]
    dims: list[dict[str, Any]] = []
    for dim_id in JUDGE_DIMENSION_IDS.get(rubric_version, ()):
        readings = [
            read_reply(
                line.get("reply"),
                item_id=item.item_id,
                rubric_version=rubric_version,
                nonce=line.get("nonce"),
                dimension=dim_id,
            )
            for line in lines
        ]
        calls = [
            {"repeat": line["repeat"], "line_sha256": sha, "status": r.status or CANNOT_PARSE}
            for (line, sha), r in zip(answers, readings, strict=True)
        ]
        chosen = next((r for r in readings if r.status is not None), None)
        if chosen is not None:
            status, evidence, score = chosen.status, chosen.evidence or "", chosen.score
        else:
            why = readings[0].reason if readings else "no call"
            status, score = "cannot-determine", None
            evidence = f"no call of {len(lines)} gave a label for {dim_id} (the first: {why})"
        dims.append(
            {
                "id": dim_id,
                "method": "judge",
                "status": status,
                "evidence": evidence,
                "score": score,
                "advisory": True,
                "calibration_status": "uncalibrated",
                JUDGE_KEY: judge_block(spec, params, len(lines), run_log, lines, calls),
            }
        )
    return dims


def calibrated(dim: dict[str, Any], calibration: JudgeCalibration) -> dict[str, Any]:
    """``dim`` with the calibration status (and reference) ``calibration`` gives it."""
    out = {k: v for k, v in dim.items() if k != JUDGE_KEY}
    out["calibration_status"] = calibration.status
    if calibration.reference is not None:
        out["calibration_ref"] = calibration.reference
    out[JUDGE_KEY] = dim[JUDGE_KEY]
    return out


class ModelRecordJudge:
    """The judge of ``score --journal --judge`` (module docstring).

    Use as a context manager: the run log is held exclusively from entering to leaving (a
    second run on the same log refuses), and the judge's connections live on one event loop.
    ``summary`` accumulates every batch's calls; ``held_back`` counts records held back.
    """

    def __init__(
        self,
        judge: JudgeHandle,
        *,
        repeats: int,
        run_log: str | os.PathLike[str],
        journal: str | os.PathLike[str],
        calibration: CalibrationLookup | None = None,
        concurrency: int = 4,
        budget: int | None = None,
        redact: Redactor | None = None,
        max_consecutive_errors: int = DEFAULT_MAX_CONSECUTIVE_ERRORS,
        progress: bool = False,
        batch_size: int = 256,
    ) -> None:
        if repeats < 1:
            raise EvalkitError(f"repeats must be >= 1, got {repeats}")
        self.judge = judge
        self.repeats = repeats
        self.run_log = Path(run_log)
        self.journal = Path(journal)
        self.relative_log = _relative(self.run_log, self.journal)
        self.calibration = calibration
        self.concurrency = concurrency
        self.budget = budget
        self.redact = redact or Redactor()
        self.max_consecutive_errors = max_consecutive_errors
        self.progress = progress
        self.batch_size = batch_size
        self.summary = RunSummary()
        self.held_back = 0
        self._lines: dict[tuple[str, int], list[tuple[dict[str, Any], str]]] = {}
        self._in_flight: set[tuple[str, int]] = set()  # asked, no line written yet
        self._lock: Any = None
        self._loop: EventLoop | None = None
        self._stream: CallStream | None = None
        self._calibrations: dict[str | None, JudgeCalibration] = {}

    # ------------------------------------------------------------------ lifetime

    def __enter__(self) -> ModelRecordJudge:
        """Hold the run log, read what it already answered, start the event loop."""
        self._lock = lock_runlog(self.run_log)
        self._lock.__enter__()
        try:
            self._log = read_runlog(self.run_log, missing_ok=True)
            for entry in self._log.entries:
                if entry.judge == self.judge.name:
                    key = (entry.item_id, entry.repeat)
                    self._lines.setdefault(key, []).append((dict(entry.data), entry.sha256))
            self._appender = LineAppender(self.run_log, "run log")
            self._loop = EventLoop()
            self._stream = CallStream(
                self._loop,
                self._appender,
                self.summary,
                concurrency=self.concurrency,
                redact=self.redact,
                budget=self.budget or DEFAULT_INPUT_BUDGET,
                progress=self.progress,
                max_consecutive_errors=self.max_consecutive_errors,
                on_line=self._seen,
            )
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        """End the calls, close the judge's connections, the loop and the log; release the lock.

        Leaving on an exception, no queued call starts and none in flight is waited for.
        """
        try:
            if self._stream is not None:
                self._stream.close(wait=exc[0] is None)
            if self._loop is not None:
                self._loop.run(self.judge.aclose())
                self._loop.close()
            self._appender.close()
        finally:
            self._lock.__exit__(None, None, None)

    # ------------------------------------------------------------------ the protocol

    def already_judged(self, record: Mapping[str, Any]) -> bool:
        """Whether every judge dimension of ``record`` was written by this judge, as it is."""
        version = record.get("rubric_version")
        wanted = JUDGE_DIMENSION_IDS.get(version, ()) if isinstance(version, str) else ()
        by_id = {d.get("id"): d for d in record.get("dimensions") or [] if isinstance(d, Mapping)}
        from evalkit.judge.prompt import prompt_template_sha256

        for dim_id in wanted:
            block = (by_id.get(dim_id) or {}).get(JUDGE_KEY)
            if not isinstance(block, Mapping):
                return False
            same = (
                block.get("spec") == self.judge.name
                and block.get("params") == self._params()
                and block.get("repeats") == self.repeats
                and block.get("aggregation") == AGGREGATION
                and block.get("prompt_template_sha256") == prompt_template_sha256()
            )
            if not same:
                return False
        return bool(wanted)

    def judge_records(
        self, records: Sequence[Mapping[str, Any]]
    ) -> list[list[dict[str, Any]] | None]:
        """Each record's judge dimensions, or None for one held back (module docstring)."""
        return self.submit_records(records)()

    def submit_records(self, records: Sequence[Mapping[str, Any]]) -> Judging:
        """Start the calls of ``records``; calling the result waits for :meth:`judge_records`'s.

        Batches submitted before the last is collected queue behind it: the calls never
        drain between batches. Collect them in the order they were submitted.
        """
        if self._stream is None:
            raise EvalkitError("ModelRecordJudge is used inside a `with` block")
        items = [record_item(record) for record in records]
        unique = {item.item_id: item for item in items}
        calls_done = self._call(tuple(unique.values()))

        def collect() -> list[list[dict[str, Any]] | None]:
            calls_done.result()
            out: list[list[dict[str, Any]] | None] = []
            for record, item in zip(records, items, strict=True):
                dims = self._dimensions(record, item)
                if dims is None:
                    self.held_back += 1
                out.append(dims)
            return out

        return collect

    # ------------------------------------------------------------------ inside

    def _params(self) -> dict[str, Any]:
        return {key: self.judge.params_log.get(key) for key in _PARAM_KEYS}

    def _call(self, items: tuple[JudgeItem, ...]) -> Future[None]:
        """Ask every (item, repeat) neither answered by the log nor in flight, repeat by repeat."""
        assert self._stream is not None
        check_resumable(self._log, [self.judge], items)
        if self.summary.stopped:  # the judge stopped answering: ask nothing more of it
            calls: list[Call] = []
        else:
            calls = [
                Call(item, repeat, self.judge)
                for repeat in range(self.repeats)
                for item in items
                if (item.item_id, repeat) not in self._in_flight
                and self._final(item.item_id, repeat) is None
            ]
        self._in_flight.update((call.item.item_id, call.repeat) for call in calls)
        self.summary.total += len(items) * self.repeats
        self.summary.skipped += len(items) * self.repeats - len(calls)
        source = ItemSource("journal", str(self.journal), items).describe()
        return self._stream.submit(calls, source)

    def _seen(self, line: dict[str, Any], sha: str) -> None:
        key = (line["item_id"], line["repeat"])
        self._lines.setdefault(key, []).append((line, sha))
        self._in_flight.discard(key)

    def _final(self, item_id: str, repeat: int) -> tuple[dict[str, Any], str] | None:
        """The call's first answer, else None (unanswered: no line, or errors only)."""
        for line, sha in self._lines.get((item_id, repeat), []):
            if line["outcome"] != "error":
                return line, sha
        return None

    def _dimensions(
        self, record: Mapping[str, Any], item: JudgeItem
    ) -> list[dict[str, Any]] | None:
        answers = [self._final(item.item_id, r) for r in range(self.repeats)]
        if any(answer is None for answer in answers):
            return None
        dims = derive_dimensions(
            item,
            item.rubric_version,
            [a for a in answers if a is not None],
            spec=self.judge.name,
            params=self._params(),
            run_log=self.relative_log,
        )
        return [calibrated(dim, self._calibration_of(dim)) for dim in dims]

    def _calibration_of(self, dim: Mapping[str, Any]) -> JudgeCalibration:
        identity = judge_identity(dim[JUDGE_KEY])
        if self.calibration is None:
            return JudgeCalibration(reason="no calibration lookup was given")
        if identity is None:
            return JudgeCalibration(
                reason="the judge identity is incomplete (its calls reported no model, or "
                "several): it matches no calibration"
            )
        key = f"{dim['id']}\0{identity_sha256(identity)}"
        if key not in self._calibrations:
            self._calibrations[key] = self.calibration(str(dim["id"]), identity)
        return self._calibrations[key]
