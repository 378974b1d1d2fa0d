"""Frozen, content-hashed gold sets: load, hash, freeze."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.gold.sets import (
        LABELS,
        MANIFEST_NAME,
        VERSION_DIR,
        GoldSet,
        freeze,
        load,
        resolve,
        set_sha256,
        sha256_file,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "GoldSet": "evalkit.gold.sets",
    "LABELS": "evalkit.gold.sets",
    "MANIFEST_NAME": "evalkit.gold.sets",
    "VERSION_DIR": "evalkit.gold.sets",
    "freeze": "evalkit.gold.sets",
    "load": "evalkit.gold.sets",
    "resolve": "evalkit.gold.sets",
    "set_sha256": "evalkit.gold.sets",
    "sha256_file": "evalkit.gold.sets",
}

__all__ = [
    "LABELS",
    "MANIFEST_NAME",
    "VERSION_DIR",
    "GoldSet",
    "freeze",
    "load",
    "resolve",
    "set_sha256",
    "sha256_file",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
