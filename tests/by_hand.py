"""Execute a study notebook as a person does by hand: papermill, no runner, its outputs back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def execute_by_hand(
    name: str,
    out_dir: Path,
    *,
    cwd: Path,
    parameters: dict[str, Any] | None = None,
    timeout: int = 300,
) -> list[Any]:
    """Run ``notebooks/<name>.ipynb`` with papermill into ``out_dir``; every code output, in
    order (the caller clears the runner's environment first)."""
    import nbformat  # deferred: seconds to import (jsonschema)
    import papermill as pm

    out = out_dir / f"{name}.ipynb"
    pm.execute_notebook(
        str(NOTEBOOKS / f"{name}.ipynb"),
        str(out),
        parameters=parameters,
        kernel_name="python3",
        language="python",
        cwd=str(cwd),
        progress_bar=False,
        execution_timeout=timeout,
    )
    nb = nbformat.read(str(out), as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
