"""Finite numbers or None: the one rule for a number JSON cannot hold (NaN, +-Infinity).

JSON has no NaN and no Infinity, and a figure that is undefined is ``null``, never a guessed
number. Every summary, results file, CLI payload and prompt that writes numbers uses these
helpers; the JavaScript semantics a record needs (``JSON.stringify``'s integers, ``String(x)``)
are :mod:`evalkit.js.numbers`'s.

No third-party import: the judge, CLI and record layers import this without loading numpy.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

__all__ = ["finite_float", "finite_or_none", "json_figure"]


def finite_or_none(value: Any) -> Any:
    """``value`` itself, except a non-finite float (NaN, +-Infinity), which is None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def finite_float(value: Any) -> float | None:
    """A real number as a finite ``float``; None for NaN, +-Infinity, None and anything else.

    A bool is not a number here (``True`` is a flag, not 1.0).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _is_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    np = sys.modules.get("numpy")  # a numpy bool exists only once numpy is loaded
    return np is not None and isinstance(value, np.bool_)


def json_figure(value: Any) -> float | int | None:
    """A figure as a JSON number: an integer stays ``int``, any other real a finite float.

    Integers include numpy's and bools (written 0 or 1); NaN, +-Infinity, None and anything
    that is not a real number are None (:func:`finite_float`).
    """
    if _is_bool(value) or isinstance(value, numbers.Integral):
        return int(value)
    return finite_float(value)
