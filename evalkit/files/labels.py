"""Label files: one label per item, from a CSV a user names (a judge's or a human's labels).

Two CSV layouts are read (UTF-8, a header line first; extra columns are ignored):

* **one row per item**: columns ``item_id,label``. An empty label is *no label* (missing).
* **long format**, one row per judge call: columns ``item_id,judge,repeat,label,outcome``
  (what :class:`evalkit.simulate.SimulatedModelJudge` and a judge's run log give). A row
  whose ``outcome`` is ``ok`` carries a label; ``cannot-parse`` and ``error`` carry none; any
  other outcome is refused (:data:`CALL_OUTCOMES`). A file is read as long format when its header has a ``repeat``
  column.

**One label per item from repeats (the majority rule).** With several calls per item, the
item's label is the label that *strictly more* of its ``ok`` calls gave than any other label.
When two or more labels tie for the most calls the item has **no label** (a tie is never
broken, by order, seed or preference), and an item with no ``ok`` call has no label either;
both are counted and listed (``ties``, ``unlabelled``), never guessed.

Every file is read through :mod:`evalkit.files.input` (regular files only, bounded, strict
UTF-8). Every problem is an :class:`~evalkit.errors.EvalkitError` naming the file, the line
and the field: a missing column, an empty ``item_id``, an item given twice, a call given twice,
a ``repeat`` that is not a whole number, an ``ok`` call without a label or a failed call with
one, several judges in one file when none was chosen. Standard library only.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.input import clip, escape_surrogates, read_text

__all__ = [
    "CALL_OUTCOMES",
    "LONG_COLUMNS",
    "MAJORITY_RULE",
    "SIMPLE_COLUMNS",
    "ItemLabels",
    "long_labels",
    "majority_label",
    "read_csv_records",
    "read_item_labels",
]

SIMPLE_COLUMNS = ("item_id", "label")
LONG_COLUMNS = ("item_id", "judge", "repeat", "label", "outcome")
OK = "ok"
#: What a judge call can end in: ``ok`` (a label), ``cannot-parse`` (a reply, no label),
#: ``error`` (no reply). Any other outcome is refused, naming its file, line and field.
CALL_OUTCOMES = (OK, "cannot-parse", "error")
MAJORITY_RULE = (
    "with several calls per item, an item's label is the one strictly more of its ok calls gave "
    "than any other; a tie for the most calls, or no ok call, leaves the item without a label "
    "(counted and listed, never broken or guessed)"
)


@dataclass(frozen=True)
class ItemLabels:
    """One label per item of a label file (None: no label), and how each was arrived at.

    ``item_ids`` / ``labels`` are aligned, in order of first appearance. ``judge``: the judge
    whose calls were read (long format). ``calls``: rows read; ``outcomes``: calls per outcome;
    ``max_repeats``: the most calls any item had; ``ties`` / ``unlabelled``: the items left
    without a label by a tie or for want of an ``ok`` call (long format), or with an empty
    label (one row per item: ``unlabelled``).
    """

    source: str
    layout: str  # "item_id,label" or "long"
    item_ids: tuple[str, ...]
    labels: tuple[str | None, ...]
    judge: str | None = None
    judges: tuple[str, ...] = ()
    calls: int = 0
    max_repeats: int = 1
    outcomes: Mapping[str, int] = field(default_factory=dict)
    ties: tuple[str, ...] = ()
    unlabelled: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Items in the file."""
        return len(self.item_ids)

    @property
    def n_labelled(self) -> int:
        """Items with a label."""
        return sum(lab is not None for lab in self.labels)

    def by_item(self) -> dict[str, str | None]:
        """Item id -> its label (None: no label), in item order."""
        return dict(zip(self.item_ids, self.labels, strict=True))

    def summary(self) -> dict[str, Any]:
        """JSON-simple description (no labels): what was read and what was left without one."""
        return {
            "file": self.source,
            "layout": self.layout,
            "judge": self.judge,
            "items": self.n,
            "labelled": self.n_labelled,
            "calls": self.calls,
            "max_repeats": self.max_repeats,
            "outcomes": dict(self.outcomes),
            "ties": len(self.ties),
            "unlabelled": len(self.unlabelled),
            "tied_items": list(self.ties),
            "majority_rule": MAJORITY_RULE if self.layout == "long" else None,
        }


def majority_label(labels: Sequence[str]) -> str | None:
    """The label strictly most of ``labels`` are; None for a tie at the top or no label."""
    if labels and 2 * labels.count(labels[0]) > len(labels):  # more than half: the majority
        return labels[0]
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


# --------------------------------------------------------------------------- reading


def _rows(text: str, shown: str) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of each CSV record; a malformed record names its line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise EvalkitError(
                f"{shown}: line {reader.line_num}: not a readable CSV ({exc})"
            ) from None
        yield reader.line_num, row


