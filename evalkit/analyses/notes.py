"""Sentences a study page shows where a figure, an interval or a plot has nothing to say.

A page never prints a raw warning, a traceback or a source path: a degenerate-data warning
becomes a sentence (:func:`sentence`, and :func:`show_warnings_as_sentences`, which
:func:`evalkit.analyses.configure_display` installs in a study's kernel), a plot with nothing
to draw becomes :func:`nothing_to_plot`, and a zero-width interval is said to be one
(:func:`degenerate_interval`). :class:`Note` displays as Markdown in a notebook.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Note",
    "degenerate_interval",
    "is_zero_width",
    "nothing_to_plot",
    "say",
    "sentence",
    "show_warnings_as_sentences",
]

# "threshold_study: every known count is 0" -> the function's name is not for the reader
_CALLER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*: ")
_PLAIN = ((" (NaN)", ""), ("NaN", "undefined"), (">=", "≥"), ("<=", "≤"))


@dataclass(frozen=True)
class Note:
    """A sentence (Markdown) a page shows in place of a figure; displays as Markdown."""

    text: str

    def _repr_markdown_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


def sentence(message: object) -> str:
    """A warning's message as a sentence: no caller's name, no ``NaN``, a full stop."""
    text = _CALLER.sub("", str(message).strip().splitlines()[0] if str(message).strip() else "")
    for old, new in _PLAIN:
        text = text.replace(old, new)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def nothing_to_plot(what: str, why: str) -> Note:
    """``what`` is not drawn, and why (instead of empty axes); both escaped for Markdown."""
    from evalkit.files.escape import markdown_text

    return Note(f"*Nothing to plot: {markdown_text(what)}.* {markdown_text(sentence(why))}")


def is_zero_width(low: float | None, high: float | None) -> bool:
    """An interval of one point (every bootstrap resample gave the same rate)."""
    return low is not None and high is not None and low == high


def degenerate_interval(k: int, n: int, low: float) -> str:
    """``0 of 10; the bootstrap cannot vary: every resample is 0.0%``."""
    return f"{k} of {n}; the bootstrap cannot vary: every resample is {100 * low:.1f}%"


def say(text: str) -> None:
    """Show ``text`` (Markdown) in the notebook; nothing at all when it is empty."""
    if text:
        from IPython.display import Markdown, display

        display(Markdown(text))


def show_warnings_as_sentences() -> None:
    """Route every warning of this process to the page as a Markdown sentence (kernel only).

    The source line, the warning's class and its file path never reach the page; a warning
    shown before IPython is importable falls back to the sentence on stderr.
    """

    def show(message: Any, category: Any, filename: Any, lineno: Any, *_: Any, **__: Any) -> None:
        text = f"*Note on the data:* {sentence(message)}"
        try:
            from IPython.display import Markdown, display
        except ImportError:  # pragma: no cover - the studies extra ships IPython
            import sys

            print(text, file=sys.stderr)
            return
        display(Markdown(text))

    warnings.showwarning = show
