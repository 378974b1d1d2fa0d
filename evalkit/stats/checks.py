"""The argument checks every statistic applies, for code that checks before it computes.

A caller that runs its own resampling over the statistics (a fleet's cluster bootstrap, a
page's class order) validates its arguments with the same rules and messages as the
statistics themselves: the level of an interval, a number of resamples, the order of classes.
"""

from __future__ import annotations

from evalkit.stats._inputs import check_level, check_resamples
from evalkit.stats._labels import order_classes

__all__ = ["check_level", "check_resamples", "order_classes"]
