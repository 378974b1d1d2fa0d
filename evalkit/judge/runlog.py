"""The run log of ``evalkit judge run``: one JSON line per (item, repeat, judge) call.

A line (schema :data:`SCHEMA`) holds::

    schema, item_id, repeat, judge, params, item_sha256, source,
    model, prompt_sha256, nonce,
    outcome ("ok" | "cannot-parse" | "error"), status, reason, reply, error,
    input_tokens, output_tokens, latency_s, timestamp, evalkit_version, replay

* ``judge`` is the spec ``provider:model``; ``params`` its parameters (never a key, never URL
  credentials); ``model`` the model id the API reported.
* ``prompt_sha256`` is the sha256 of the exact prompt sent; ``nonce`` is its fence nonce, so the
  prompt can be rebuilt from the item and checked against the hash. ``item_sha256`` is the
  item's content hash (:mod:`evalkit.judge.items`).
* ``outcome`` ``ok``: ``status`` is the label. ``cannot-parse``: a reply came but gave no label;
  ``status`` is ``"cannot-parse"`` and ``reason`` says why. ``error``: no usable reply;
  ``status`` is null and ``error`` is ``{kind, message, http_status}``. Neither is a label
  (:func:`runlog_labels` keeps them apart); a rerun retries errors.
* ``replay`` is ``{path, line}`` of the answer a replay judge copied, else null.

The log is append-only and written with :class:`evalkit.files.append.LineAppender`. Reading is
forgiving: a line that is not a valid run-log line (a torn last line of a killed writer, a line
of another file) is reported in ``diagnostics`` and skipped, never guessed.

:func:`runlog_labels` turns run logs into long-format labels for calibration and agreement:
``item_id, judge, repeat, label, outcome, reason``, one row per (item, repeat, judge), with
``label`` null unless the outcome is ``ok``. :func:`agreement_table` reshapes them into the long
table of the agreement study (:mod:`evalkit.analyses.agreement`: ``item_id, target, family,
rater, label``): each judge a label family, each of its repeats (or its majority label) a rater.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.append import FirstLine
from evalkit.files.input import JsonInputError, parse_json, read_bytes, split_lines
from evalkit.files.labels import CALL_OUTCOMES
from evalkit.judge.parse import DIMENSION_STATUSES
from evalkit.record.dimension import DimensionId

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LABEL_COLUMNS",
    "OUTCOMES",
    "RUNLOG_LINES",
    "SCHEMA",
    "RunLog",
    "RunLogEntry",
    "agreement_table",
    "read_runlog",
    "runlog_labels",
]

SCHEMA = "evalkit-judge-runlog/1"
#: A run log's lines (a file whose first line is none is never appended to).
RUNLOG_LINES = FirstLine(
    "run-log lines", re.compile(rb'^\s*\{.*"schema"\s*:\s*"evalkit-judge-runlog/')
)
OUTCOMES = CALL_OUTCOMES  # one vocabulary for run logs and label files
LABEL_COLUMNS = ("item_id", "judge", "repeat", "label", "outcome", "reason")
Key = tuple[str, int, str]


@dataclass(frozen=True)
class RunLogEntry:
    """One valid run-log line.

    Its 1-based ``line`` number, the key fields and the whole object (``data``).
    """

    line: int
    item_id: str
    repeat: int
    judge: str
    outcome: str
    status: str | None
    reason: str | None
    error_kind: str | None
    data: Mapping[str, Any]

    @property
    def key(self) -> Key:
        """``(item_id, repeat, judge)``: what a resumed run skips once answered."""
        return (self.item_id, self.repeat, self.judge)

    @property
    def answered(self) -> bool:
        """True for ``ok`` and ``cannot-parse`` (a reply came); an error is not an answer."""
        return self.outcome != "error"


@dataclass(frozen=True)
class RunLog:
    """What :func:`read_runlog` found: valid entries in file order and skipped lines."""

    path: Path
    entries: tuple[RunLogEntry, ...] = ()
    diagnostics: tuple[str, ...] = ()

    def final(self) -> dict[Key, RunLogEntry]:
        """The outcome of each key: its first answered entry, else its last error."""
        out: dict[Key, RunLogEntry] = {}
        for entry in self.entries:
            held = out.get(entry.key)
            if held is None or not held.answered:
                out[entry.key] = entry
        return out

    def answered(self) -> set[Key]:
        """The keys with an answered entry (what a resumed run skips)."""
        return {e.key for e in self.entries if e.answered}

    def duplicates(self) -> dict[Key, list[int]]:
        """Keys answered on more than one line (two runs writing one log), with those lines."""
        lines: dict[Key, list[int]] = {}
        for entry in self.entries:
            if entry.answered:
                lines.setdefault(entry.key, []).append(entry.line)
        return {key: found for key, found in lines.items() if len(found) > 1}

    def judges(self) -> tuple[str, ...]:
        """The judges of the log, in order of first appearance."""
        return tuple(dict.fromkeys(e.judge for e in self.entries))

    def first_of(self, judge: str) -> RunLogEntry | None:
        """The first entry of ``judge`` (its params as first recorded), or None."""
        return next((e for e in self.entries if e.judge == judge), None)


def _problem(obj: Any) -> str | None:
    """Why ``obj`` is not a valid run-log line, or None."""
    if not isinstance(obj, dict):
        return f"JSON {type(obj).__name__}, not a run-log object"
    if obj.get("schema") != SCHEMA:
        return f"field schema is {obj.get('schema')!r}, not {SCHEMA!r}"
    if not isinstance(obj.get("item_id"), str) or not obj["item_id"]:
        return "field item_id must be a non-empty string"
    repeat = obj.get("repeat")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 0:
        return "field repeat must be an integer >= 0"
    if not isinstance(obj.get("judge"), str) or not obj["judge"]:
        return "field judge must be a non-empty string"
    outcome = obj.get("outcome")
    if outcome not in OUTCOMES:
        return f"field outcome {outcome!r} is not one of {', '.join(OUTCOMES)}"
    status = obj.get("status")
    if outcome == "ok" and status not in DIMENSION_STATUSES:
        return f"outcome ok with status {status!r}, not a label"
    if outcome == "cannot-parse" and status != "cannot-parse":
        return f"outcome cannot-parse with status {status!r}, not 'cannot-parse'"
    if outcome == "error" and status is not None:
        return "outcome error must carry status null"
    error = obj.get("error")
    if outcome == "error" and not (isinstance(error, dict) and isinstance(error.get("kind"), str)):
        return "outcome error without an error object naming its kind"
    return None


def _entry(number: int, obj: dict[str, Any]) -> RunLogEntry:
    error: dict[str, Any] = obj.get("error") or {}
    reason = obj.get("reason")
    if obj["outcome"] == "error":
        reason = f"{error['kind']}: {error.get('message')}"
    return RunLogEntry(
        line=number,
        item_id=obj["item_id"],
        repeat=obj["repeat"],
        judge=obj["judge"],
        outcome=obj["outcome"],
        status=obj.get("status"),
        reason=reason if isinstance(reason, str) else None,
        error_kind=error["kind"] if obj["outcome"] == "error" else None,
        data=obj,
    )


def read_runlog(path: str | os.PathLike[str], *, missing_ok: bool = False) -> RunLog:
    """Read the run log at ``path`` (through :mod:`evalkit.files.input`: regular file, capped).

    ``missing_ok`` returns an empty log for a file that does not exist yet (a first run).
    Invalid lines are listed in ``diagnostics`` (``line N: reason``) and skipped.
    """
    target = Path(path)
    if missing_ok and not os.path.lexists(target):
        return RunLog(target)
    data = read_bytes(target, "run log")
    entries: list[RunLogEntry] = []
    diagnostics: list[str] = []
    for raw in split_lines(data):
        if raw.data is None:
            diagnostics.append(f"line {raw.number}: longer than the line cap ({raw.length} bytes)")
            continue
        if not raw.data.strip():
            continue
        try:
            obj = parse_json(raw.data)
        except JsonInputError as exc:
            torn = " (the last line, cut off mid-write)" if raw.unterminated else ""
            diagnostics.append(f"line {raw.number}: {exc}{torn}")
            continue
        problem = _problem(obj)
        if problem is not None:
            diagnostics.append(f"line {raw.number}: {problem}")
            continue
        entries.append(_entry(raw.number, obj))
    return RunLog(target, tuple(entries), tuple(diagnostics))


def runlog_labels(logs: Iterable[RunLog | str | os.PathLike[str]]) -> pd.DataFrame:
    """Long-format labels of one or more run logs (columns :data:`LABEL_COLUMNS`).

    One row per (item, repeat, judge), its final outcome (:meth:`RunLog.final`): ``label`` is
    the status for ``ok`` and null otherwise; ``outcome`` keeps ``cannot-parse`` and ``error``
    apart from labels; ``reason`` says why there is no label. The same (item, repeat, judge) in
    two logs is an ``EvalkitError`` naming both. Rows are sorted by judge, item, repeat.
    """
    import pandas as pd

    rows: dict[Key, dict[str, Any]] = {}
    where: dict[Key, Path] = {}
    for log in logs:
        run = log if isinstance(log, RunLog) else read_runlog(log)
        for key, entry in run.final().items():
            if key in rows:
                raise EvalkitError(
                    f"{run.path}: item {key[0]!r} repeat {key[1]} of judge {key[2]!r} is "
                    f"also in {where[key]}; give each (item, repeat, judge) one run log"
                )
            where[key] = run.path
            rows[key] = {
                "item_id": entry.item_id,
                "judge": entry.judge,
                "repeat": entry.repeat,
                "label": entry.status if entry.outcome == "ok" else None,
                "outcome": entry.outcome,
                "reason": entry.reason,
            }
    ordered = [rows[key] for key in sorted(rows, key=lambda k: (k[2], k[0], k[1]))]
    frame = pd.DataFrame(ordered, columns=list(LABEL_COLUMNS))
    for column in ("label", "reason"):  # missing is None, never NaN (a float among labels)
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame


def agreement_table(
    labels: pd.DataFrame,
    *,
    majority: bool = False,
    target: str = DimensionId.INSTRUCTION_ADHERENCE.value,
) -> pd.DataFrame:
    """Labels of :func:`runlog_labels` as the agreement study's long table.

    Columns ``item_id, target, family, rater, label``: ``family`` is the judge; ``rater`` is
    ``JUDGE#rN`` for repeat N, or, with ``majority=True``, the judge itself carrying its
    per-item majority label (:func:`evalkit.judge.consistency.majority_labels`; a tie is no
    label). Calls without a label (cannot-parse, error, tie) are missing ratings: left out.
    """
    import pandas as pd

    from evalkit.judge.consistency import majority_labels

    rows: list[dict[str, Any]] = []
    for judge in dict.fromkeys(labels["judge"]):
        own = labels[labels["judge"] == judge]
        if majority:
            pairs = [(i, judge, lab) for i, lab in majority_labels(own).labels.items()]
        else:
            pairs = [
                (i, f"{judge}#r{r}", lab)
                for i, r, lab in zip(own["item_id"], own["repeat"], own["label"], strict=True)
            ]
        rows += [
            {"item_id": i, "target": target, "family": judge, "rater": rater, "label": lab}
            for i, rater, lab in pairs
            if lab is not None
        ]
    return pd.DataFrame(rows, columns=["item_id", "target", "family", "rater", "label"])
