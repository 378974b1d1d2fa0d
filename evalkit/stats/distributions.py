"""The normal and Student t functions of the statistics, by scipy.special, without scipy.stats.

Inside ``scipy.stats`` (location 0, scale 1) ``norm.ppf(q)`` is ``ndtri(q) * 1.0 + 0.0``,
``norm.isf(q)`` is ``-ndtri(q) * 1.0 + 0.0``, ``norm.sf(x)`` is ``ndtr(-x)`` and ``t.sf(x, df)``
is ``stdtr(df, -x)``; these compute the same. ``scipy.special`` costs about half the import of
``scipy.stats`` (0.3 s of CPU against 0.7 s), which every command and study kernel that drew a
Wilson interval or tested a kappa paid for one number.
"""

from __future__ import annotations

from typing import Any

__all__ = ["normal_isf", "normal_ppf", "normal_sf", "t_sf"]


def normal_ppf(q: float) -> Any:
    """``scipy.stats.norm.ppf(q)`` for a probability ``q``: the quantile below which ``q`` lies."""
    from scipy.special import ndtri

    return ndtri(q) + 0.0  # + 0.0: a zero is +0.0, as norm.ppf's "+ loc" makes it


def normal_isf(q: float) -> Any:
    """``scipy.stats.norm.isf(q)`` for a probability ``q``: the quantile above which ``q`` lies."""
    from scipy.special import ndtri

    return 0.0 - ndtri(q)  # -x, and +0.0 for a zero, as norm.isf's "* scale + loc" makes it


def normal_sf(x: float) -> Any:
    """``scipy.stats.norm.sf(x)``: the probability above ``x``."""
    from scipy.special import ndtr

    return ndtr(-x)


def t_sf(x: float, df: float) -> Any:
    """``scipy.stats.t.sf(x, df)`` for ``df`` > 0: the probability above ``x``."""
    from scipy.special import stdtr

    return stdtr(df, -x)
