"""A study notebook run by hand checks itself against the pre-registration lock.

``evalkit study run`` checks a run before any kernel starts and opens the page with its
statement (:mod:`evalkit.studies.run`). A notebook executed by hand (papermill, JupyterLab) has
no runner: its first cell after the parameters (tagged :data:`CELL_TAG`) shows
:func:`statement`, the same check (:func:`evalkit.studies.lock.check_study`) on the values the
kernel holds, as the same Markdown banner: pre-registered, or a deviation naming each
parameter with its locked and its value (and no reason: only ``--deviation`` gives one). A lock
it cannot check is said so, never passed over. Under the runner that cell's output is dropped
after the run: the runner's own banner, from the same check, already opens the page.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.escape import markdown_text
from evalkit.files.input import escape_surrogates
from evalkit.prereg.study_params import (
    canonical_json,
    notebook_parameters,
    parameters_cell,
    read_notebook,
)
from evalkit.provenance.repository import REPO_ROOT
from evalkit.studies.lock import check_study

__all__ = ["CELL_TAG", "statement"]

#: The tag of the notebook cell that shows :func:`statement` (the runner drops its output).
CELL_TAG = "preregistration-check"
# an absolute path in an error, shown by its last part only: a page carries no machine path
_ABSOLUTE = re.compile(r"(?<![\w.])/(?:[^\s'\"/]+/)+([^\s'\"/]+)")


def _value(value: Any, declared_type: str) -> Any:
    # the runner converts an int given for a float parameter; a kernel holds what it was given
    is_int = isinstance(value, int) and not isinstance(value, bool)
    return float(value) if declared_type == "float" and is_int else value


def statement(name: str, namespace: Mapping[str, Any]) -> str:
    """The pre-registration banner of study ``name`` run with the kernel's values (Markdown).

    ``namespace`` is the kernel's ``globals()``; a lock that cannot be checked says why.
    """
    from evalkit.studies.run import notebook_path

    try:
        path = notebook_path(name)
        source = parameters_cell(read_notebook(path), path)
        declared = notebook_parameters(path)
        merged = {key: _value(namespace.get(key, p.default), p.type) for key, p in declared.items()}
        given = {
            key
            for key, p in declared.items()
            if canonical_json(merged[key]) != canonical_json(p.default)
        }
        status = check_study(
            name,
            declared,
            merged,
            given,
            hashlib.sha256(source.encode("utf-8")).hexdigest(),
            by_hand=True,
        )
    except (EvalkitError, OSError, ValueError) as exc:
        why = _ABSOLUTE.sub(r"…/\1", escape_surrogates(str(exc)).replace(f"{REPO_ROOT}/", ""))
        return (
            f"> **Not checked against the pre-registration:** {markdown_text(why)}. Every "
            "figure on this page is exploratory."
        )
    return status.banner()
