"""Shared test fixtures.

The conformance vectors live outside the repository, in ``../shared`` (CI lays it there too).
Elsewhere a missing ``../shared`` skips the tests that need it, saying why; with ``CI=true`` it
fails the run, because a conformance suite that silently did not run proves nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("EVALKIT_SHARED", REPO_ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() == "true"


def require_shared(*parts: str) -> Path:
    """Return ``SHARED_DIR/parts``; fail under CI, skip elsewhere, when it is missing."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        message = f"{path} is missing (the conformance vectors live in ../shared)"
        if IN_CI:
            pytest.fail(message + "; CI=true, so this is a failure, not a skip")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return require_shared()


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    return require_shared("conformance")
