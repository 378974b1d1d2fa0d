"""Figures a study hands to the runner; estimates with their CI are formatted by :mod:`evalkit.display`."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.display import fmt_estimate  # one home; re-exported for the pages
from evalkit.studies.run import RESULTS_ENV  # set by run_study; names the figures file

__all__ = ["fmt_estimate", "jsonable", "write_results"]


def jsonable(obj: Any) -> Any:
    """Plain JSON values: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        np = None  # type: ignore[assignment]
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [jsonable(v) for v in obj]
    if np is not None and isinstance(obj, np.generic):
        obj = obj.item()
    if np is not None and isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if callable(getattr(obj, "to_json_dict", None)):  # e.g. a ThresholdStudy with its context
        return jsonable(obj.to_json_dict())
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        try:
            return jsonable(obj.to_dict(orient="records"))
        except TypeError:
            return jsonable(obj.to_dict())
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return str(obj)


def write_results(figures: Mapping[str, Any], path: str | Path | None = None) -> dict[str, Any]:
    """Record a study's machine-readable figures; returns them as plain JSON values.

    Under ``evalkit study run`` the runner names the file (environment variable
    ``EVALKIT_STUDY_RESULTS``) and merges it into ``results.json``. Run interactively (JupyterLab)
    nothing is written unless ``path`` is given. Repeated calls merge keys.
    """
    data = jsonable(dict(figures))
    target = path or os.environ.get(RESULTS_ENV)
    if target:
        p = Path(target)
        existing: dict[str, Any] = {}
        if p.is_file():
            existing = json.loads(p.read_text(encoding="utf-8"))
        existing.update(data)
        p.write_text(json.dumps(existing, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return data
