"""Run studies: parameterized notebooks executed by papermill, rendered to offline HTML.

A study is a notebook ``notebooks/<name>.ipynb`` with exactly one cell tagged ``parameters``
(``name: type = default  # help`` lines, JSON defaults; see :mod:`evalkit.prereg.study_params`).
Before a kernel starts, ``run_study`` validates the caller's parameters against those
declarations (every value a JSON value, checked all the way down) and checks the run against
the pre-registration lock (:mod:`evalkit.studies.lock`: a changed frozen input or a changed design
parameter refuses the run unless it is a stated deviation; no lock refuses unless ``no_lock``).
It then writes the values into the notebook as Python literals it has proven to read back as
the same values (papermill's own parameter translation is never used), executes the notebook
with papermill, renders HTML with nbconvert (code hidden by cell tags, an offline template with no
CDN or other network reference, images embedded, execution metadata stripped and cell ids made
deterministic so reruns diff cleanly) and writes ``results.json`` beside it: the runner's fields
(parameters, the pre-registration status, the sha256 of every data input) merged with the
figures the notebook wrote through :func:`evalkit.analyses.write_results`. The page opens with
the pre-registration status (a deviation and its reason, an amendment, or "not pre-registered").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import metadata
from pathlib import Path
from typing import Any

from evalkit.display import Readable
from evalkit.errors import EvalkitError
from evalkit.extras import require
from evalkit.files.escape import markdown_text
from evalkit.files.input import parse_json
from evalkit.prereg.study_params import (
    Parameter,
    injected_source,
    json_value,
    notebook_parameters,
    parameters_cell,
    read_notebook,
    type_ok,
)
from evalkit.provenance.git import head_commit, is_dirty
from evalkit.provenance.lockfile import environment_mismatches, lock_sha256
from evalkit.provenance.repository import REPO_ROOT
from evalkit.studies.lock import check_study, input_hashes
from evalkit.studies.page import render_html, stable_notebook

__all__ = [
    "RESULTS_ENV",
    "STUDIES",
    "Parameter",
    "StudyRun",
    "StudyStatus",
    "coerce_cli_value",
    "declared_parameters",
    "list_studies",
    "notebook_path",
    "render_html",
    "run_study",
]

STUDIES: tuple[str, ...] = (
    "rubric-replay",
    "threshold-study",
    "agreement-study",
    "judge-calibration",
    "prevalence-study",
    "monitor",
)
# The notebook reads this variable to know where to write its figures (see analyses.write_results).
RESULTS_ENV = "EVALKIT_STUDY_RESULTS"
#: Set to "1" for the kernel of a run with ``no_lock`` ("0" otherwise, whatever the caller's
#: environment says): a study that calibrates then runs its calibrations without a lock too,
#: as its page states (never mintable). It can only take trust away, never add it.
NO_LOCK_ENV = "EVALKIT_STUDY_NO_LOCK"
_RUNNER_KEYS = (
    "study",
    "status",
    "parameters",
    "error",
    "figure_keys",
    "versions",
    "git_commit",
    "git_dirty",
    "notebook_sha256",
    "lock_sha256",
    "lock_mismatches",
    "preregistration",
    "deviation",
    "inputs",
)
# what executing and rendering a study imports (the notebooks themselves import matplotlib)
_KERNEL_STACK = ("papermill", "nbconvert", "nbformat", "ipykernel", "matplotlib")
_VERSIONED = (
    "evalkit",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "matplotlib",
    "papermill",
    "nbconvert",
    "nbformat",
    "ipykernel",
)


class StudyStatus(StrEnum):
    """Outcome of a study run."""

    OK = "ok"
    FAILED = "failed"


@dataclass(frozen=True, repr=False)
class StudyRun(Readable):
    """What one run produced. ``results`` is the content of ``results.json``."""

    study: str
    status: StudyStatus
    out_dir: Path
    html: Path
    results_path: Path
    results: dict[str, Any] = field(repr=False)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is StudyStatus.OK

    @property
    def exit_code(self) -> int:
        """0 when the study ran clean, 1 when a cell failed or timed out."""
        return 0 if self.ok else 1

    @property
    def html_path(self) -> Path:
        return self.html

    def _preregistration(self) -> str:
        prereg = self.results.get("preregistration") or {}
        status = prereg.get("status") if isinstance(prereg, dict) else None
        deviation = self.results.get("deviation")
        return f"{status}: {deviation}" if deviation else str(status or "not recorded")

    def _headline(self) -> str:
        failed = f" ({self.error})" if self.error else ""
        return f"study {self.study}: {self.status.value}{failed} -> {self.html}"

    def _rows(self) -> list[tuple[str, Any]]:
        figures = self.results.get("figure_keys") or []
        return [
            ("status", self.status.value),
            ("error", self.error),
            ("page", str(self.html)),
            ("results", str(self.results_path)),
            ("pre-registration", self._preregistration()),
            ("figures", ", ".join(str(k) for k in figures) or "none"),
        ]


# --------------------------------------------------------------------------------------------
# registry and parameters


def _notebook_dir() -> Path:
    return Path(os.environ.get("EVALKIT_NOTEBOOKS", REPO_ROOT / "notebooks"))


def notebook_path(name: str) -> Path:
    """Path of the study notebook ``name``; a clear error for an unknown name.

    ``name`` is a registered study, or the path of an ``.ipynb`` file (an ad-hoc study run
    the same way; its name is the file's stem).
    """
    if str(name).endswith(".ipynb"):
        path = Path(name)
        if not path.is_file():
            raise EvalkitError(f"notebook {path} does not exist")
        return path
    if name not in STUDIES:
        raise EvalkitError(f"unknown study {name!r}; known studies: {', '.join(STUDIES)}")
    path = _notebook_dir() / f"{name}.ipynb"
    if not path.is_file():
        raise EvalkitError(f"study {name!r}: notebook {path} is missing")
    return path


def list_studies() -> list[dict[str, Any]]:
    """Name, notebook path and title (first markdown heading) of every registered study."""
    out = []
    for name in STUDIES:
        path = _notebook_dir() / f"{name}.ipynb"
        title = name
        if path.is_file():
            nb = read_notebook(path)
            for cell in nb.get("cells", []):
                if cell.get("cell_type") == "markdown":
                    first = "".join(cell.get("source", "")).strip().splitlines()[:1]
                    if first:
                        title = first[0].lstrip("# ").strip()
                    break
        out.append({"name": name, "notebook": str(path), "exists": path.is_file(), "title": title})
    return out


def declared_parameters(name: str) -> dict[str, Parameter]:
    """The parameters the study's ``parameters`` cell declares, in order.

    Each declaration is an annotated assignment ``name: type = literal`` with an optional
    trailing ``# help`` comment; the literal must be a JSON value of the declared type.
    """
    return notebook_parameters(notebook_path(name))


def _describe(params: Mapping[str, Parameter]) -> str:
    return ", ".join(f"{p.name} ({p.type})" for p in params.values()) or "(none)"


def _validate(
    name: str, params: Mapping[str, Any] | None, declared: Mapping[str, Parameter]
) -> dict[str, Any]:
    merged = {p.name: p.default for p in declared.values()}
    for key, raw in (params or {}).items():
        if key not in declared:
            raise EvalkitError(
                f"study {name!r}: unknown parameter {key!r}; accepted: {_describe(declared)}"
            )
        value = json_value(raw, f"study {name!r}: parameter {key}")
        want = declared[key].type
        if not type_ok(value, want):
            raise EvalkitError(
                f"study {name!r}: parameter {key!r} expects {want}, got "
                f"{type(value).__name__} {value!r}; accepted: {_describe(declared)}"
            )
        merged[key] = float(value) if want == "float" else value
    return merged


def coerce_cli_value(name: str, key: str, raw: str) -> Any:
    """Turn a command-line string into the declared type of ``key`` (clear error otherwise).

    A list or dict is read as strict JSON (no NaN/Infinity) and checked all the way down; a
    ``list | str`` parameter is a JSON list when the text starts with ``[`` and parses as
    one, otherwise the text itself (a path or a glob such as ``repos/*/metrics``).
    """
    declared = declared_parameters(name)
    if key not in declared:
        raise EvalkitError(
            f"study {name!r}: unknown parameter {key!r}; accepted: {_describe(declared)}"
        )
    want = declared[key].type
    try:
        if want == "str":
            return raw
        if want == "int":
            return int(raw)
        if want == "float":
            return json_value(float(raw), key)
        if want == "bool":
            low = raw.strip().lower()
            if low in ("true", "1", "yes"):
                return True
            if low in ("false", "0", "no"):
                return False
            raise ValueError(raw)
        if want == "list | str":
            return _list_or_text(raw, key)
        value = json_value(parse_json(raw), key)
        if not type_ok(value, want):
            raise ValueError(raw)
        return value
    except ValueError as exc:
        why = f" ({exc})" if isinstance(exc, EvalkitError) else ""
        raise EvalkitError(
            f"study {name!r}: parameter {key!r} expects {want}, got {raw!r}{why}; "
            f"accepted: {_describe(declared)}"
        ) from None


def _list_or_text(raw: str, key: str) -> list[Any] | str:
    """A JSON list if ``raw`` is one, else ``raw`` (a glob such as ``[ab]*/m`` stays text)."""
    if raw.lstrip().startswith("["):
        try:
            value = parse_json(raw)
        except EvalkitError:
            return raw
        if isinstance(value, list):
            return list(json_value(value, key))
    return raw


# --------------------------------------------------------------------------------------------
# provenance


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for pkg in _VERSIONED:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _git_commit() -> str | None:
    return head_commit(REPO_ROOT)


def _git_dirty() -> bool | None:
    """True when tracked files differ from the commit (the commit alone does not name the code)."""
    return is_dirty(REPO_ROOT)


@contextlib.contextmanager
def _env(key: str, value: str) -> Iterator[None]:
    old = os.environ.get(key)
    os.environ[key] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str, allow_nan=False))


# --------------------------------------------------------------------------------------------
# running


def run_study(
    name: str,
    params: Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    timeout: int = 600,
    *,
    progress: Callable[[str], None] | None = None,
    deviation: str | None = None,
    no_lock: bool = False,
    lock: str | os.PathLike[str] | None = None,
) -> StudyRun:
    """Execute study ``name`` and write ``index.html`` + ``results.json`` into ``out_dir``.

    Before any kernel starts: parameters are validated against the notebook's declarations
    (unknown name, wrong type or a value that is not JSON: :class:`EvalkitError` naming it), and
    the run is checked against the pre-registration lock (``lock``, default the repository's):
    a changed frozen input, a rewritten lock, a study missing from the lock, or a design
    parameter whose value differs from the locked one refuses the run, unless ``deviation``
    states why the design deviates (then the page and results.json show the deviation).
    Without a lock file the run is refused unless ``no_lock`` (stated on the page).
    ``timeout`` is papermill's per-cell execution timeout in seconds. A failing or timed-out
    cell still yields the HTML, with the error visible, and ``status == "failed"``.
    """
    require(*_KERNEL_STACK, purpose=f"running a study ({name})")
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1:
        raise EvalkitError(f"timeout must be a positive int of seconds, got {timeout!r}")
    path = notebook_path(name)
    nb_dict = read_notebook(path)
    source = parameters_cell(nb_dict, path)
    declared = notebook_parameters(path)
    merged = _validate(name, params, declared)
    name = path.stem if str(name).endswith(".ipynb") else name  # ad-hoc notebook: its stem
    status = check_study(
        name,
        declared,
        merged,
        set(params or {}),
        hashlib.sha256(source.encode("utf-8")).hexdigest(),
        deviation=deviation,
        no_lock=no_lock,
        lock=lock,
    )
    inputs = input_hashes(declared, merged)
    prepared = _prepared_notebook(nb_dict, merged, status.banner())
    out = Path(out_dir) if out_dir is not None else Path("reports") / name
    out.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    say(f"[study] {name}: {status.status}; running ({len(merged)} parameter(s), timeout "
        f"{timeout}s per cell)")  # fmt: skip
    nb, error, figures = _execute(prepared, name, timeout, say, no_lock=no_lock)
    nb = stable_notebook(nb, name)
    html_path = out / "index.html"
    html_path.write_text(render_html(nb, title=name), encoding="utf-8")
    import nbformat  # deferred: the notebook stack is heavy and only studies need it

    nbformat.write(nb, str(out / f"{name}.ipynb"))
    run_status = StudyStatus.OK if error is None else StudyStatus.FAILED
    results = _results(name, run_status, merged, status, inputs, error, figures, path)
    results_path = out / "results.json"
    results_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    say(f"[study] {name}: {run_status.value} -> {html_path}")
    return StudyRun(name, run_status, out, html_path, results_path, results, error)


def _results(
    name: str,
    run_status: StudyStatus,
    merged: Mapping[str, Any],
    status: Any,
    inputs: Any,
    error: str | None,
    figures: Mapping[str, Any],
    path: Path,
) -> dict[str, Any]:
    """The run's results.json: how it ran (parameters, pre-registration, inputs, versions,
    commit, lock) and the figures the notebook published."""
    results: dict[str, Any] = {
        "study": name,
        "status": run_status.value,
        "parameters": merged,
        "preregistration": status.to_json(),
        "deviation": status.deviation_reason,
        "inputs": inputs,
        "error": error,
        "figure_keys": sorted(k for k in figures if k not in _RUNNER_KEYS),
        "versions": _versions(),
        "git_commit": _git_commit(),
        "git_dirty": _git_dirty(),
        "notebook_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        # the dependency lock this checkout installs, and where this environment differs from it
        "lock_sha256": lock_sha256(),
        "lock_mismatches": environment_mismatches(),
    }
    for key, value in figures.items():
        if key not in _RUNNER_KEYS:
            results[key] = value
    return _jsonable(results)


def _prepared_notebook(nb_dict: Mapping[str, Any], merged: Mapping[str, Any], banner: str) -> Any:
    """The notebook to execute: the values injected after the parameters cell as literals
    proven to read back as themselves, and the pre-registration banner under the title."""
    import nbformat  # deferred: the notebook stack is heavy and only studies need it

    nb = nbformat.reads(json.dumps(nb_dict), as_version=4)  # sources joined, as papermill has
    at = next(
        i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])
    )
    injected = nbformat.v4.new_code_cell(injected_source(merged))
    injected.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(at + 1, injected)
    first = nb.cells[0] if nb.cells else None
    title = first is not None and first.cell_type == "markdown" and first.source.startswith("#")
    nb.cells.insert(1 if title else 0, nbformat.v4.new_markdown_cell(banner))
    return nb


def _execute(
    nb: Any, name: str, timeout: int, say: Callable[[str], None], *, no_lock: bool = False
) -> tuple[Any, str | None, dict[str, Any]]:
    """Run the prepared notebook with papermill; (executed notebook, error text, figures)."""
    # deferred: the notebook stack is heavy and only studies need it
    import nbformat
    import papermill as pm

    error: str | None = None
    # the directory name never carries the study's name: papermill formats paths with
    # str.format, and an ad-hoc notebook's name may hold braces
    with tempfile.TemporaryDirectory(prefix="evalkit-study-") as work:
        work_dir = Path(work)
        executed = work_dir / "executed.ipynb"
        figures_path = work_dir / "figures.json"
        # the kernel imports the same evalkit as this process, wherever its cwd is
        root = str(REPO_ROOT)
        pythonpath = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        kernel_log = work_dir / "kernel-stderr.log"
        with (
            _env(RESULTS_ENV, str(figures_path)),
            _env(NO_LOCK_ENV, "1" if no_lock else "0"),
            _env("PYTHONPATH", pythonpath),
            kernel_log.open("ab") as log,
        ):
            try:
                pm.execute_notebook(
                    nb,
                    str(executed).replace("{", "{{").replace("}", "}}"),
                    parameters=None,  # injected above, as proven literals
                    kernel_name="python3",
                    language="python",
                    cwd=str(work_dir),
                    execution_timeout=timeout,
                    progress_bar=False,
                    log_output=False,
                    request_save_on_cell_execute=False,
                    kernel_manager_class=_kernel_manager_class(log),
                )
            except Exception as exc:  # any kernel/cell failure is the study's status, not a crash
                error = _error_text(exc, timeout)
        ran = executed.is_file()
        out_nb = nbformat.read(str(executed), as_version=4) if ran else nb
        if error is not None and "Timeout" not in error:  # e.g. a kernel that died
            tail = kernel_log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            if tail and not (ran and _has_error_output(out_nb)):
                say(f"[study] {name}: kernel stderr (last lines):\n" + "\n".join(tail[-5:]))
        if error is not None and not _has_error_output(out_nb):
            failed = nbformat.v4.new_markdown_cell(f"**Study failed:** {markdown_text(error)}")
            out_nb.cells.insert(0, failed)
        figures: dict[str, Any] = {}
        if figures_path.is_file():
            figures = json.loads(figures_path.read_text(encoding="utf-8"))
    return out_nb, error, figures


def _kernel_manager_class(stderr: Any) -> type:
    """A kernel manager whose kernel writes its stderr (transport warnings, shutdown notes) to
    ``stderr`` instead of the terminal; a failing study prints the log's tail."""
    from jupyter_client.manager import (
        AsyncKernelManager,  # deferred: the notebook stack is heavy and only studies need it
    )

    class _QuietKernelManager(AsyncKernelManager):  # type: ignore[misc]
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            kw["stderr"] = stderr
            await super()._async_launch_kernel(kernel_cmd, **kw)

    return _QuietKernelManager


def _error_text(exc: BaseException, timeout: int) -> str:
    kind = type(exc).__name__
    if "Timeout" in kind or isinstance(exc, TimeoutError):
        return f"{kind}: a cell ran longer than the {timeout}s per-cell timeout"
    ename = getattr(exc, "ename", None)
    evalue = getattr(exc, "evalue", None)
    if ename:
        return f"{ename}: {evalue}"
    msg = str(exc).strip().splitlines()
    return f"{kind}: {msg[-1] if msg else ''}".strip()


def _has_error_output(nb: Any) -> bool:
    return any(
        out.get("output_type") == "error"
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )
