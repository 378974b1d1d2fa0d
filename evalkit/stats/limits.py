"""The default limits of a fire-rate check, as constants that import nothing heavy.

The ceiling above which a signal is a broken instrument (HR-101), the floor below which it is
quiet (HR-105) and the session count an anytime-valid band is tightest around. They live here,
apart from the estimators that use them (:mod:`evalkit.stats.thresholds`,
:mod:`evalkit.stats.sequential`, :mod:`evalkit.analyses.monitor`), so a command line can show
them in its ``--help`` and refuse a bad path without importing numpy (tests/test_fast_failures.py).
See ``docs/MONITOR.md`` and ``docs/STATISTICS.md``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_FLOOR", "DEFAULT_OPTIMIZE_AT", "FIRE_RATE_CEILING"]

#: The largest share of items a signal may fire on before it is a broken instrument (rubric
#: rule HR-101: "~10%"); the default ceiling of every threshold and dead-instrument check.
FIRE_RATE_CEILING: float = 0.10

#: The rate under which a check is ``quiet`` (HR-105's dead-or-silent, as far as data can say
#: it). A stated default, not a rubric's number: the rubrics set a ceiling (~10%) only.
DEFAULT_FLOOR: Final = 0.01

#: The number of outcomes the band is tightest around (Howard et al.'s ``t_opt``): the
#: geometric middle of the tens to thousands of sessions rubric work sees. docs/MONITOR.md
#: tabulates the width against Wilson from 20 to 3,000 outcomes for this and other choices.
DEFAULT_OPTIMIZE_AT = 100.0
