"""Input validation: ratings, contingency tables and count matrices to canonical arrays.

Every public statistic goes through here, so every bad input gets the same clear
``EvalkitError`` naming the argument and saying what would be accepted.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError

__all__ = [
    "Ratings",
    "as_counts",
    "as_counts_indexed",
    "as_ratings",
    "as_table",
    "check_level",
    "check_resamples",
    "is_missing",
    "ratings_from_table",
]

_LONG_COLUMNS = ("item", "rater", "label")


@dataclass(frozen=True, eq=False)
class Ratings:
    """Canonical ratings: ``codes[i, g]`` is the category index rater g gave item i, -1 missing.

    ``categories`` are the labels in code order (sorted when the labels are mutually orderable,
    otherwise in order of first appearance). ``numeric`` says every label is a real number,
    so ``values`` (the labels as floats) can serve as scores for weights and metrics.
    """

    codes: NDArray[np.intp]
    categories: tuple[Any, ...]
    index: NDArray[np.intp] | None = None  # input row of each kept item (None: all, in order)
    n_input: int | None = None  # rows in the input, before items without ratings were dropped

    @property
    def rows(self) -> NDArray[np.intp]:
        """Input row of each item (lets per-input-row clusters follow dropped items)."""
        return np.arange(self.n_items) if self.index is None else self.index

    @property
    def n_rows_input(self) -> int:
        return self.n_items if self.n_input is None else self.n_input

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_raters(self) -> int:
        return int(self.codes.shape[1])

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    @property
    def numeric(self) -> bool:
        return all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in self.categories)

    @property
    def values(self) -> NDArray[np.float64]:
        """Scores of the categories: the labels if numeric, else 0, 1, ..., k-1."""
        if self.numeric:
            return np.asarray([float(c) for c in self.categories])
        return np.arange(self.n_categories, dtype=float)

    def counts(self) -> NDArray[np.float64]:
        """Items x categories matrix: how many raters put item i in category j."""
        n, k = self.n_items, self.n_categories
        rows = np.repeat(np.arange(n), self.n_raters).reshape(n, self.n_raters)
        ok = self.codes >= 0
        flat = rows[ok] * k + self.codes[ok]
        return np.bincount(flat, minlength=n * k).reshape(n, k).astype(float)

    def drop_empty_items(self) -> Ratings:
        keep = (self.codes >= 0).any(axis=1)
        if keep.all():  # nothing to drop: the arrays themselves, not copies
            return self
        return Ratings(self.codes[keep], self.categories, self.rows[keep], self.n_rows_input)


def is_missing(value: Any) -> bool:
    """None, NaN, pandas NA/NaT count as missing."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    try:
        import pandas as pd

        return bool(value is pd.NA or value is pd.NaT)
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False


def _order_categories(labels: list[Hashable], categories: Sequence[Any] | None) -> list[Any]:
    if categories is not None:
        cats = list(categories)
        if len(set(cats)) != len(cats):
            raise EvalkitError("categories must not repeat a label")
        unknown = [lab for lab in dict.fromkeys(labels) if lab not in set(cats)]
        if unknown:
            raise EvalkitError(
                f"ratings contain labels not in categories: {unknown[:5]!r} "
                f"(categories given: {cats!r})"
            )
        return cats
    uniq = list(dict.fromkeys(labels))
    try:
        return sorted(uniq)
    except TypeError:
        return uniq  # not mutually orderable: keep order of first appearance


def _long_to_wide(df: Any) -> list[list[Any]]:
    missing = [c for c in _LONG_COLUMNS if c not in df.columns]
    if missing:
        raise EvalkitError(
            f"ratings: a long DataFrame needs columns {_LONG_COLUMNS}, missing {missing}"
        )
    dup = df.duplicated(subset=["item", "rater"], keep=False)
    if bool(dup.any()):
        first = df.loc[dup, ["item", "rater"]].iloc[0].tolist()
        raise EvalkitError(
            f"ratings: item {first[0]!r} has more than one label from rater {first[1]!r}"
        )
    items = list(dict.fromkeys(df["item"].tolist()))
    raters = list(dict.fromkeys(df["rater"].tolist()))
    ii = {v: i for i, v in enumerate(items)}
    gg = {v: g for g, v in enumerate(raters)}
    grid: list[list[Any]] = [[None] * len(raters) for _ in items]
    # tolist(): the values iteration gives, without a Python step per (Arrow) cell
    cells = zip(df["item"].tolist(), df["rater"].tolist(), df["label"].tolist(), strict=True)
    for item, rater, label in cells:
        grid[ii[item]][gg[rater]] = label
    return grid


