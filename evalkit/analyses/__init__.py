"""The logic of the study notebooks: each notebook only calls these functions and shows results.

Modules: ``replay`` (score a ledger under rubric-v1 and v2), ``threshold`` (a fact's distribution
and the counterfactual threshold table), ``agreement`` (inter-rater agreement), ``calibration``
(a judge against the frozen gold set), ``prevalence`` and ``prevalence_page`` (class shares of
a target: naive, corrected for the judge's errors, PPI++), ``fleet`` (fire rates across
repositories) with ``fleet_page``, ``replay_fleet`` and ``threshold_fleet`` (the replay and
threshold pages over a fleet), ``measurability`` (was a signal measured for a record, and why
not; the ledger's profile). ``write_results`` hands figures to the study runner.
"""

from __future__ import annotations

from evalkit.analyses._results import fmt_estimate, jsonable, write_results

__all__ = [
    "configure_display",
    "default_metrics_dir",
    "fmt_estimate",
    "jsonable",
    "show_parameters",
    "write_results",
]


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


# What an empty path parameter means in each study (the notebooks' declared defaults).
_EMPTY_MEANS = {
    "metrics_dir": "(default: the preset rubric-v2-2026-09-19, built in a temp dir)",
    "labels_path": "(default: simulated rater labels, see docs/DATA_CARD.md)",
    "gold_path": "(default: the committed gold set gold/instruction-adherence)",
    "metrics_dirs": "(none: one metrics directory, metrics_dir)",
}


def show_parameters(params: dict, empty_means: dict | None = None) -> object:
    """The run's parameters as a small table.

    An empty path says what the default is (``empty_means``: a study's own wording, by
    parameter); a given path shows its last two parts only, so the page does not carry machine
    paths and reruns from another directory diff cleanly.
    """
    from pathlib import PurePath

    import pandas as pd

    def tail(path: object) -> str:
        return "…/" + "/".join(PurePath(str(path)).parts[-2:])

    rows = []
    for k, v in params.items():
        text = str(v)
        if k.endswith("_dir") or k.endswith("_path"):
            if not v:
                text = {**_EMPTY_MEANS, **(empty_means or {})}.get(k, "(default)")
            else:
                text = f"(given path) {tail(v)}"
        elif k.endswith(("_dirs", "_paths")):  # several paths: a list, or one glob
            if not v:
                text = {**_EMPTY_MEANS, **(empty_means or {})}.get(k, "(none)")
            elif isinstance(v, list):
                text = f"(given: {len(v)} paths) " + ", ".join(tail(x) for x in v[:5])
                text += ", …" if len(v) > 5 else ""
            else:
                text = f"(given glob or list file) {tail(v)}"
        elif k == "scheduler":
            text = f"(Dask scheduler) {v}" if v else "(none: computed in the kernel, serially)"
        rows.append({"parameter": k, "value": text})
    return pd.DataFrame(rows).set_index("parameter")


def configure_display() -> None:
    """pandas display options for the study pages: no truncated cells, no elided rows."""
    import pandas as pd

    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
