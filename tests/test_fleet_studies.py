"""The rubric-replay and threshold-study notebooks on a fleet of three generated ledgers
(issue 15, item 3), through papermill as ``evalkit study run`` runs them.

The fleet's figures in results.json are what :mod:`evalkit.analyses.fleet` gives when called
directly; the run stays pre-registered (a fleet is data, a scheduler is where it runs); the
pages open in headless Chromium with no failed request, every image loaded and no error cell.
A Dask scheduler (a LocalCluster on loopback) gives the same figures as the serial run, and
without Dask a scheduler stops the page with the extra to install.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import IN_CI
from fleet_support import journaled_fleet

from evalkit.analyses import fleet as af
from evalkit.analyses import threshold_fleet as tf
from evalkit.fleet.score import score_fleet
from evalkit.prereg.study_params import notebook_parameters
from evalkit.studies import run as studies
from evalkit.studies.lock import input_hashes
from tests.browser import DevTools, assert_inert, chromium, open_page

# the direct calls below meet signals that never fire: their point interval warns, as it should
pytestmark = pytest.mark.filterwarnings("ignore::evalkit.errors.DegenerateDataWarning")

REPO = Path(__file__).resolve().parents[1]
FEWER = "test suite: fewer bootstrap resamples than pre-registered, to keep it fast"
THRESHOLD = {"n_resamples": 100}  # the smallest bootstrap fire_rates accepts
SEED = 20260919  # the threshold study's pre-registered seed
_RUNNER = {"git_commit", "git_dirty", "git_dirty_paths", "versions", "notebook_sha256", "lock_sha256",
           "lock_mismatches", "preregistration", "parameters", "inputs", "deviation"}  # fmt: skip


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return journaled_fleet(tmp_path_factory.mktemp("fleet"), n_sessions=10, seed=30)


def _glob(fleet: list[str]) -> str:
    return str(Path(fleet[0]).parents[1] / "repo-*" / "metrics")


@pytest.fixture(scope="module")
def runs(fleet: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("pages")
    replay = studies.run_study("rubric-replay", {"metrics_dirs": fleet}, out_dir=out / "replay")
    threshold = studies.run_study(
        "threshold-study",
        {"metrics_dirs": _glob(fleet), **THRESHOLD},
        out_dir=out / "threshold",
        deviation=FEWER,
    )
    return {"rubric-replay": replay, "threshold-study": threshold}


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _ok(runs: dict[str, Any], name: str) -> dict[str, Any]:
    res: dict[str, Any] = runs[name].results
    assert res["status"] == "ok", res["error"]
    return res


def _signals(res: dict[str, Any], *key: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(s[k] for k in key): s for s in res["fleet"]["signals"]}


@pytest.mark.notebook
def test_rubric_replay_on_a_fleet_publishes_the_fleet_rates(
    runs: dict[str, Any], fleet: list[str]
) -> None:
    res = _ok(runs, "rubric-replay")
    # a fleet is data and the scheduler where it runs: the run is as pre-registered
    assert res["preregistration"]["status"] == "pre-registered"
    declared = notebook_parameters(REPO / "notebooks" / "rubric-replay.ipynb")
    assert (
        res["inputs"]["metrics_dirs"]
        == _json(input_hashes(declared, {"metrics_dirs": fleet}))["metrics_dirs"]
    )
    got = _signals(res, "rubric", "dimension")
    assert len(got) == 8
    for rubric in ("rubric-v1", "rubric-v2"):
        frame = score_fleet(fleet, rubric)
        for dim in ("verification-evidence", "plan-fidelity", "gate-health", "process-safety"):
            direct = af.fire_rates(
                af.dimension_units(frame, dim, denominator="scored"),
                label=f"{rubric} {dim} fail", ceiling=0.1, level=0.95,
                n_resamples=2000, n_permutations=2000, seed=0,
            ).to_json_dict()  # fmt: skip
            mine = got[(rubric, dim)]
            assert mine["per_repository"] == _json(direct["per_repository"]), (rubric, dim)
            for part in ("pooled", "heterogeneity", "leave_one_out"):
                assert mine[part] == _json(direct[part]), (rubric, dim, part)
            # the page's rate table carries the same pooled interval for the fail status
            [row] = [r for r in res["rates"] if (r["rubric"], r["dimension"], r["status"])
                     == (rubric, dim, "fail")]  # fmt: skip
            assert [row["ci_low"], row["ci_high"]] == direct["pooled"]["ci"]
    sessions = {r["repository"]: r["sessions"] for r in res["fleet"]["repositories"]}
    assert sum(sessions.values()) == res["sessions"]["rubric-v2"]


@pytest.mark.notebook
def test_threshold_study_on_a_fleet_publishes_the_fleet_rates(
    runs: dict[str, Any], fleet: list[str]
) -> None:
    res = _ok(runs, "threshold-study")
    pre = res["preregistration"]
    assert pre["status"] == "deviation"  # only the smaller bootstrap, stated
    assert [d["parameter"] for d in pre["deviations"]] == ["n_resamples"]
    # the glob is hashed as the directories it resolves to
    items = res["inputs"]["metrics_dirs"]["items"]
    assert res["inputs"]["metrics_dirs"]["path"] == _glob(fleet)
    assert [i["path"] for i in items] == fleet
    facts = af.fleet_fact_table(fleet)
    got = _signals(res, "threshold")
    assert sorted(got) == [(1,), (3,), (6,), (20,)]
    for (t,), mine in got.items():
        direct = af.fire_rates(
            af.fact_units(facts, t), label=f"guard_blocked ≥ {t}", ceiling=0.1, level=0.95,
            n_resamples=THRESHOLD["n_resamples"], n_permutations=tf.N_PERMUTATIONS, seed=SEED,
        ).to_json_dict()  # fmt: skip
        assert mine["per_repository"] == _json(direct["per_repository"]), t
        assert mine["pooled"] == _json(direct["pooled"]), t
        cf = next(r for r in res["counterfactual"] if r["threshold"] == t)
        assert cf["sessions_failing"] == direct["pooled"]["k"]
    assert res["fleet"]["threshold_study_clusters"] == "repository"
    assert res["threshold_study"]["n_clusters"] == 3  # the curve resamples repositories
    per_repo = {r["repository"]: r["records"] for r in res["fleet"]["repositories"]}
    assert sum(per_repo.values()) == res["published_table"]["records"] == len(facts)


def _text(page: Path) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


@pytest.mark.browser
@pytest.mark.notebook
def test_the_fleet_pages_load_in_chromium(
    runs: dict[str, Any], fleet: list[str], tmp_path: Path
) -> None:
    binary = chromium()
    with DevTools(binary, tmp_path / "profile") as tools:
        seen = {name: open_page(tools, run.html) for name, run in runs.items()}
    root = str(Path(fleet[0]).parents[1])
    for name, info in seen.items():
        assert info["failed"] == [], name
        assert info["dom"]["errors"] == 0, name  # no error cell
        # the forest plot of every signal with a flag or a driver, and the pages' own plots
        assert info["dom"]["images"] >= 3 and info["dom"]["broken"] == 0, name
        assert_inert(info, name)
        text = info["dom"]["text"]
        assert "Across repositories" in text and "A fleet of 3 repositories" in text, name
        assert "pooled (cluster bootstrap)" in text and "leave-one-out" in text, name
        assert root not in text, name  # repositories by label, never by machine path
        assert "Traceback" not in _text(runs[name].html)


def _figures(res: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in res.items() if k not in _RUNNER}, sort_keys=True)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    try:
        import dask.distributed as dd
    except ImportError:  # pragma: no cover - the Makefile installs the fleet extra
        if IN_CI:
            raise
        pytest.skip("dask is not installed (pip install 'evalkit[fleet]')")
    with (
        dd.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        ) as cluster,  # fmt: skip
        dd.Client(cluster) as client,
    ):
        client.run(lambda: None)  # the workers are up
        yield cluster.scheduler_address


@pytest.mark.notebook
def test_a_scheduler_is_where_it_runs_not_what_it_computes(
    runs: dict[str, Any], fleet: list[str], scheduler: str, tmp_path: Path
) -> None:
    import dask.distributed as dd

    with dd.Client(scheduler) as watcher, dd.get_task_stream(watcher) as stream:
        replay = studies.run_study(
            "rubric-replay", {"metrics_dirs": fleet}, out_dir=tmp_path / "r", scheduler=scheduler
        )
        threshold = studies.run_study(
            "threshold-study",
            {"metrics_dirs": _glob(fleet), **THRESHOLD},
            out_dir=tmp_path / "t",
            deviation=FEWER,
            scheduler=scheduler,
        )
    for run in (replay, threshold):
        assert run.ok, run.error
        assert run.results["parameters"]["scheduler"] == scheduler
        assert run.results["preregistration"]["execution_parameters"] == ["scheduler"]
        assert _figures(run.results) == _figures(runs[run.study].results), run.study
    assert replay.results["preregistration"]["status"] == "pre-registered"
    # the work ran on the cluster: one task per directory, per rubric, and per journal
    tasks = [t for t in stream.data if str(t["key"]).startswith("evalkit-fleet-")]
    assert len(tasks) == 3 * 2 + 3
    assert "on the Dask scheduler" in _text(replay.html)
    # named on the command line only, and the page says what that trusted (issue 24, finding 1)
    assert "named on the command line (--scheduler), which was trusted" in _text(replay.html)


@pytest.mark.notebook
def test_a_scheduler_without_dask_stops_the_page_naming_the_extra(
    fleet: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "no-dask" / "dask"  # the kernel's `import dask` fails, as uninstalled
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('dask hidden by the test')\n", "utf-8")
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    run = studies.run_study(
        "rubric-replay", {"metrics_dirs": fleet}, out_dir=tmp_path / "out",
        scheduler="tcp://127.0.0.1:9",
    )  # fmt: skip
    assert not run.ok and run.exit_code == 1
    assert "MissingExtraError" in str(run.error) and "evalkit[fleet]" in str(run.error)
    text = _text(run.html)
    assert "pip install 'evalkit[fleet]'" in text and "leave scheduler empty" in text