def _rows_of(ratings: Any, argname: str) -> list[list[Any]]:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    rows: list[list[Any]]
    if pd is not None and isinstance(ratings, pd.DataFrame):
        names = set(map(str, ratings.columns))
        if {"item", "rater"} <= names or "label" in names:  # meant as the long form
            return _long_to_wide(ratings)
        rows = ratings.astype(object).values.tolist()
        return rows
    if isinstance(ratings, np.ndarray):
        if ratings.ndim != 2:
            raise EvalkitError(
                f"{argname} must be 2-D (rows items, columns raters), got {ratings.ndim}-D"
            )
        rows = ratings.astype(object).tolist()
        return rows
    if isinstance(ratings, (str, bytes)) or not isinstance(ratings, Sequence):
        raise EvalkitError(
            f"{argname} must be a 2-D array-like (rows items, columns raters) or a long "
            f"DataFrame with columns item, rater, label; got {type(ratings).__name__}"
        )
    rows = []
    for i, row in enumerate(ratings):
        if isinstance(row, (str, bytes)) or not isinstance(row, (Sequence, np.ndarray)):
            raise EvalkitError(
                f"{argname}: row {i} is not a sequence of ratings (got {type(row).__name__}); "
                "give one row per item and one column per rater"
            )
        rows.append(list(row))
    return rows


def as_ratings(
    ratings: Any,
    *,
    argname: str = "ratings",
    categories: Sequence[Any] | None = None,
    min_raters: int = 2,
) -> Ratings:
    """Validate ``ratings`` (items x raters, any hashable labels, None/NaN missing).

    Items with no rating at all are dropped (they carry no information). Raises
    ``EvalkitError`` naming ``argname`` on ragged rows, unhashable labels, fewer than
    ``min_raters`` columns, or no rated item.
    """
    if ratings is None:
        raise EvalkitError(f"{argname} is required")
    fast = _numeric_fast_path(ratings, argname, categories, min_raters)
    if fast is not None:
        return fast
    rows = _rows_of(ratings, argname)
    if not rows:
        raise EvalkitError(f"{argname} is empty: give at least one item (row)")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise EvalkitError(
                f"{argname}: row {i} has {len(row)} ratings, row 0 has {width}; "
                "every item needs one column per rater (use None for missing)"
            )
    if width < min_raters:
        raise EvalkitError(f"{argname} needs at least {min_raters} raters (columns), got {width}")
    labels: list[Hashable] = []
    for i, row in enumerate(rows):
        for g, value in enumerate(row):
            if is_missing(value):
                row[g] = None
                continue
            if isinstance(value, np.generic):
                value = value.item()
                row[g] = value
            try:
                hash(value)
            except TypeError:
                raise EvalkitError(
                    f"{argname}: item {i}, rater {g}: label {value!r} is not hashable"
                ) from None
            labels.append(value)
    if not labels:
        raise EvalkitError(f"{argname} has no ratings (every value is missing)")
    cats = _order_categories(labels, categories)
    index = {c: j for j, c in enumerate(cats)}
    codes = np.full((len(rows), width), -1, dtype=np.intp)
    for i, row in enumerate(rows):
        for g, value in enumerate(row):
            if value is not None:
                codes[i, g] = index[value]
    return Ratings(codes, tuple(cats)).drop_empty_items()


def _numeric_fast_path(
    ratings: Any, argname: str, categories: Sequence[Any] | None, min_raters: int
) -> Ratings | None:
    """Integer or float ndarrays (NaN missing) without declared categories: vectorized.

    Gives exactly what the general path gives (labels as Python numbers, sorted); anything
    else returns None and takes the general path.
    """
    if categories is not None or not isinstance(ratings, np.ndarray) or ratings.ndim != 2:
        return None
    if ratings.dtype.kind not in "iuf" or ratings.size == 0:
        return None
    if ratings.shape[1] < min_raters:
        raise EvalkitError(
            f"{argname} needs at least {min_raters} raters (columns), got {ratings.shape[1]}"
        )
    if ratings.dtype.kind in "iu":
        coded = _small_integer_codes(ratings)
        if coded is not None:
            return Ratings(*coded).drop_empty_items()
    present = ~np.isnan(ratings) if ratings.dtype.kind == "f" else np.ones(ratings.shape, bool)
    if not present.any():
        raise EvalkitError(f"{argname} has no ratings (every value is missing)")
    if ratings.dtype.kind == "f" and not np.all(np.isfinite(ratings[present])):
        return None  # infinities are labels too; let the general path handle them
    labels = np.unique(ratings[present])
    codes = np.full(ratings.shape, -1, dtype=np.intp)
    codes[present] = np.searchsorted(labels, ratings[present])
    return Ratings(codes, tuple(labels.tolist())).drop_empty_items()


