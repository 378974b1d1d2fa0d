"""Packaging tells the truth: the core works with the core alone, every extra is named where it
is missing, the extras table equals pyproject's, and the version has one source.

"Only the core installed" is shown without a second environment: a subprocess hides, through a
meta-path finder, every top-level module of every installed distribution outside the closure
of evalkit's own (extra-less) requirements, so an import of an optional package there fails
exactly as it would where the package is not installed.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import evalkit
import evalkit.stats
from evalkit.extras import EXTRAS, MissingExtraError, extra_of, install_hint, require

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# extras that are groups of other extras, or the test tools: no module of their own to guard
META_EXTRAS = {"all", "test"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _extra_requirements(extra: str) -> list[Requirement]:
    return [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"][extra]]


# ---------------------------------------------------------------------------- the tables


def test_the_core_is_the_numerical_stack_and_tqdm() -> None:
    core = {_norm(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    assert core == {"numpy", "pandas", "scipy", "statsmodels", "tqdm"}


def test_extras_table_equals_pyproject() -> None:
    declared = PYPROJECT["project"]["optional-dependencies"]
    guarded = {e for e in declared if e not in META_EXTRAS}
    assert set(EXTRAS) == guarded
    for extra in guarded:
        own = {_norm(r.name) for r in _extra_requirements(extra) if _norm(r.name) != "evalkit"}
        assert own == {_norm(d) for d in EXTRAS[extra].values()}, extra


def test_all_names_every_extra_but_the_test_tools() -> None:
    (everything,) = _extra_requirements("all")
    assert everything.name == "evalkit"
    assert set(everything.extras) == set(EXTRAS)


def test_krippendorff_is_a_test_dependency_only() -> None:
    assert any(_norm(r.name) == "krippendorff" for r in _extra_requirements("test"))
    # an import of the package itself (evalkit.stats.agreement.krippendorff is evalkit's own)
    hits = [
        f"{p.relative_to(REPO)}:{node.lineno}"
        for p in (REPO / "evalkit").rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text("utf-8")))
        if (
            isinstance(node, ast.Import)
            and any(a.name.split(".")[0] == "krippendorff" for a in node.names)
        )
        or (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "krippendorff"
        )
    ]
    assert hits == []


def test_results_record_the_versions_of_what_evalkit_runs_on() -> None:
    # results.json's "versions": evalkit, its core and the studies' kernel stack; never a
    # package evalkit does not import (krippendorff is a test tool: a second implementation)
    from evalkit.studies.run import _versions

    core = {_norm(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    studies = {_norm(r.name) for r in _extra_requirements("studies")}
    recorded = {_norm(name) for name in _versions()} - {"python", "evalkit"}
    assert "krippendorff" not in recorded
    assert recorded <= core | studies, recorded - (core | studies)


def test_version_has_one_source() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "evalkit._version.__version__"
    # the installed metadata was derived from it
    assert metadata.version("evalkit") == evalkit.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", evalkit.__version__)


# ---------------------------------------------------------------------------- the guard


def test_extra_of_names_the_extra_and_never_guards_a_core_module() -> None:
    assert extra_of("matplotlib.pyplot") == "studies"
    assert extra_of("yaml") == "studies"
    assert extra_of("pyarrow") == "parquet"
    with pytest.raises(KeyError):
        extra_of("numpy")


def test_require_names_the_extra_of_a_missing_module(monkeypatch: pytest.MonkeyPatch) -> None:
    require("matplotlib", "yaml", purpose="nothing")  # installed here: no error
    monkeypatch.setitem(EXTRAS, "made-up", {"evalkit_no_such_module": "no-such-dist"})
    with pytest.raises(MissingExtraError) as exc:
        require("evalkit_no_such_module.sub", purpose="a made-up feature")
    text = str(exc.value)
    assert "a made-up feature needs evalkit_no_such_module" in text
    assert install_hint("made-up") in text and "pip install 'evalkit[made-up]'" in text
    assert isinstance(exc.value, evalkit.EvalkitError)
    assert isinstance(exc.value, ImportError)  # a guarded optional import catches it as one


def test_require_names_the_extra_it_is_told_where_several_provide_a_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(EXTRAS, "made-up", {"evalkit_no_such_module": "no-such-dist"})
    monkeypatch.setitem(EXTRAS, "made-up-too", {"evalkit_no_such_module": "no-such-dist"})
    with pytest.raises(MissingExtraError, match=r"evalkit\[made-up\]"):
        require("evalkit_no_such_module", purpose="x")  # the first that provides it
    with pytest.raises(MissingExtraError, match=r"evalkit\[made-up-too\]"):
        require("evalkit_no_such_module", purpose="x", extra="made-up-too")
    with pytest.raises(KeyError, match="does not provide"):
        require("matplotlib", purpose="x", extra="fleet")  # a wrong pairing is a bug, loud
    assert "pyarrow" in EXTRAS["fleet"] and "pyarrow" in EXTRAS["parquet"]


# ---------------------------------------------------------------------- only the core


def _core_closure() -> set[str]:
    """Normalized names of evalkit and every distribution its extra-less requirements reach,
    plus the installer a new virtual environment starts with (its .pth hooks load at start)."""
    seen: set[str] = set()
    stack = ["evalkit", "pip", "setuptools", "wheel"]
    while stack:
        name = _norm(stack.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(req.name)
    return seen


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    """Importable name -> distributions: the environment does not change during the run, and
    each call reads every installed distribution's file list (about 0.4 s)."""
    return metadata.packages_distributions()  # type: ignore[return-value]