def _columns(header: list[str], need: Sequence[str], shown: str) -> dict[str, int]:
    names = [h.strip() for h in header]
    missing = [c for c in need if c not in names]
    if missing:
        raise EvalkitError(
            f"{shown}: line 1: missing column(s) {', '.join(missing)} (header: "
            f"{', '.join(names) or 'empty'}); expected {','.join(SIMPLE_COLUMNS)} or "
            f"{','.join(LONG_COLUMNS)}"
        )
    return {c: names.index(c) for c in need}


def _fields(
    row: list[str], cols: Mapping[str, int], width: int, line: int, shown: str
) -> dict[str, str]:
    if len(row) > width:
        raise EvalkitError(f"{shown}: line {line}: {len(row)} fields, the header has {width}")
    values = {c: (row[i].strip() if i < len(row) else "") for c, i in cols.items()}
    if not values["item_id"]:
        raise EvalkitError(f"{shown}: line {line}: field 'item_id' is empty")
    return values


def _simple(
    records: Iterator[tuple[int, list[str]]], header: list[str], source: str, shown: str
) -> ItemLabels:
    cols = _columns(header, SIMPLE_COLUMNS, shown)
    seen: dict[str, int] = {}
    labels: dict[str, str | None] = {}
    for line, row in records:
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        v = _fields(row, cols, len(header), line, shown)
        item = v["item_id"]
        if item in seen:
            raise EvalkitError(
                f"{shown}: line {line}: field 'item_id': item {item!r} already given on line "
                f"{seen[item]} (one row per item; calls of a judge go in the long format)"
            )
        seen[item] = line
        labels[item] = v["label"] or None
    return ItemLabels(
        source=source,
        layout="item_id,label",
        item_ids=tuple(labels),
        labels=tuple(labels.values()),
        calls=len(labels),
        unlabelled=tuple(i for i, lab in labels.items() if lab is None),
    )


