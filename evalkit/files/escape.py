r"""Escaping untrusted text where it becomes HTML or Markdown: the one helper every page uses.

Anything that comes from a file a user supplied (session ids, evidence, gold-set names, label
targets, judge names, parameter values) is untrusted. It is escaped at the point where it is
placed into HTML (:func:`html_text`) or into Markdown that a notebook renders
(:func:`markdown_text`, :func:`markdown_code`); Markdown renderers pass raw HTML through, so the
Markdown helpers escape HTML too. Lone surrogates are written as ``\udXXX`` so that the page
can always be encoded. Text drawn into a figure is not HTML, but matplotlib reads ``$...$`` as
mathtext (a parse error fails the whole cell): :func:`plot_text` draws it literally.

Standard library only.
"""

from __future__ import annotations

import html
import re

from evalkit.files.input import escape_surrogates

__all__ = ["html_text", "markdown_code", "markdown_text", "plot_text"]

# CommonMark: any ASCII punctuation may be backslash-escaped; these are the ones that start or
# end Markdown constructs (emphasis, links, code, headings, lists, tables); < > & are left to
# html.escape, which turns them into entities (a backslash before them would show an entity).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


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