def _hidden_modules() -> list[str]:
    core = _core_closure()
    hidden = set()
    for module, dists in _packages_distributions().items():
        if module.isidentifier() and not any(_norm(d) in core for d in dists):
            hidden.add(module)
    return sorted(hidden)


HOOK = r"""
import importlib.abc, json, os, sys
HIDDEN = frozenset(json.loads(os.environ["EVALKIT_HIDDEN_MODULES"]))
already = sorted(m for m in sys.modules if m.partition(".")[0] in HIDDEN)
class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""


def _run_core_only(body: str, tmp_path: Path) -> dict:
    script = HOOK + body + "\nprint('RESULT ' + json.dumps(out))\n"
    env = {
        "EVALKIT_HIDDEN_MODULES": json.dumps(_hidden_modules()),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


@pytest.mark.slow
def test_the_hidden_set_holds_every_optional_package() -> None:
    hidden = set(_hidden_modules())
    optional = {m for modules in EXTRAS.values() for m in modules} | {"krippendorff", "pytest"}
    installed = optional & set(_packages_distributions())
    assert installed <= hidden
    assert not hidden & {"numpy", "pandas", "scipy", "statsmodels", "tqdm", "evalkit"}


CORE_WORK = r"""
out = {"already": already}
import evalkit
import evalkit.stats
from evalkit.scoring.engine import SAMPLE_METRICS_DIR
record = evalkit.score_session(SAMPLE_METRICS_DIR, rubric="rubric-v2", timestamp="2026-01-01T00:00:00Z")
out["dimensions"] = [d["id"] for d in record.to_dict()["dimensions"]]
out["ledger_rows"] = len(evalkit.score_ledger(SAMPLE_METRICS_DIR, rubric="rubric-v1"))
out["facts"] = sorted(evalkit.compute_facts(record.to_dict()["dimensions"]))[:3]
out["public"] = [type(getattr(evalkit, n)).__name__ for n in evalkit.__all__]
import evalkit.stats as st
out["stats"] = [type(getattr(st, n)).__name__ for n in st.__all__]
res = st.cohen_kappa([[0, 0], [1, 1], [0, 1], [1, 1], [0, 0], [1, 0], [1, 1], [0, 0]])
out["kappa_ci"] = list(res.confidence_interval(method="bca", n_resamples=200, rng=1))
study = st.threshold_study([0, 1, 2, 3, 5, 0, 1], n_resamples=100, rng=2)
out["study_rows"] = len(study.table)
import evalkit.calibration as cal
out["calibration"] = [type(getattr(cal, n)).__name__ for n in cal.__all__]
from evalkit.cli.main import SUBCOMMAND_MODULES, main
codes = {}
for argv in [["--help"]] + [[c, "--help"] for c in SUBCOMMAND_MODULES]:
    try:
        main(argv)
    except SystemExit as exc:
        codes[" ".join(argv)] = exc.code
