r"""Escaping untrusted text where it becomes HTML, Markdown or a CSV cell: one helper per sink.

Anything that comes from a file a user supplied (session ids, evidence, gold-set names, label
targets, judge names, parameter values) is untrusted. It is escaped at the point where it is
placed into HTML (:func:`html_text`) or into Markdown that a notebook renders
(:func:`markdown_text`, :func:`markdown_code`); Markdown renderers pass raw HTML through, so the
Markdown helpers escape HTML too. Lone surrogates are written as ``\udXXX`` so that the page
can always be encoded. Text drawn into a figure is not HTML, but matplotlib reads ``$...$`` as
mathtext (a parse error fails the whole cell): :func:`plot_text` draws it literally. A CSV
cell a spreadsheet would run as a formula (text starting with ``= + - @``, a tab or a carriage
return, e.g. a session id ``=HYPERLINK(...)``) is written with a leading ``'``
(:func:`spreadsheet_cell`; :func:`csv_text` writes a whole table so): the text stays readable,
and a reader that strips the ``'`` gets it back.

Standard library only.
"""

from __future__ import annotations

import html
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence

from evalkit.files.input import escape_surrogates

__all__ = [
    "FORMULA_STARTS",
    "csv_text",
    "has_visible_character",
    "html_text",
    "markdown_code",
    "markdown_text",
    "plot_text",
    "spreadsheet_cell",
]

#: What a text cell may not start with, or a spreadsheet reads it as a formula (OWASP CSV
#: injection: ``=``, ``+``, ``-``, ``@``, tab, carriage return).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# CommonMark: any ASCII punctuation may be backslash-escaped; these are the ones that start or
# end Markdown constructs (emphasis, links, code, headings, lists, tables); < > & are left to
# html.escape, which turns them into entities (a backslash before them would show an entity).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def has_visible_character(text: str) -> bool:
    """Whether ``text`` shows anything on a page: a letter, digit, punctuation mark or symbol.

    Whitespace, zero-width and other format characters (U+200B, U+2060, U+FEFF, bidi marks),
    control characters and combining marks alone render as nothing, and so do the few letters
    and symbols drawn blank (:data:`_BLANK`: the Hangul fillers, the blank Braille pattern): a
    reason made of them is no reason.
    """
    return any(unicodedata.category(ch)[0] in "LNPS" and ch not in _BLANK for ch in text)


#: Letters and symbols (categories L, S) that render as blank space: the Hangul fillers
#: (Unicode's default-ignorable letters) and the blank Braille pattern.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def html_text(value: object) -> str:
    """``value`` as text safe inside HTML element content and quoted attribute values."""
    return html.escape(escape_surrogates(str(value)), quote=True)


def markdown_text(value: object) -> str:
    """``value`` as literal text inside Markdown (paragraphs, list items, table cells).

    Markdown punctuation is backslash-escaped, then ``& < > " '`` become HTML entities (raw
    HTML would otherwise pass through the renderer), and line breaks become spaces (a newline
    could end a table row or start a block).
    """
    text = escape_surrogates(str(value)).replace("\r", " ").replace("\n", " ")
    return html.escape(_MD_SPECIAL.sub(r"\\\1", text), quote=True)


def markdown_code(value: object) -> str:
    """``value`` as an inline Markdown code span that no content can close early.

    The fence is one backtick longer than the longest run of backticks inside (CommonMark
    6.1); code-span content is rendered literally (HTML-escaped) by the renderer. Line breaks
    become spaces.
    """
    text = escape_surrogates(str(value)).replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plot_text(value: object) -> str:
    """``value`` as literal text for a matplotlib label or title (no mathtext, one line)."""
    text = escape_surrogates(str(value)).replace("\r", " ").replace("\n", " ")
    return text.replace("$", r"\$")


def spreadsheet_cell(value: object) -> object:
    """``value`` as a CSV cell no spreadsheet runs as a formula.

    Text starting with one of :data:`FORMULA_STARTS` gets a leading ``'``; numbers and
    everything else are left as they are.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    r"""A CSV table (``\n`` line ends) with every cell through :func:`spreadsheet_cell`.

    The dialect is the ``csv`` module's default (``,``, ``"`` doubled inside a quoted cell,
    quoting only where needed), and a cell holding a carriage return or a line feed is quoted
    too (a bare ``\r`` starts a row in a spreadsheet). Lone surrogates are written as
    ``\udXXX``, so the text is always UTF-8. Written here rather than by ``csv.writer``
    (which copies a cell one character at a time) because a cell is searched and joined
    whole: a 20,000-session table is written about three times faster.
    """
    lines = [_csv_row(row) for row in itertools.chain([header], rows)]
    lines.append("")  # the last row ends with a line feed too
    return escape_surrogates("\n".join(lines))


_CSV_QUOTED = re.compile('[,"\r\n]')


def _csv_row(row: Sequence[object]) -> str:
    line = ",".join(map(_csv_cell, row))
    # csv.writer's one special case: a row of one empty cell is "" (not a blank line)
    return '""' if not line and len(row) else line


def _csv_cell(value: object) -> str:
    """One cell as ``csv.writer`` writes it (``str``, ``repr`` for a float), neutralized."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = "'" + value if value.startswith(FORMULA_STARTS) else str(value)
        if _CSV_QUOTED.search(text):
            return '"' + text.replace('"', '""') + '"'
        return text
    text = repr(value) if isinstance(value, float) else str(value)
    return '"' + text.replace('"', '""') + '"' if _CSV_QUOTED.search(text) else text
