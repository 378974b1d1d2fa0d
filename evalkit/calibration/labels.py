"""A judge's labels as a calibration reads them: one label per item, or K repeats per item.

Three sources give a :class:`JudgeLabels` (one judge's calls: ``item_id, repeat, label,
outcome``):

* a **run log** of ``evalkit judge run`` (:mod:`evalkit.judge.runlog`), recognised by the
  ``schema`` of its first JSON line. It may hold several judges: one is chosen by name, and
  with several and none named the error lists them. It keeps what ties it to the gold set:
  the item content hashes its judge saw and the gold set its run names
  (:func:`check_against_gold` refuses labels made on other items);
* a **labels file**, ``.csv`` or JSON lines, in long format ``item_id,label[,repeat]
  [,outcome][,judge]`` (one label per item, the special case K = 1, needs no ``repeat``);
* a **DataFrame** with the same columns (e.g. :class:`evalkit.simulate.SimulatedModelJudge`).

``outcome`` is ``ok`` (``label`` is one of the four dimension statuses), ``cannot-parse`` or
``error`` (no label: never a guessed one). Without an ``outcome`` column a non-empty label is
``ok``; an empty label is allowed only with one label per item, where it means "not labelled"
(missing), as before repeats existed.

:attr:`JudgeLabels.model_judge` decides which calibration applies: every run log and every
source with more than one repeat per item is a model judge's (repeats, consistency, the
model-judge decision rule); one label per item from a file or frame is calibrated as before.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.input import JsonInputError, clip, parse_json, read_bytes, split_lines
from evalkit.files.labels import CALL_OUTCOMES, read_csv_records

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.gold.sets import GoldSet

__all__ = [
    "CALL_COLUMNS",
    "JudgeLabels",
    "check_against_gold",
    "is_runlog",
    "labels_from_frame",
    "labels_from_runlog",
    "read_labels",
    "read_labels_table",
]

CALL_COLUMNS = ("item_id", "repeat", "label", "outcome")
_OUTCOMES = CALL_OUTCOMES


@dataclass(frozen=True)
class JudgeLabels:
    """One judge's calls (columns :data:`CALL_COLUMNS`, sorted by item and repeat).

    ``repeats`` is K, the largest repeat index plus one. ``model_judge`` is True for a run log,
    for K > 1, or when asked (a certificate of a model judge). ``item_sha256`` and
    ``source_gold`` (run logs only) are what the judge was shown: the content hash per item
    and the run's source ``{kind, path, sha256}``. ``notes`` are things a reader should know
    (skipped run-log lines, calls answered twice), said on stderr by the command line.
    """

    calls: pd.DataFrame = field(repr=False)
    judge: str | None
    repeats: int
    model_judge: bool
    source: str = ""
    item_sha256: Mapping[str, str | None] = field(default_factory=dict, repr=False)
    source_gold: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()

    def single(self) -> pd.DataFrame:
        """One label per item (K = 1): ``item_id, label`` with None where there is no label."""
        frame = self.calls[["item_id", "label"]].copy()
        frame["label"] = [
            lab if out == "ok" else None
            for lab, out in zip(self.calls["label"], self.calls["outcome"], strict=True)
        ]
        return frame.reset_index(drop=True)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _repeat(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise EvalkitError(f"{where}: repeat {value!r} is not an integer >= 0")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise EvalkitError(f"{where}: repeat {clip(repr(value))} is not an integer >= 0") from None
    if number < 0 or (number != value and str(number) != str(value).strip()):
        raise EvalkitError(f"{where}: repeat {clip(repr(value))} is not an integer >= 0")
    return number


def _one_judge(
    frame: pd.DataFrame, judge: str | None, shown: str
) -> tuple[pd.DataFrame, str | None]:
    """The rows of ``judge`` when ``frame`` names judges (all of them when it names one)."""
    if "judge" not in frame.columns:
        return frame, judge
    names = [str(j) for j in dict.fromkeys(frame["judge"]) if not _empty(j)]
    if judge is not None:
        if judge not in names:
            raise EvalkitError(
                f"{shown}: holds no judge {clip(repr(judge))}; it holds: "
                + ", ".join(clip(n) for n in names)
            )
        return frame[frame["judge"].astype(str) == judge], judge
    if len(names) > 1:
        raise EvalkitError(
            f"{shown}: holds {len(names)} judges ({', '.join(clip(n) for n in names)}); "
            "name the one to calibrate (--judge NAME)"
        )
    return frame, (names[0] if names else None)


def _call_rows(frame: pd.DataFrame, shown: str) -> list[tuple[str, int, str | None, str | None]]:
    """``(item_id, repeat, label, outcome)`` per row, each checked (outcome None: not given)."""
    from evalkit.judge.parse import DIMENSION_STATUSES

    has_repeat, has_outcome = "repeat" in frame.columns, "outcome" in frame.columns
    rows = []
    seen: dict[tuple[str, int], str] = {}
    for i, rec in enumerate(frame.to_dict("records")):
        where = f"{shown}: {_position(rec, i)}"
        if _empty(rec.get("item_id")):
            raise EvalkitError(f"{where}: item_id is empty")
        item = str(rec["item_id"])
        repeat = _repeat(rec["repeat"], where) if has_repeat else 0
        label = None if _empty(rec.get("label")) else rec.get("label")
        outcome = None if not has_outcome or _empty(rec.get("outcome")) else rec.get("outcome")
        if outcome is None and has_outcome:
            raise EvalkitError(f"{where}: outcome is empty; give ok, cannot-parse or error")
        if outcome is None and label is not None:
            outcome = "ok"
        if outcome is not None and outcome not in _OUTCOMES:
            raise EvalkitError(f"{where}: outcome {clip(repr(outcome))} is not one of {_OUTCOMES}")
        if outcome == "ok" and (not isinstance(label, str) or label not in DIMENSION_STATUSES):
            raise EvalkitError(
                f"{where}: item {clip(repr(item))}: label {clip(repr(label))} is not one of "
                f"{DIMENSION_STATUSES}"
            )
        if outcome in ("cannot-parse", "error") and label is not None:
            raise EvalkitError(f"{where}: outcome {outcome} with a label; it gave no label")
        if (item, repeat) in seen:
            hint = "" if has_repeat else " (several labels per item need a repeat column)"
            raise EvalkitError(
                f"{where}: item {clip(repr(item))} repeat {repeat} appears twice (also "
                f"{seen[item, repeat]}){hint}"
            )
        seen[item, repeat] = _position(rec, i)
        rows.append((item, repeat, label, outcome))
    return rows


#: The column a file reader adds to a frame: each row's line in its file.
LINE_COLUMN = "__line__"
#: Cells of a labels CSV read as no value (pandas' default missing-value spellings, which
#: these files were read with before their lines were numbered).
_NA_CELLS = frozenset(
    {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)  # fmt: skip


def _position(rec: Mapping[str, Any], index: int) -> str:
    """Where a row is, as every label reader says it.

    Its file's line (1 = the CSV header), else for a frame in memory its 1-based row.
    """
    line = rec.get(LINE_COLUMN)
    return f"row {index + 1}" if line is None or line != line else f"line {int(line)}"


def labels_from_frame(
    frame: pd.DataFrame,
    judge: str | None = None,
    *,
    source: str = "judge_labels",
    model_judge: bool = False,
) -> JudgeLabels:
    """A :class:`JudgeLabels` from a long-format DataFrame (see the module docstring).

    ``judge`` selects one judge of a frame with a ``judge`` column (required when it holds
    several). ``model_judge=True`` calibrates it as a model judge whatever its K.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise EvalkitError(f"{source}: must be a pandas DataFrame with columns item_id, label")
    for col in ("item_id", "label"):
        if col not in frame.columns:
            raise EvalkitError(f"{source}: column {col!r} missing")
    rows, name = _one_judge(frame, judge, source)
    calls = _call_rows(rows, source)
    repeats = max((r for _, r, _, _ in calls), default=-1) + 1
    model = model_judge or repeats > 1
    unknown = [i for i, (*_, out) in enumerate(calls) if out is None]
    if model and unknown:
        where = _position(rows.iloc[unknown[0]].to_dict(), unknown[0])
        raise EvalkitError(
            f"{source}: {where}: no label and no outcome; with repeats, say why a call "
            "gave no label (an outcome column: cannot-parse or error)"
        )
    table = pd.DataFrame(sorted(calls, key=_order), columns=list(CALL_COLUMNS))
    for col in ("label", "outcome"):  # None where there is none, never NaN
        table[col] = table[col].astype(object).where(table[col].notna(), None)
    return JudgeLabels(table, name, max(repeats, 1), model, source)


