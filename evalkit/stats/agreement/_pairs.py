"""Two raters: their input (ratings or a k x k table) and the sufficient statistics of kappa.

Per item ``[w(a, b), one-hot(a), one-hot(b)]``: their sums are all a (weighted) Cohen's kappa
needs, so a bootstrap resample of items is evaluated as ``fn(w @ S)`` (Cohen, Light, kappa_max).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import Ratings, as_ratings, as_table, exclusive, ratings_from_table
from evalkit.stats.agreement._common import Array, _chance_corrected


def _ratings_or_table(
    name: str, ratings: Any, table: Any, categories: Sequence[Any] | None
) -> tuple[Ratings, bool]:
    """Two-rater input: ``ratings`` (n x 2) or ``table`` (k x k). Returns (ratings, from_table)."""
    which, value = exclusive(name, ("ratings", ratings), ("table", table))
    if which == "table":
        tab = as_table(value)
        r = ratings_from_table(tab)
        if categories is not None:
            cats = tuple(categories)
            if len(cats) != tab.shape[0]:
                raise EvalkitError(
                    f"{name}: categories has {len(cats)} labels, table is "
                    f"{tab.shape[0]} x {tab.shape[0]}"
                )
            r = Ratings(r.codes, cats)
        return r, True
    r = as_ratings(value, categories=categories)
    if r.n_raters != 2:
        raise EvalkitError(
            f"{name}: ratings must have exactly 2 raters (columns), got {r.n_raters}; "
            "for more raters use fleiss_kappa, conger_kappa, light_kappa or gwet_ac1"
        )
    return r, False


def _complete_pairs(r: Ratings) -> tuple[NDArray[np.intp], NDArray[np.intp] | None]:
    """Items rated by both raters: their codes and their input rows (None: every row, as is)."""
    both = (r.codes >= 0).all(axis=1)
    if both.all():  # no rating missing: the codes themselves, and no array of row numbers
        return r.codes, r.index
    return r.codes[both], r.rows[both]


def _pair_suff(codes: NDArray[np.intp], k: int, w: Array) -> Array:
    """Per item of two raters: [w(a_i, b_i), one-hot(a_i) (k), one-hot(b_i) (k)].

    Sums give n * po and both raters' margins, all a weighted kappa needs: 1 + 2k columns
    rather than the k * k cells of the table. Rows of codes with a -1 give an all-zero row.
    """
    n = codes.shape[0]
    s = np.zeros((n, 1 + 2 * k))
    ok = np.nonzero((codes >= 0).all(axis=1))[0]
    a, b = codes[ok, 0], codes[ok, 1]
    s[ok, 0] = w[a, b]
    s[ok, 1 + a] = 1.0
    s[ok, 1 + k + b] = 1.0
    return s


def _pair_margins(sums: Array, k: int) -> tuple[Array, Array, Array]:
    """(po, rater-1 margins, rater-2 margins) from sums (..., 1 + 2k); NaN if no item."""
    n = sums[..., 1 : 1 + k].sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(n > 0, 1.0 / np.where(n > 0, n, 1.0), np.nan)
    return (
        sums[..., 0] * inv,
        sums[..., 1 : 1 + k] * inv[..., None],
        sums[..., 1 + k :] * inv[..., None],
    )


def _table_fn(k: int, w: Array) -> Callable[[Array], Array]:
    """Weighted Cohen kappa from sums (..., 1 + 2k) of ``_pair_suff``."""

    def fn(sums: Array) -> Array:
        po, rows, cols = _pair_margins(sums, k)
        pe = np.einsum("...i,ij,...j->...", rows, w, cols)
        return _chance_corrected(po, pe)

    return fn
