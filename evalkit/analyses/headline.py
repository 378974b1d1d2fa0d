"""A study's headline on the landing page: one sentence, one figure, the lines that qualify it.

Each study owns its headline: a ``headline(results) -> Headline`` beside its analysis reads the
study's own ``results.json`` (``threshold.headline``, ``calibration.headline``, ...), and
:mod:`evalkit.analyses.landing` only lays the headlines out. The helpers here turn a figure of
``results.json`` into text (never ``nan``, ``None`` or a raw float). See ``docs/EXPLORER.md``
("How a study page and the landing page read").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.display import fmt_estimate
from evalkit.finite import finite_float

__all__ = ["Headline", "estimate_text", "pct_ci"]


@dataclass(frozen=True)
class Headline:
    """A study's headline: ``text`` (a sentence with its n), ``figure`` (the one figure it
    leads with, shown large), ``details`` (one click away) and an optional ``advisory``."""

    text: str
    details: tuple[str, ...] = ()
    advisory: str | None = None
    figure: str | None = None


def pct_ci(rate: Any, low: Any, high: Any, n: Any) -> str:
    """``12.5% [4.0%, 30.1%]`` (with ``, n = ...`` when ``n`` is given) from raw JSON values."""
    return fmt_estimate(
        finite_float(rate), (finite_float(low), finite_float(high)), n, percent=True
    )


def estimate_text(e: Any, percent: bool = False) -> str:
    """An estimate of ``results.json`` (``statistic``, ``ci.low/high``, ``n``) as text."""
    e = e if isinstance(e, Mapping) else {}
    ci = e.get("ci") or {}
    return fmt_estimate(
        finite_float(e.get("statistic")),
        (finite_float(ci.get("low")), finite_float(ci.get("high"))),
        e.get("n"),
        percent=percent,
    )