def _order(row: tuple[str, int, Any, Any]) -> tuple[str, int]:
    return (row[0], row[1])


def _first_object(data: bytes) -> Any:
    for line in split_lines(data):
        if line.data is None or not line.data.strip():
            continue
        try:
            return parse_json(line.data)
        except JsonInputError:
            return None
    return None


def is_runlog(path: str | os.PathLike[str]) -> bool:
    """Is ``path`` a run log (its first JSON line carries the run-log schema)?"""
    from evalkit.judge.runlog import SCHEMA

    first = _first_object(read_bytes(Path(path), "judge labels file"))
    return isinstance(first, dict) and first.get("schema") == SCHEMA


def labels_from_runlog(path: str | os.PathLike[str], judge: str | None = None) -> JudgeLabels:
    """The calls of one judge of the run log at ``path`` (see the module docstring)."""
    from evalkit.judge.runlog import read_runlog, runlog_labels

    shown = str(path)
    log = read_runlog(path)
    if not log.entries:
        raise EvalkitError(
            f"{shown}: no valid run-log line ({len(log.diagnostics)} line(s) skipped"
            + (f": {clip(log.diagnostics[0])}" if log.diagnostics else "")
            + ")"
        )
    notes = []
    if log.diagnostics:
        notes.append(
            f"{shown}: {len(log.diagnostics)} line(s) skipped (not run-log lines), first: "
            f"{clip(log.diagnostics[0])}"
        )
    frame = runlog_labels([log])
    rows, name = _one_judge(frame, judge, shown)
    final = {key: e for key, e in log.final().items() if key[2] == name}
    twice = [key for key in log.duplicates() if key[2] == name]
    if twice:
        notes.append(
            f"{shown}: {len(twice)} call(s) answered on more than one line; the first answer "
            "of each is used"
        )
    sources = {
        str(sorted((e.data.get("source") or {}).items())): e.data.get("source")
        for e in final.values()
    }
    if len(sources) > 1:
        raise EvalkitError(f"{shown}: the calls of {name!r} name {len(sources)} different sources")
    hashes: dict[str, str | None] = {}
    for (item, _repeat_index, _judge), entry in sorted(final.items()):
        digest = entry.data.get("item_sha256")
        if hashes.setdefault(item, digest) != digest:
            raise EvalkitError(f"{shown}: item {item!r} was judged with different content")
    labels = labels_from_frame(rows, name, source=shown, model_judge=True)
    source_gold = next(iter(sources.values()), None)
    return JudgeLabels(
        labels.calls,
        name,
        labels.repeats,
        True,
        shown,
        hashes,
        source_gold if isinstance(source_gold, Mapping) else {},
        tuple(notes),
    )


