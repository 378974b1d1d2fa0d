"""The lazily loaded public API is the declared one, and typed.

For ``evalkit``, ``evalkit.stats`` and ``evalkit.calibration``: ``__all__`` is exactly the lazy
table's names plus the names bound at import; the ``if TYPE_CHECKING:`` imports name the same
objects from the same modules as the lazy table (so mypy sees each name's real type, never
``Any``); every lazy name resolves to the object its module defines.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

PACKAGES = (
    "evalkit",
    "evalkit.stats",
    "evalkit.calibration",
    *(f"evalkit.{p}" for p in ("js", "files", "provenance", "record", "ledger", "scoring")),
    *(f"evalkit.{p}" for p in ("journal", "verify", "prereg", "gold", "fleet", "studies", "views")),
)
# bound at import for the loader's own use, not part of the API
PLUMBING = {"annotations", "TYPE_CHECKING", "lazy_attributes", "__getattr__", "__dir__"}


def _source(package: str) -> ast.Module:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    return ast.parse(Path(module.__file__).read_text(encoding="utf-8"))


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"


def _typed_imports(tree: ast.Module) -> dict[str, str]:
    """name -> module of every ``from M import name`` under ``if TYPE_CHECKING:``."""
    out: dict[str, str] = {}
    for node in tree.body:
        if _is_type_checking(node):
            assert isinstance(node, ast.If)
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module is not None
                for alias in imp.names:
                    out[alias.asname or alias.name] = imp.module
    return out


def _bound_at_import(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
    return names - {"_LAZY", "__all__"} - PLUMBING


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_the_lazy_table_plus_the_eager_names(package: str) -> None:
    module = importlib.import_module(package)
    eager = _bound_at_import(_source(package))
    assert set(module.__all__) == set(module._LAZY) | eager
    assert len(module.__all__) == len(set(module.__all__))
    assert not set(module._LAZY) & eager


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checking_imports_match_the_lazy_table(package: str) -> None:
    module = importlib.import_module(package)
    assert _typed_imports(_source(package)) == module._LAZY


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_name_resolves_to_its_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    for name, where in module._LAZY.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), name), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = module.no_such_name


def test_mypy_sees_every_public_name_typed(tmp_path: Path) -> None:
    # An `Any` is assignable to `None`; a typed function, class or constant is not. So every
    # lazy name whose type mypy knows gives one assignment error, on its own line.
    from mypy import api

    lines: list[str] = []
    names: dict[int, str] = {}  # line number -> public name assigned there
    for package in PACKAGES:
        module: ModuleType = importlib.import_module(package)
        lines.append(f"import {package}")
        for name in module._LAZY:
            lines.append(f"_{len(lines)}: None = {package}.{name}")
            names[len(lines)] = f"{package}.{name}"
    snippet = tmp_path / "uses_public_api.py"
    snippet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    repo = Path(__file__).resolve().parents[1]
    # the options of `make test`'s own mypy run, so its cache serves (another follow-imports
    # setting re-checks every module: 16 s instead of 1)
    stdout, stderr, _ = api.run(
        [
            str(snippet),
            "--config-file",
            str(repo / "pyproject.toml"),
            "--python-executable",
            sys.executable,
            "--no-error-summary",
            "--cache-dir",
            str(repo / ".mypy_cache"),
        ]
    )
    flagged = {int(m.group(1)) for m in re.finditer(rf"{snippet.name}:(\d+): error:", stdout)}
    assert len(names) > 40
    assert [names[n] for n in sorted(names) if n not in flagged] == [], stdout + stderr
