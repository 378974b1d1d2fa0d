"""Rebuildable views of the journal: the one-record HTML report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.views.report import (
        render_report,
        write_report,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "render_report": "evalkit.views.report",
    "write_report": "evalkit.views.report",
}

__all__ = [
    "render_report",
    "write_report",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