def read_labels_table(path: Path) -> pd.DataFrame:
    """The rows of a labels file (``.csv``: every column as text; else JSON lines), unchecked."""
    from evalkit.calibration._inputs import read_judge_labels

    if path.suffix.lower() != ".csv":
        return read_judge_labels(path)
    import pandas as pd

    # every column as text, an empty cell as none; each row knows its line, which every check
    # names (the numbering of evalkit.files.labels)
    header, records = read_csv_records(path, "judge labels file")
    width = len(header)
    cells = [
        [(None if c in _NA_CELLS else c) for c in (row + [""] * width)[:width]]
        for _, row in records
    ]
    frame = pd.DataFrame(cells, columns=header, dtype=object)
    frame[LINE_COLUMN] = [line for line, _ in records]
    return frame


def read_labels(path: str | os.PathLike[str], judge: str | None = None) -> JudgeLabels:
    """A judge's labels from a run log or a labels file (see the module docstring).

    ``judge`` selects a judge of a run log (or of a file with a ``judge`` column); with one
    judge in the source it may be left out. Problems are ``EvalkitError`` naming the file.
    """
    p = Path(path)
    if is_runlog(p):
        return labels_from_runlog(p, judge)
    frame = read_labels_table(p)
    for col in ("item_id", "label"):
        if col not in frame.columns:
            raise EvalkitError(f"{p}: column {col!r} missing")
    return labels_from_frame(frame, judge, source=str(p))


def check_against_gold(labels: JudgeLabels, gold: GoldSet) -> None:
    """Refuse labels a run log made on other items than ``gold``'s (``EvalkitError``).

    A run log names its source (a gold set's path and sha256, or a journal) and, per item, the
    sha256 of the content its judge was shown. Both must be ``gold``'s: another gold version,
    journal records, or an item whose content differs from the gold item of the same id are
    refused, naming what differs. Labels without such provenance are checked by item id only.
    """
    from evalkit.judge.items import make_item

    shown = labels.source or "judge_labels"
    src = labels.source_gold
    if src is not None:
        kind = src.get("kind")
        if not src:
            raise EvalkitError(
                f"{shown}: its lines name no source (the gold set the judge run used): they "
                "cannot be tied to a gold set"
            )
        if kind != "gold":
            raise EvalkitError(
                f"{shown}: its judge run labelled {clip(str(kind))} items, not a gold set: "
                "there are no gold labels to calibrate against"
            )
        sha = src.get("sha256")
        if sha != gold.sha256:
            raise EvalkitError(
                f"{shown}: made on the gold set {clip(str(src.get('path')))} (sha256 "
                f"{clip(str(sha))[:12]}...), not on {gold.tag} (sha256 {gold.sha256[:12]}...): "
                "give --gold the gold set version the judge run used"
            )
    rows = gold.items.to_dict("records")
    by_id = {row["item_id"]: row for row in rows}
    unknown = sorted(set(labels.calls["item_id"]) - set(by_id))
    if unknown:
        raise EvalkitError(
            f"{shown}: {len(unknown)} item(s) not in the gold set {gold.tag}, first "
            f"{clip(repr(unknown[0]))}"
        )
    for item, digest in sorted(labels.item_sha256.items()):
        expected = make_item(item, by_id[item]).sha256
        if digest is None:
            raise EvalkitError(
                f"{shown}: item {clip(repr(item))} carries no item_sha256: its calls cannot be "
                "tied to the gold item's content"
            )
        if digest != expected:
            raise EvalkitError(
                f"{shown}: item {clip(repr(item))}: the judge was shown other content than gold "
                f"item {clip(repr(item))} of {gold.tag} (item sha256 "
                f"{clip(str(digest))[:12]}..., gold {expected[:12]}...)"
            )


def say_notes(labels: JudgeLabels) -> None:
    """Print the notes of ``labels`` on stderr (the command line's use)."""
    for note in labels.notes:
        print(f"evalkit calibrate: {note}", file=sys.stderr)
