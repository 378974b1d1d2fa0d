"""Label sequences (one label per item) for prevalence, PPI and judge panels.

Labels are any hashable values, usually the status strings ``pass`` / ``fail`` /
``cannot-determine`` (``Status`` members are read as their plain strings). ``None``, NaN and
pandas NA are *missing*: counted, never guessed, and left out of every statistic. Classes are
ordered with the statuses first, in the order above, then the remaining labels sorted (or in
order of first appearance when they cannot be sorted), so results list classes the same way
whatever order the data came in.

A calibration result is read through a small protocol (``paired_labels``): an object with a
method ``paired_labels()`` returning ``(judge_labels, gold_labels)`` (two aligned sequences,
one entry per gold item), or with the attributes ``judge_labels`` and ``gold_labels``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import is_missing

__all__ = [
    "STATUS_ORDER",
    "LabelledCalibration",
    "as_labels",
    "as_pairs",
    "as_panel",
    "calibration_pairs",
    "check_classes",
    "encode",
    "order_classes",
]

STATUS_ORDER = ("pass", "fail", "cannot-determine")


@runtime_checkable
class LabelledCalibration(Protocol):
    """What ``corrected_prevalence`` needs from a calibration result.

    ``paired_labels()`` returns ``(judge_labels, gold_labels)``: the judge's label and the gold
    label of every gold item, aligned item by item (missing judge labels as ``None``).
    """

    def paired_labels(self) -> tuple[Sequence[Any], Sequence[Any]]: ...


def _plain(value: Any, argname: str, i: int) -> Hashable | None:
    if is_missing(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    if isinstance(value, str):
        return str(value)  # a str subclass (Status) becomes its plain string
    if isinstance(value, (bytes, bytearray)):
        raise EvalkitError(f"{argname}: item {i}: label {value!r} is bytes; give a str")
    try:
        hash(value)
    except TypeError:
        raise EvalkitError(
            f"{argname}: item {i}: label {value!r} is not a single label (not hashable); "
            "give one label per item"
        ) from None
    return value  # type: ignore[no-any-return]


def as_labels(values: Any, argname: str) -> list[Hashable | None]:
    """One label per item (``None`` where missing); ``EvalkitError`` naming ``argname`` else.

    Accepted: a list, tuple, 1-D ndarray or pandas Series/Index. A string, a mapping, a set
    (no item order) or a scalar is refused.
    """
    if values is None:
        raise EvalkitError(f"{argname} is required: give one label per item")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise EvalkitError(f"{argname} must be 1-D (one label per item), got {values.ndim}-D")
        items: Iterable[Any] = values.tolist()
    elif _is_pandas_1d(values):
        items = values.tolist()
    elif isinstance(values, (str, bytes, Mapping, set, frozenset)) or not isinstance(
        values, Sequence
    ):
        raise EvalkitError(
            f"{argname} must be a sequence with one label per item (list, tuple, 1-D array, "
            f"Series), got {type(values).__name__}"
        )
    else:
        items = values
    plain = list(items)
    kinds = set(map(type, plain))
    if kinds <= _PLAIN_TEXT:  # already plain labels: no per-item test
        return plain
    if kinds <= _TEXT:  # numpy's strings among them (a list of an array's items): as str
        return [v if v is None else str(v) for v in plain]
    return [_plain(v, argname, i) for i, v in enumerate(plain)]


_PLAIN_TEXT = frozenset({str, type(None)})
_TEXT = _PLAIN_TEXT | {np.str_}


def _is_pandas_1d(values: Any) -> bool:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False
    return isinstance(values, (pd.Series, pd.Index))


def as_pairs(
    first: Any, second: Any, names: tuple[str, str]
) -> tuple[list[Hashable | None], list[Hashable | None]]:
    """Two aligned label sequences of equal length (missing kept as ``None``)."""
    a = as_labels(first, names[0])
    b = as_labels(second, names[1])
    if len(a) != len(b):
        raise EvalkitError(
            f"{names[0]} and {names[1]} must be aligned item by item: {len(a)} vs {len(b)} labels"
        )
    return a, b


def calibration_pairs(
    calibration: Any, argname: str = "calibration"
) -> tuple[list[Hashable | None], list[Hashable | None]]:
    """The judge's and the gold labels of a calibration: a pair, or the protocol above."""
    if calibration is None:
        raise EvalkitError(
            f"{argname} is required: a pair (judge_labels_on_gold, gold_labels) or a "
            "calibration result offering paired_labels()"
        )
    method = getattr(calibration, "paired_labels", None)
    if callable(method):
        got = method()
        if not isinstance(got, tuple) or len(got) != 2:
            raise EvalkitError(
                f"{argname}.paired_labels() must return (judge_labels, gold_labels), got "
                f"{type(got).__name__}"
            )
        pair: Any = got
    elif hasattr(calibration, "judge_labels") and hasattr(calibration, "gold_labels"):
        pair = (calibration.judge_labels, calibration.gold_labels)
    elif isinstance(calibration, (tuple, list)) and len(calibration) == 2:
        pair = calibration
    else:
        raise EvalkitError(
            f"{argname} must be a pair (judge_labels_on_gold, gold_labels) of equal-length "
            "label sequences, or a calibration result with paired_labels() (or the attributes "
            f"judge_labels and gold_labels); got {type(calibration).__name__}"
        )
    return as_pairs(pair[0], pair[1], (f"{argname}[0] (judge labels)", f"{argname}[1] (gold)"))


