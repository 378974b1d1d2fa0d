"""How a result reads to a person: one-line reprs and the small HTML tables of JupyterLab.

A result class mixes in :class:`Readable` and says two things about itself: its headline
(``Cohen's kappa 0.50 [0.23, 0.77], n = 40``), which is its ``repr``, and the few rows a
notebook shows under it (``_repr_html_``). Numbers go through :func:`fmt_estimate` and
:func:`fmt_number`, so nothing a person reads is ``nan``, ``None`` or a raw float; every cell
is escaped by :func:`evalkit.files.escape.html_text`. The fields themselves stay on the object
(``result.statistic``, ``record.to_dict()``); a repr is for reading, never for parsing.
See ``docs/EXPLORER.md`` ("Results in a notebook").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.files.escape import html_text

__all__ = [
    "ROWS_SHOWN",
    "UNDEFINED",
    "Readable",
    "clip_text",
    "fmt_estimate",
    "fmt_number",
    "fmt_shares",
    "html_summary",
]

#: What a person reads where a number is undefined (never ``nan``, ``None`` or a blank).
UNDEFINED = "undefined"
#: Rows a notebook table shows before saying how many more there are.
ROWS_SHOWN = 50


def clip_text(text: str, width: int = 80) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis when longer."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def _finite(x: Any) -> bool:
    # numbers.Real: numpy's scalars too; a bool is no number here
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def fmt_number(x: Any, digits: int = 2, *, percent: bool = False) -> str:
    """``x`` rounded for reading (``0.50``, ``12.5%``, ``40``).

    ``undefined`` when it is not a finite number; an integer stays whole (a count is never
    ``40.00``).
    """
    if not _finite(x):
        return UNDEFINED
    if percent:
        return f"{100 * float(x):.1f}%"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return f"{float(x):.{digits}f}"


def fmt_estimate(
    value: float | None,
    ci: tuple[float | None, float | None] | None,
    n: int | None,
    *,
    digits: int = 3,
    percent: bool = False,
) -> str:
    """``0.324 [0.18, 0.47], n = 40``; ``n = 1, no CI`` for a single case; never ``nan``."""

    def f(x: float | None) -> str:
        if not _finite(x):
            return UNDEFINED
        assert x is not None
        return f"{100 * x:.1f}%" if percent else f"{x:.{digits}f}"

    if n is not None and n == 1:
        return f"{f(value)} (n = 1, no CI)"
    if not _finite(value):
        return f"undefined, n = {n}" if n is not None else UNDEFINED
    text = f(value)
    if ci is not None and ci[0] is not None and ci[1] is not None:
        text += f" [{f(ci[0])}, {f(ci[1])}]"
    else:
        text += " [CI undefined]"
    return text + (f", n = {n}" if n is not None else "")


def fmt_shares(
    shares: Mapping[Any, Any] | None,
    intervals: Mapping[Any, tuple[Any, Any]] | None = None,
    classes: Sequence[Any] | None = None,
) -> str:
    """``pass 62.0% [51.0%, 73.0%], fail 38.0% [27.0%, 49.0%]``; ``undefined`` without shares."""
    if shares is None:
        return UNDEFINED
    parts = []
    for c in classes if classes is not None else list(shares):
        text = f"{c} {fmt_number(shares.get(c), percent=True)}"
        ci = None if intervals is None else intervals.get(c)
        if ci is not None and ci[0] is not None and ci[1] is not None:
            text += f" [{fmt_number(ci[0], percent=True)}, {fmt_number(ci[1], percent=True)}]"
        parts.append(text)
    return ", ".join(parts)


def html_summary(headline: str, rows: Sequence[tuple[str, Any]] = ()) -> str:
    """The headline as a bold line and ``rows`` as a two-column table, every cell escaped.

    Values are shown as text: numbers through :func:`fmt_number`, booleans as yes/no, ``None``
    as ``undefined`` (a result's missing value is undefined, never a zero or a blank).
    """
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html_text(key)}</th>"
        f"<td style='text-align:left'>{html_text(_cell(value))}</td></tr>"
        for key, value in rows
    )
    table = f"<table>{cells}</table>" if cells else ""
    return f"<div><p><strong>{html_text(headline)}</strong></p>{table}</div>"


def _cell(value: Any) -> str:
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return fmt_number(value, 3)
    return str(value)


class Readable:
    """Mixin: ``repr`` is the headline, ``_repr_html_`` the headline and its rows.

    A dataclass that mixes it in is declared with ``repr=False`` (else the generated field
    dump would replace the headline). A reason or an error row (its key starts with "why" or
    is "error") is shown only when it has a value: absent, it is no reason, not "undefined".
    """

    __slots__ = ()

    def _headline(self) -> str:
        raise NotImplementedError

    def _rows(self) -> Sequence[tuple[str, Any]]:
        return ()

    def __repr__(self) -> str:
        """The headline, one line."""
        return self._headline()

    def _repr_html_(self) -> str:
        """The headline and its rows, for JupyterLab."""
        rows = [
            (k, v)
            for k, v in self._rows()
            if v is not None or not (k == "error" or k.startswith("why"))
        ]
        return html_summary(self._headline(), rows)
