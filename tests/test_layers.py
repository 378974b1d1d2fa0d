"""The import contracts (pyproject.toml, ``[tool.importlinter]``) hold, and they bite.

``lint-imports`` runs on the package as it is (kept), then on a temporary copy of the package
with one upward import injected into a low layer, or one package reaching into another's
private module (broken, naming the import). A contract that cannot fail would prove nothing.
Every private module of the tree is covered by a contract, so a new one cannot slip past.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
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
    assert f"Contracts: {len(_contracts())} kept, 0 broken." in out.stdout


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
    assert f"Contracts: {len(_contracts()) - 1} kept, 1 broken." in out.stdout


def _contracts() -> list[dict[str, object]]:
    with open(REPO_ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]["contracts"]


def _top_level() -> set[str]:
    package = REPO_ROOT / "evalkit"
    names = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    names |= {p.parent.name for p in package.glob("*/__init__.py")}
    return names


def test_every_private_module_is_forbidden_to_every_other_package() -> None:
    forbidden: dict[str, set[str]] = {}
    for contract in _contracts():
        if contract["type"] == "forbidden":
            sources = {str(m).removeprefix("evalkit.") for m in contract["source_modules"]}  # type: ignore[attr-defined]
            for module in contract["forbidden_modules"]:  # type: ignore[attr-defined]
                forbidden[str(module)] = sources
    tops = _top_level()
    for path in sorted((REPO_ROOT / "evalkit").glob("*/**/_*.py")):
        if path.name.startswith("__"):
            continue
        rel = path.relative_to(REPO_ROOT).with_suffix("")
        module, owner = ".".join(rel.parts), rel.parts[1]
        assert module in forbidden, f"{module}: no forbidden contract keeps it in evalkit.{owner}"
        assert forbidden[module] == tops - {owner}, module


def test_a_private_import_across_packages_breaks_the_contract(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    module = root / "evalkit" / "analyses" / "replay.py"
    source = module.read_text(encoding="utf-8")
    anchor = "from __future__ import annotations\n"
    assert anchor in source
    module.write_text(
        source.replace(anchor, anchor + "from evalkit.stats import _inputs  # noqa: F401\n", 1),
        encoding="utf-8",
    )
    out = _lint_imports(root)
    assert out.returncode != 0
    assert "private modules of evalkit.stats stay in it BROKEN" in out.stdout
    assert "evalkit.analyses.replay -> evalkit.stats._inputs" in out.stdout
