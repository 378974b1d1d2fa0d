"""Repository-wide pytest setup: keep the name ``tests`` bound to this repository's tests.

ppi-python (a test-only dependency: the second implementation of PPI++ that tests/test_ppi.py
compares against) installs its own top-level package named ``tests`` into site-packages. A
regular package there wins over this repository's ``tests`` directory (a namespace package, no
``__init__.py``), so ``from tests.conftest import ...`` would import ppi_py's tests instead.
Binding ``tests`` to our directory before any test module is imported keeps both import
styles the suite uses (``from conftest import`` and ``from tests.conftest import``) working.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent / "tests")

if list(getattr(sys.modules.get("tests"), "__path__", [])) != [_TESTS]:
    _package = types.ModuleType("tests")
    _package.__path__ = [_TESTS]
    sys.modules["tests"] = _package