def _repeat(text: str, line: int, shown: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise EvalkitError(
            f"{shown}: line {line}: field 'repeat': {text!r} is not a whole number >= 0"
        )
    return value


def _long_values(
    records: Iterator[tuple[int, list[str]]], header: list[str], shown: str
) -> Iterator[tuple[int, tuple[str, ...]]]:
    cols = _columns(header, LONG_COLUMNS, shown)
    for line, row in records:
        if any(cell.strip() for cell in row):
            v = _fields(row, cols, len(header), line, shown)
            yield line, tuple(v[c] for c in LONG_COLUMNS)


_NOT_OK = frozenset(CALL_OUTCOMES) - {OK}


def _long_calls(
    values: Iterable[tuple[int, Sequence[str]]], shown: str
) -> dict[str, dict[str, list[tuple[int, str, str]]]]:
    """Judge -> item -> [(repeat, label, outcome)], every call checked (``line``: where).

    ``values``: ``(line, fields)``, the fields stripped and in :data:`LONG_COLUMNS` order.
    """
    calls: dict[str, dict[str, list[tuple[int, str, str]]]] = {}
    seen: dict[tuple[str, str, int], int] = {}
    for line, (item, judge, text, label, outcome) in values:
        if not (item and judge and outcome):
            empty = "item_id" if not item else "judge" if not judge else "outcome"
            raise EvalkitError(f"{shown}: line {line}: field {empty!r} is empty")
        # ASCII digits are a whole number >= 0 as int() reads it; anything else is checked
        repeat = int(text) if text.isascii() and text.isdigit() else _repeat(text, line, shown)
        first = seen.setdefault((judge, item, repeat), line)
        if first != line:
            raise EvalkitError(
                f"{shown}: line {line}: field 'repeat': judge {judge!r} item {item!r} repeat "
                f"{repeat} already given on line {first}"
            )
        if outcome == OK:
            if not label:
                raise EvalkitError(
                    f"{shown}: line {line}: field 'label': an ok call without a label"
                )
        elif outcome not in _NOT_OK:
            raise EvalkitError(
                f"{shown}: line {line}: field 'outcome': {clip(repr(outcome), 60)} is not "
                f"one of {', '.join(CALL_OUTCOMES)}"
            )
        elif label:
            raise EvalkitError(
                f"{shown}: line {line}: field 'label': outcome {outcome!r} gives no label, "
                f"yet the row has label {label!r}"
            )
        by_item = calls.get(judge)
        if by_item is None:
            by_item = calls[judge] = {}
        item_calls = by_item.get(item)
        if item_calls is None:
            by_item[item] = [(repeat, label, outcome)]
        else:
            item_calls.append((repeat, label, outcome))
    return calls


def _long(
    values: Iterable[tuple[int, Sequence[str]]], source: str, shown: str, judge: str | None
) -> ItemLabels:
    calls = _long_calls(values, shown)
    judges = tuple(calls)
    if judge is None and len(judges) > 1:
        raise EvalkitError(
            f"{shown}: {len(judges)} judges ({', '.join(map(repr, judges))}); name the one to read"
        )
    if judge is not None and judge not in calls:
        raise EvalkitError(
            f"{shown}: no judge {judge!r} (judges: {', '.join(map(repr, judges)) or 'none'})"
        )
    chosen = judge if judge is not None else (judges[0] if judges else None)
    own = calls.get(chosen, {}) if chosen is not None else {}
    labels: dict[str, str | None] = {}
    ties: list[str] = []
    unlabelled: list[str] = []
    outcomes: Counter[str] = Counter()
    for item, item_calls in own.items():
        ok = [lab for _, lab, out in item_calls if out == OK]
        labels[item] = majority_label(ok)
        if labels[item] is None:
            (ties if ok else unlabelled).append(item)
    outcomes.update(out for item_calls in own.values() for *_, out in item_calls)
    return ItemLabels(
        source=source,
        layout="long",
        item_ids=tuple(labels),
        labels=tuple(labels.values()),
        judge=chosen,
        judges=judges,
        calls=sum(len(c) for c in own.values()),
        max_repeats=max((len(c) for c in own.values()), default=0),
        outcomes=dict(sorted(outcomes.items())),
        ties=tuple(ties),
        unlabelled=tuple(unlabelled),
    )


def long_labels(calls: Any, source: str = "labels", *, judge: str | None = None) -> ItemLabels:
    """One label per item from long-format calls already in memory.

    ``calls`` is a DataFrame with the columns ``item_id, judge, repeat, label, outcome``, e.g.
    from :meth:`evalkit.simulate.SimulatedModelJudge.label`, or a mapping of those names to
    equally long sequences (:meth:`~evalkit.simulate.SimulatedModelJudge.label_columns`); the
    same checks and majority rule as a file apply, and ``line`` in an error is the row's
    number (1 = the first row).
    """
    mapping = isinstance(calls, Mapping)
    names = calls.keys() if mapping else getattr(calls, "columns", ())
    missing = [c for c in LONG_COLUMNS if c not in names]
    if missing:
        raise EvalkitError(f"{source}: column(s) {', '.join(missing)} missing")

    # column by column as Python values: iterating a pandas column value by value is slow
    columns = [_cells(list(calls[c]) if mapping else calls[c].tolist()) for c in LONG_COLUMNS]
    values = zip(itertools.count(1), zip(*columns, strict=True))
    result = _long(values, source, source, judge)
    if not result.n:
        raise EvalkitError(f"{source}: no item")
    return result


def _cells(values: list[Any]) -> list[str]:
    """A column's values as stripped text; None and NaN are empty."""
    kinds = set(map(type, values))
    if kinds <= {str}:  # the usual column: no per-value test
        return [v.strip() for v in values]
    if kinds <= {str, type(None)}:  # labels, None where a call gave none
        return ["" if v is None else v.strip() for v in values]
    if kinds <= {int}:  # repeat numbers: str() of an int has no space to strip
        return list(map(str, values))
    return ["" if v is None or v != v else str(v).strip() for v in values]


def read_csv_records(
    path: str | os.PathLike[str], what: str
) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the ``(line, fields)`` of every non-blank record of a CSV file.

    ``line`` is the record's 1-based line in the file (the header is line 1), as every label
    reader names a line; a malformed record is an ``EvalkitError`` naming its line.
    """
    shown = f"{what} {escape_surrogates(os.fsdecode(path))!r}"
    records = _rows(read_text(path, what), shown)
    header = next(records, None)
    if header is None:
        raise EvalkitError(f"{shown}: empty (expected a header line)")
    rows = [(line, row) for line, row in records if any(cell.strip() for cell in row)]
    return [h.strip() for h in header[1]], rows


def read_item_labels(
    path: str | os.PathLike[str], what: str = "labels file", *, judge: str | None = None
) -> ItemLabels:
    """One label per item of the CSV at ``path``.

    The module docstring gives the layouts and the majority rule. ``what`` names the file's
    role in errors; ``judge`` picks one judge of a long-format file holding several. A file
    without a single item is an error.
    """
    source = escape_surrogates(os.fsdecode(path))
    shown = f"{what} {source!r}"
    text = read_text(path, what)
    records = _rows(text, shown)
    header = next(records, None)
    if header is None:
        raise EvalkitError(f"{shown}: empty (expected a header line)")
    names = {h.strip() for h in header[1]}
    if "repeat" in names:
        result = _long(_long_values(records, header[1], shown), source, shown, judge)
    else:
        if judge is not None:
            raise EvalkitError(f"{shown}: one row per item (no judge column); drop the judge name")
        result = _simple(records, header[1], source, shown)
    if not result.n:
        raise EvalkitError(f"{shown}: no item")
    return result