out["help"] = codes
out["loaded_hidden"] = sorted(m for m in sys.modules if m.partition(".")[0] in HIDDEN)
"""


@pytest.mark.slow
def test_the_core_works_with_only_the_core_installed(tmp_path: Path) -> None:
    out = _run_core_only(CORE_WORK, tmp_path)
    assert out["already"] == []  # nothing optional was imported before the hook
    assert len(out["dimensions"]) == 6
    assert out["ledger_rows"] > 0 and out["facts"]
    assert len(out["public"]) == len(evalkit.__all__)
    assert len(out["stats"]) == len(evalkit.stats.__all__)
    low, high = out["kappa_ci"]
    assert low is not None and high is not None and low <= high
    assert out["study_rows"] > 0 and out["calibration"]
    assert out["help"] and set(out["help"].values()) == {0}, out["help"]
    assert out["loaded_hidden"] == []


DEMO = r"""
import contextlib, io, os
from evalkit.cli.main import main
with contextlib.redirect_stderr(io.StringIO()) as err:
    code = main(["demo", "--out", "reports"])
out = {"code": code, "stderr": err.getvalue(), "wrote": os.path.exists("reports")}
"""


@pytest.mark.slow
def test_the_demo_without_the_studies_extra_says_so_once_up_front(tmp_path: Path) -> None:
    out = _run_core_only(DEMO, tmp_path)
    hint = "pip install 'evalkit[studies]'"
    assert out["code"] == 1
    assert out["stderr"].count(hint) == 1, out["stderr"]
    assert out["stderr"].startswith("evalkit demo: error: evalkit demo (it runs every study)")
    assert "Traceback" not in out["stderr"]
    assert out["wrote"] is False  # nothing built or written before the refusal


EDGES = r"""
out = {}
from evalkit.extras import MissingExtraError
def refused(fn):
    try:
        fn()
    except MissingExtraError as exc:
        return str(exc)
    except BaseException as exc:
        return f"NOT REFUSED PROPERLY: {type(exc).__name__}: {exc}"
    return "NOT REFUSED"
import evalkit.stats as st
study = st.threshold_study([0, 1, 2, 3, 5, 0, 1], n_resamples=100, rng=2)
out["plot_threshold_study"] = refused(lambda: st.plot_threshold_study(study))
from evalkit.studies import run as studies
out["run_study"] = refused(lambda: studies.run_study("threshold-study", {}, no_lock=True))
from evalkit.prereg.study_params import load_parameters_file
open("p.yaml", "w").write("seed: 1\n")
out["parameters_file"] = refused(lambda: load_parameters_file("p.yaml"))
from evalkit.analyses import agreement, replay, threshold
open("labels.parquet", "wb").write(b"PAR1")
out["labels_parquet"] = refused(lambda: agreement.load_labels("labels.parquet"))
import pandas as pd
out["plot_rates"] = refused(lambda: replay.plot_rates(pd.DataFrame()))
out["plot_distribution"] = refused(lambda: threshold.plot_distribution(pd.DataFrame({"value": []}), "x"))
import contextlib, io
from evalkit.cli.main import main
from evalkit.scoring.engine import SAMPLE_METRICS_DIR
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["score", "--metrics-dir", str(SAMPLE_METRICS_DIR), "--all", "--out", "v.parquet"])
out["score_parquet"] = [code, err.getvalue()]
with contextlib.redirect_stderr(io.StringIO()) as err2:
    code2 = main(["study", "run", "threshold-study", "--no-lock", "--out", "r"])
out["study_run"] = [code2, err2.getvalue()]
out["loaded_hidden"] = sorted(m for m in sys.modules if m.partition(".")[0] in HIDDEN)
"""


@pytest.mark.slow
def test_every_optional_edge_names_its_extra(tmp_path: Path) -> None:
    out = _run_core_only(EDGES, tmp_path)
    studies_hint = "pip install 'evalkit[studies]'"
    for key in ("plot_threshold_study", "run_study", "parameters_file", "plot_rates"):
        assert studies_hint in out[key], (key, out[key])
    assert studies_hint in out["plot_distribution"]
    assert "pip install 'evalkit[parquet]'" in out["labels_parquet"]
    code, err = out["score_parquet"]
    assert code == 1 and "pip install 'evalkit[parquet]'" in err and "Traceback" not in err
    assert not (tmp_path / "v.parquet").exists()
    code, err = out["study_run"]
    assert code == 1 and studies_hint in err and "Traceback" not in err, err
    assert out["loaded_hidden"] == []
