"""The logic of the study notebooks: each notebook only calls these functions and shows results.

Modules: ``replay`` (score a ledger under rubric-v1 and v2), ``threshold`` (a fact's distribution
and the counterfactual threshold table), ``agreement`` (inter-rater agreement), ``calibration``
(a judge against the frozen gold set). ``write_results`` hands figures to the study runner.
"""

from __future__ import annotations

from evalkit.analyses._results import fmt_estimate, jsonable, write_results

__all__ = ["default_metrics_dir", "fmt_estimate", "jsonable", "show_parameters", "write_results"]


def default_metrics_dir(metrics_dir: str = "") -> str:
    """``metrics_dir`` itself, or (when empty) the preset built once into a temp directory."""
    import tempfile
    from pathlib import Path

    if metrics_dir:
        if not Path(metrics_dir).is_dir():
            from evalkit.errors import EvalkitError

            raise EvalkitError(f"metrics_dir {metrics_dir!r} is not a directory")
        return metrics_dir
    import atexit
    import shutil

    from evalkit.simulate import build_preset

    tmp = tempfile.mkdtemp(prefix="evalkit-preset-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # removed when the kernel exits
    target = Path(tmp) / "metrics"
    build_preset(target)
    return str(target)


def show_parameters(params: dict) -> object:
    """The run's parameters as a small table (paths shortened, so the page diffs cleanly)."""
    import pandas as pd

    rows = []
    for k, v in params.items():
        text = str(v)
        if k.endswith("_dir") or k.endswith("_path"):
            text = "(default data, built in a temp dir)" if not v else "(given path)"
        rows.append({"parameter": k, "value": text})
    return pd.DataFrame(rows).set_index("parameter")
