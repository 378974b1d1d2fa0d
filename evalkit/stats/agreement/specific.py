"""Positive and negative (category-specific) agreement (Cicchetti & Feinstein 1990).

Any number of raters (Uebersax's form): the agreement on each category, with a jackknife SE
over items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import Ratings, as_ratings
from evalkit.stats._result import AgreementResult, CategoryAgreement
from evalkit.stats.agreement._common import Array, _jackknife_result, _replace, _warn_degenerate
from evalkit.stats.agreement._pairs import _ratings_or_table

__all__ = ["specific_agreement"]


def _positive_index(cats: tuple[Any, ...], positive: Any, from_table: bool) -> int:
    if positive is not None:
        if positive not in cats:
            raise EvalkitError(f"positive={positive!r} is not one of the categories {cats!r}")
        return cats.index(positive)
    if from_table:
        return 0  # table [[a, b], [c, d]]: a = both raters positive (Cicchetti & Feinstein)
    if tuple(cats) == (0, 1):
        return 1
    raise EvalkitError(
        f"specific_agreement: say which label is positive with positive=, categories are {cats!r}"
    )


def _specific_ratings(
    ratings: Any, table: Any, categories: Sequence[Any] | None
) -> tuple[Ratings, bool]:
    """The ratings behind ``ratings=`` or ``table=``, and whether they came from a table."""
    if table is not None:
        return _ratings_or_table("specific_agreement", ratings, table, categories)
    if ratings is None:
        raise EvalkitError("specific_agreement: give ratings= or table=")
    r = as_ratings(ratings, categories=categories)
    if categories is None and set(r.categories) <= {0, 1}:
        # binary 0/1 (or False/True) labels: both categories exist even if one is unused
        r = as_ratings(ratings, categories=(0, 1))
    return r, False


def specific_agreement(
    ratings: Any = None,
    *,
    table: Any = None,
    positive: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Positive and negative (category-specific) agreement (Cicchetti & Feinstein 1990).

    Two raters, 2 x 2 table ``[[a, b], [c, d]]``: ``PA = 2a / (2a + b + c)``,
    ``NA = 2d / (2d + b + c)``. In general (any raters, Uebersax's form) the specific agreement
    on category j is ``sum_i n_ij (n_ij - 1) / sum_i n_ij (r_i - 1)``. ``statistic`` is the
    agreement on the ``positive`` category (row/column 0 of a table; label 1/True for 0/1
    labels; otherwise say ``positive=``); ``.positive`` and ``.negative`` (binary data) are
    results of their own, ``per_category`` maps every category to its specific agreement.
    Standard errors: jackknife over items.
    """
    r, from_table = _specific_ratings(ratings, table, categories)
    counts_arr = r.counts()
    rr = counts_arr.sum(axis=1)
    use = rr >= 2
    c, rr = counts_arr[use], rr[use]
    if c.shape[0] == 0:
        raise EvalkitError("specific_agreement: no item has two or more ratings")
    rows, n_input = r.rows[use], r.n_rows_input
    cats = r.categories
    q = len(cats)
    suff = np.column_stack([c * (c - 1), c * (rr - 1)[:, None]])
    n = int(c.shape[0])

    def one(j: int, label: str) -> AgreementResult:
        def fn(sums: Array) -> Array:
            num, den = sums[..., j], sums[..., q + j]
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

        return _jackknife_result(
            suff,
            fn,
            rows,
            n_input,
            n=n,
            n_raters=r.n_raters,
            categories=cats,
            name=label,
            range=(0.0, 1.0),  # a proportion
        )

    per = {cat: one(j, f"specific agreement on {cat!r}") for j, cat in enumerate(cats)}
    per_cat = {
        cat: CategoryAgreement(res.statistic, res.standard_error) for cat, res in per.items()
    }
    jpos = _positive_index(cats, positive, from_table) if q == 2 or positive is not None else None
    if jpos is None:
        raise EvalkitError(
            "specific_agreement: with more than two categories say which is positive= "
            "(per_category has every category)"
        )
    pos = _replace(per[cats[jpos]], name="positive agreement")
    neg = _replace(per[cats[1 - jpos]], name="negative agreement") if q == 2 else None
    if pos.statistic is None:
        _warn_degenerate("positive agreement", "no rating in the positive category")
    return _replace(
        pos,
        name="specific agreement (positive)",
        positive=pos,
        negative=neg,
        per_category=per_cat,
        extra={
            "positive_agreement": pos.statistic,
            "negative_agreement": neg.statistic if neg is not None else None,
        },
    )
