"""Rebuildable views of the journal: the one-record HTML report and the offline explorer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.views.explorer import (
        build_explorer,
        render_explorer,
        write_explorer,
    )
    from evalkit.views.explorer_data import (
        ExplorerSource,
        explorer_payload,
    )
    from evalkit.views.report import (
        render_report,
        write_report,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "build_explorer": "evalkit.views.explorer",
    "render_explorer": "evalkit.views.explorer",
    "write_explorer": "evalkit.views.explorer",
    "ExplorerSource": "evalkit.views.explorer_data",
    "explorer_payload": "evalkit.views.explorer_data",
    "render_report": "evalkit.views.report",
    "write_report": "evalkit.views.report",
}

__all__ = [
    "ExplorerSource",
    "build_explorer",
    "explorer_payload",
    "render_explorer",
    "render_report",
    "write_explorer",
    "write_report",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