#: Widest range of integer labels coded by counting rather than by sorting.
_COUNTED_RANGE = 1 << 16


def _small_integer_codes(ratings: NDArray[Any]) -> tuple[NDArray[np.intp], tuple[Any, ...]] | None:
    """Integer ratings (none missing) within a small range: codes by counting, no sort.

    The labels are the values present, sorted; each rating's code its label's position (what
    ``np.unique`` + ``searchsorted`` give, in O(n) time and one array of codes).
    """
    lo, hi = int(ratings.min()), int(ratings.max())
    if hi - lo >= _COUNTED_RANGE:
        return None
    codes = ratings.astype(np.intp)  # the one array of the result, coded in place
    if lo:
        codes -= lo
    present = np.bincount(codes.ravel(), minlength=hi - lo + 1) > 0
    labels = (np.flatnonzero(present) + lo).tolist()
    if not present.all():  # a gap between labels: renumber (else the codes are the positions)
        codes = (np.cumsum(present) - 1)[codes]
    return codes, tuple(labels)


def _as_nonneg_matrix(value: Any, argname: str) -> NDArray[np.float64]:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise EvalkitError(f"{argname} must be a numeric matrix of counts") from None
    if arr.ndim != 2:
        raise EvalkitError(f"{argname} must be 2-D, got {arr.ndim}-D")
    if not np.all(np.isfinite(arr)):
        raise EvalkitError(f"{argname} must not contain NaN or infinite counts")
    if np.any(arr < 0):
        raise EvalkitError(f"{argname} must not contain negative counts")
    if np.any(arr != np.round(arr)):
        raise EvalkitError(f"{argname} must contain whole counts")
    return arr


def as_table(table: Any, argname: str = "table") -> NDArray[np.float64]:
    """Validate a k x k contingency table of two raters (rows rater 1, columns rater 2)."""
    arr = _as_nonneg_matrix(table, argname)
    if arr.shape[0] != arr.shape[1]:
        raise EvalkitError(f"{argname} must be square (k x k), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.sum() == 0:
        raise EvalkitError(f"{argname} has no items (all counts are 0)")
    return arr


def as_counts(counts: Any, argname: str = "counts") -> NDArray[np.float64]:
    """Validate an items x categories count matrix (n_ij raters put item i in category j)."""
    return as_counts_indexed(counts, argname)[0]


def as_counts_indexed(
    counts: Any, argname: str = "counts"
) -> tuple[NDArray[np.float64], NDArray[np.intp], int]:
    """``as_counts`` plus the input row of each kept item and the number of input rows."""
    arr = _as_nonneg_matrix(counts, argname)
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise EvalkitError(f"{argname} must have at least one item and one category")
    keep = arr.sum(axis=1) > 0
    if not keep.any():
        raise EvalkitError(f"{argname} has no ratings (all counts are 0)")
    return arr[keep], np.nonzero(keep)[0], int(arr.shape[0])


def ratings_from_table(table: NDArray[np.float64]) -> Ratings:
    """Expand a k x k table into n x 2 codes (one row per item); categories 0..k-1."""
    k = table.shape[0]
    cells = table.astype(np.int64).ravel()
    idx = np.repeat(np.arange(k * k), cells)
    codes = np.stack([idx // k, idx % k], axis=1).astype(np.intp)
    return Ratings(codes, tuple(range(k)))


def check_level(level: float) -> None:
    """Refuse a confidence level that is not a number strictly between 0 and 1."""
    if not isinstance(level, (int, float)) or not 0 < float(level) < 1 or math.isnan(level):
        raise EvalkitError(f"level must be a number strictly between 0 and 1, got {level!r}")


def check_resamples(n_resamples: Any, minimum: int = 1) -> int:
    """``n_resamples`` as an ``int``; refuses a bool, a non-integer or fewer than ``minimum``."""
    if (
        not isinstance(n_resamples, (int, np.integer))
        or isinstance(n_resamples, (bool, np.bool_))
        or n_resamples < minimum
    ):
        raise EvalkitError(f"n_resamples must be an int >= {minimum}, got {n_resamples!r}")
    return int(n_resamples)


def exclusive(argname: str, *given: tuple[str, Any]) -> tuple[str, Any]:
    """Exactly one of the named inputs must be given; return (name, value)."""
    present = [(name, value) for name, value in given if value is not None]
    if len(present) != 1:
        names = " or ".join(f"{name}=" for name, _ in given)
        if not present:
            raise EvalkitError(f"{argname}: give {names}")
        raise EvalkitError(f"{argname}: give only one of {names}")
    return present[0]
