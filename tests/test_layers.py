"""The layer contract (pyproject.toml, ``[tool.importlinter]``) holds, and it bites.

``lint-imports`` runs on the package as it is (kept), then on a temporary copy of the package
with one upward import injected into a low layer (broken, naming the import). A contract that
cannot fail would prove nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the ``evalkit`` package under ``root`` with ``root``'s contract."""
    if not LINT_IMPORTS.exists():
        pytest.fail(f"{LINT_IMPORTS} is missing: install the test extra (import-linter)")
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy shadows the installed package
    return subprocess.run(
        [str(LINT_IMPORTS), str(root / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT / "evalkit", root / "evalkit", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_package_keeps_its_layers(tmp_path: Path) -> None:
    out = _lint_imports(_copy(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 1 kept, 0 broken." in out.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    ledger = root / "evalkit" / "ledger" / "reader.py"
    source = ledger.read_text(encoding="utf-8")
    anchor = "from evalkit.errors import EvalkitError, SessionResolutionError\n"
    assert anchor in source
    # the ledger (a low layer) reaching up into the engine
    ledger.write_text(
        source.replace(anchor, anchor + "from evalkit.scoring import engine  # noqa: F401\n"),
        encoding="utf-8",
    )
    out = _lint_imports(root)
    assert out.returncode != 0
    assert "evalkit layers: a lower layer never imports a higher one BROKEN" in out.stdout
    assert "evalkit.ledger.reader -> evalkit.scoring.engine" in out.stdout
    assert "Contracts: 0 kept, 1 broken." in out.stdout
