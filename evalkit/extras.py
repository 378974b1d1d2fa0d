"""Optional dependencies: which extra provides which module, and the guard that says so.

The core (numpy, pandas, scipy, statsmodels, tqdm) scores sessions, writes and verifies
records, computes facts and statistics and calibrates judges. Everything else sits at an edge
and is imported only where it is used, after :func:`require`, so a missing extra is a
:class:`MissingExtraError` (an ``EvalkitError``: exit 1 on the command line) that names what to
install, never an ``ImportError`` traceback.

:data:`EXTRAS` mirrors ``[project.optional-dependencies]`` of ``pyproject.toml`` (a test keeps
them equal): a new extra is one entry there, one here, and ``require`` at its imports.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from evalkit.errors import EvalkitError

__all__ = ["EXTRAS", "MissingExtraError", "extra_of", "install_hint", "require"]

#: extra -> {importable top-level module: the distribution that provides it}
EXTRAS: Mapping[str, Mapping[str, str]] = {
    "studies": {
        "papermill": "papermill",
        "nbconvert": "nbconvert",
        "nbformat": "nbformat",
        "ipykernel": "ipykernel",
        "matplotlib": "matplotlib",
        "yaml": "pyyaml",
    },
    "lab": {"jupyterlab": "jupyterlab"},
    "parquet": {"pyarrow": "pyarrow"},
    "judges": {"openai": "openai", "anthropic": "anthropic"},
    # pyarrow too: each directory's table travels as an Arrow stream (``parquet`` also has it)
    "fleet": {
        "dask": "dask",
        "distributed": "distributed",
        "cryptography": "cryptography",
        "pyarrow": "pyarrow",
    },
    "fast": {"orjson": "orjson"},
}


class MissingExtraError(EvalkitError, ImportError):
    """An optional package is not installed; the message names the extra that provides it.

    Also an ``ImportError``: code that guards an optional import catches it as one.
    """


def extra_of(module: str) -> str:
    """The extra that provides ``module`` (a dotted name; its top-level package decides).

    Raises
    ------
    KeyError
        When no extra provides it: a core module is never guarded.
    """
    top = module.partition(".")[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return extra
    raise KeyError(f"no extra provides {top!r}")


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'evalkit[<extra>]'``."""
    return f"pip install 'evalkit[{extra}]'"


def require(*modules: str, purpose: str, extra: str | None = None) -> None:
    """Raise :class:`MissingExtraError` naming the extra to install unless ``modules`` are there.

    ``purpose`` says what needs them (``"--format parquet"``, ``"the plots"``). Call it right
    before the real, typed import. Only the top-level package is looked up (found, not
    imported: cheap, and no side effects such as a kernel package's start-up). ``extra``
    names the extra to install where a module is in several (pyarrow: ``parquet`` and
    ``fleet``); by default, the first that provides it.
    """
    for module in modules:
        name = extra or extra_of(module)
        if module.partition(".")[0] not in EXTRAS[name]:
            raise KeyError(f"the {name!r} extra does not provide {module!r}")
        top = module.partition(".")[0]
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MissingExtraError(
                f"{purpose} needs {top}, which is not installed; install the {name!r} extra: "
                f"{install_hint(name)}"
            )
