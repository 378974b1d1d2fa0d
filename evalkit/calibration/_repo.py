"""The repository a calibration belongs to.

Standard library only: certificates are checked on every journal read, which must not load
pandas when there is nothing to check.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root"]

_PACKAGE_REPO = Path(__file__).resolve().parents[2]


def repo_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The repository a calibration belongs to: ``root``, else the checkout evalkit runs from.

    Never an environment variable: where certificates live, and which gold sets and lock they
    are checked against, is a parameter with the package's repository as its default.
    """
    return (Path(root) if root is not None else _PACKAGE_REPO).resolve()
