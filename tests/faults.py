"""Faults injected into ``os`` calls on one file only (for the journal's all-or-nothing tests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def only_for(path: Path, fake: Any, real: Any) -> Any:
    """``fake`` for descriptors open on ``path``, ``real`` for every other descriptor."""
    inode = path.stat().st_ino

    def call(fd: int, *args: Any) -> Any:
        try:
            mine = os.fstat(fd).st_ino == inode
        except OSError:
            mine = False
        return fake(fd, *args) if mine else real(fd, *args)

    return call
