"""How a table reads on a study page: every cell as text, scrolling in its box, long ones folded.

:func:`frame_html` is the HTML of every ``DataFrame`` a study page shows (registered by
:func:`evalkit.analyses.configure_display`): a missing cell reads ``—`` (never ``NaN`` or
``None``), a float is rounded for reading (a whole one is a count), every cell is escaped by
pandas, and the table sits in a box that scrolls sideways rather than clipping a column. A
table longer than :data:`FOLD_AFTER` rows is folded under a one-line summary row
(``<details>``, no script): the frame's own (``df.attrs[SUMMARY]``, set where the frame is
made, or :func:`folded`) or its size. An explanation repeated down a column is said once, as a
note under the table.
The figures written to ``results.json`` never pass through here. The CSS is the page's
(:mod:`evalkit.studies.page`); see ``docs/EXPLORER.md`` ("How a study page ... read").
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.files.escape import html_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EMPTY",
    "FOLD_AFTER",
    "MISSING",
    "SUMMARY",
    "Folded",
    "cell_text",
    "folded",
    "frame_html",
    "register",
]

#: What a person reads in a table cell that holds no value.
MISSING = "—"
#: What an empty table reads as (its headings over no row would look broken).
EMPTY = "No row to show: the table is empty."
#: Tables with more rows than this are folded under their summary row.
FOLD_AFTER = 15
#: An explanation repeated in more rows of a column than this is said once, under the table.
REPEATS_INLINE = 3
_WORD = re.compile(r"[^\W\d_]{2,}")
#: The key of ``DataFrame.attrs`` that holds a frame's summary row (a sentence).
SUMMARY = "evalkit_summary"


def cell_text(x: Any) -> str | Any:
    """A cell as a person reads it: ``—`` for a missing value, a float rounded (``0.125``,
    ``3`` for a whole one), anything else unchanged."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return MISSING
    if isinstance(x, numbers.Real) and not isinstance(x, bool | numbers.Integral):
        v = float(x)
        if not math.isfinite(v):
            return MISSING if math.isnan(v) else ("∞" if v > 0 else "−∞")
        if v.is_integer():
            return str(int(v))
        return f"{v:.3f}".rstrip("0").rstrip(".")
    try:
        import pandas as pd

        if x is pd.NA or x is pd.NaT:
            return MISSING
    except ImportError:  # pragma: no cover - pandas is a core dependency
        pass
    return x


def _explains(x: Any) -> bool:
    """A cell that is an explanation (six words or more, five of them different), not a
    figure, a label or a list of labels ("pass, fail, pass, pass, fail, pass")."""
    words = _WORD.findall(x) if isinstance(x, str) else []
    return len(words) >= 6 and len({w.lower() for w in words}) >= 5


def _table(df: pd.DataFrame) -> str:
    shown = df.copy()
    notes: dict[str, str] = {}  # an explanation repeated down a column -> its note's name
    for col in shown.columns:
        cells = shown[col].astype(object).map(cell_text)
        counts = Counter(c for c in cells if _explains(c))
        for text in (t for t, n in counts.items() if n > REPEATS_INLINE):
            notes.setdefault(text, f"note {len(notes) + 1}")
        shown[col] = [notes.get(c, c) if isinstance(c, str) else c for c in cells]
    html = str(shown.to_html(na_rep=MISSING, escape=True, border=0, classes="dataframe"))
    if notes:
        items = "".join(f"<li>{name}: {html_text(text)}</li>" for text, name in notes.items())
        html += f'<ul class="evalkit-notes">{items}</ul>'
    return html


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def frame_html(df: pd.DataFrame, summary: str | None = None) -> str:
    """``df`` as a page table: scrolls in its box; folded under ``summary`` (default: the
    frame's ``attrs[SUMMARY]``, else its size) when it is longer than :data:`FOLD_AFTER` rows or
    has a summary."""
    if not len(df):  # headings over no row read as a broken table
        return f'<p class="evalkit-empty">{html_text(summary or EMPTY)}</p>'
    box = f'<div class="evalkit-table">{_table(df)}</div>'
    summary = summary or df.attrs.get(SUMMARY)
    if summary is None and len(df) <= FOLD_AFTER:
        return box
    size = f"{_plural(len(df), 'row')} × {_plural(len(df.columns), 'column')}"
    head = html_text(summary) if summary else "The table"
    return (
        f'<details class="evalkit-fold"><summary>{head} <span class="evalkit-size">({size}; '
        f"show)</span></summary>{box.replace('evalkit-table', 'evalkit-table tall', 1)}</details>"
    )


@dataclass(frozen=True)
class Folded:
    """A table shown folded under its own summary row (``display(folded(df, "..."))``)."""

    frame: pd.DataFrame
    summary: str

    def _repr_html_(self) -> str:
        return frame_html(self.frame, self.summary)

    def __repr__(self) -> str:
        return f"{self.summary} ({_plural(len(self.frame), 'row')})"


def folded(df: pd.DataFrame, summary: str) -> Folded:
    """``df`` folded under ``summary``, a sentence that says what the rows add up to."""
    return Folded(df, summary)


def register(shell: Any) -> None:
    """Make :func:`frame_html` the HTML form of every ``DataFrame`` ``shell`` displays."""
    import pandas as pd

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