def order_classes(labels: Iterable[Hashable | None]) -> tuple[Any, ...]:
    """Distinct non-missing labels: statuses first (pass, fail, cannot-determine), then sorted."""
    seen = [lab for lab in dict.fromkeys(labels) if lab is not None]
    statuses = [s for s in STATUS_ORDER if s in seen]
    rest = [lab for lab in seen if lab not in STATUS_ORDER]
    with contextlib.suppress(TypeError):  # not orderable: keep the order of first appearance
        rest = sorted(rest)  # type: ignore[type-var]
    return tuple(statuses + rest)


def check_classes(classes: Any, argname: str = "classes") -> tuple[Any, ...] | None:
    """Declared classes (or None): distinct, non-missing labels, at least one."""
    if classes is None:
        return None
    labels = as_labels(classes, argname)
    if not labels or any(lab is None for lab in labels):
        raise EvalkitError(f"{argname} must list at least one label, none of them missing")
    if len(set(labels)) != len(labels):
        raise EvalkitError(f"{argname} must not repeat a label")
    return tuple(labels)


def encode(
    labels: Sequence[Hashable | None], classes: Sequence[Any], argname: str
) -> NDArray[np.intp]:
    """Codes into ``classes`` (-1 missing); a label outside ``classes`` is an error."""
    index = {c: j for j, c in enumerate(classes)}
    get = index.get
    # one list of codes, then one array: a numpy item assignment per label cost more than the
    # lookup (classes are never None, so None can only be a missing label)
    codes = np.array(
        [-1 if lab is None else get(lab, -2) for lab in labels], dtype=np.intp, ndmin=1
    )
    outside = np.flatnonzero(codes == -2)
    if outside.size:
        i = int(outside[0])
        raise EvalkitError(
            f"{argname}: item {i}: label {labels[i]!r} is not one of the classes {tuple(classes)!r}"
        )
    return codes


def as_panel(labels: Any, argname: str = "labels") -> tuple[tuple[Any, ...], list[list[Any]]]:
    """Several judges' labels over the same items: ``(judge names, one list per judge)``.

    Accepted: a mapping judge name -> label sequence (equal lengths), a pandas DataFrame
    (one column per judge), or a 2-D array / list of rows (items x judges; judges named
    0, 1, ...). At least two judges and one item.
    """
    if labels is None:
        raise EvalkitError(f"{argname} is required: a mapping judge -> labels over the same items")
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(labels, pd.DataFrame):
        labels = {c: labels[c].tolist() for c in labels.columns}
    if isinstance(labels, Mapping):
        names = tuple(labels)
        columns = [as_labels(labels[name], f"{argname}[{name!r}]") for name in names]
    else:
        if isinstance(labels, np.ndarray):
            if labels.ndim != 2:
                raise EvalkitError(f"{argname} must be 2-D (items x judges), got {labels.ndim}-D")
            rows: Any = labels.tolist()
        elif isinstance(labels, (str, bytes, set, frozenset)) or not isinstance(labels, Sequence):
            raise EvalkitError(
                f"{argname} must be a mapping judge -> labels, a DataFrame (one column per "
                f"judge) or items x judges rows; got {type(labels).__name__}"
            )
        else:
            rows = list(labels)
        if any(isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in rows):
            raise EvalkitError(f"{argname}: every row must list one label per judge")
        width = {len(r) for r in rows}
        if len(width) > 1:
            raise EvalkitError(f"{argname}: rows have different numbers of judges {sorted(width)}")
        m = width.pop() if width else 0
        names = tuple(range(m))
        columns = [as_labels([r[g] for r in rows], f"{argname}[:, {g}]") for g in range(m)]
    if len(names) < 2:
        raise EvalkitError(f"{argname} needs at least two judges, got {len(names)}")
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise EvalkitError(
            f"{argname}: every judge must label the same items (lengths {sorted(lengths)})"
        )
    if not columns[0]:
        raise EvalkitError(f"{argname} has no items")
    return names, columns
