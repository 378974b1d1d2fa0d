"""The repository evalkit runs from: the one place its root is computed.

The checkout holds what evalkit's claims are checked against: the pre-registration lock,
``gold/``, ``calibrations/``, ``rubrics/``, ``notebooks/`` and ``docs/``. A module that needs one
of them asks :func:`repo_root` (or takes a ``root`` parameter defaulting to it) and never
derives it from its own ``__file__``, so moving a module cannot point it at another folder.
Never an environment variable: where the claims are checked is content of the checkout
(docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PACKAGE_DIR", "REPO_ROOT", "repo_root"]

#: The ``evalkit`` package folder (its packaged data: ``data/``, ``rubrics_text/``).
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: The checkout that holds the package.
REPO_ROOT = PACKAGE_DIR.parent


def repo_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``root`` resolved, else the checkout evalkit runs from."""
    return (Path(root) if root is not None else REPO_ROOT).resolve()
