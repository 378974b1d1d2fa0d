"""score_fleet on a Dask LocalCluster (2 worker processes, 1 thread each) gives, row for row,
what it gives serially and what score_ledger gives per directory: on generated ledgers and on
every conformance ledger, under both rubrics, with failing directories among good ones.

One cluster serves the module and is closed at the end; its worker processes must be gone
then. Every warning is an error here: a clean run emits none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import IN_CI
from fleet_support import (
    assert_matches_score_ledger,
    bad_directories,
    classify,
    conformance_dirs,
    die,
    make_fleet,
    peak_rss_kib,
)

from evalkit.fleet.score import (
    FleetFailureWarning,
    fleet_client,
    fleet_summary,
    run_fleet,
    score_fleet,
)

pytestmark = pytest.mark.filterwarnings("error")

try:
    import dask
    import dask.distributed as dd
except ImportError:  # pragma: no cover - the Makefile installs the fleet extra
    if IN_CI:
        raise
    pytest.skip("dask is not installed (pip install 'evalkit[fleet]')", allow_module_level=True)


def _gone(pids: list[int], within: float = 20.0) -> list[int]:
    """The pids of ``pids`` still running after waiting up to ``within`` seconds."""
    deadline = time.monotonic() + within
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _running(p)]
        time.sleep(0.1)
    return alive


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = dd.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # loopback, any free port
    )
    c = dd.Client(cluster)
    pids = list(c.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    try:
        yield c
    finally:
        c.close()
        cluster.close()
    assert _gone(pids) == [], "worker processes outlived the cluster"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return make_fleet(tmp_path_factory.mktemp("fleet"), sizes=(24, 40, 31, 57, 18, 45))


def _on_cluster(client: Any, dirs: Any, rubric: str) -> tuple[pd.DataFrame, int]:
    """score_fleet on the cluster, and how many of its tasks the scheduler ran."""
    with dd.get_task_stream(client) as stream:
        frame = score_fleet(dirs, rubric, client=client)
    return frame, sum(1 for t in stream.data if str(t["key"]).startswith("evalkit-fleet-"))


def _same(distributed: pd.DataFrame, serial: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(distributed, serial)
    assert fleet_summary(distributed).outcomes == fleet_summary(serial).outcomes


@pytest.mark.parametrize("rubric", ["rubric-v1", "rubric-v2"])
@pytest.mark.slow
def test_generated_ledgers_on_a_cluster_equal_serial(
    client: Any, fleet: list[str], rubric: str
) -> None:
    frame, tasks = _on_cluster(client, fleet, rubric)
    _same(frame, score_fleet(fleet, rubric))
    assert assert_matches_score_ledger(frame, fleet, rubric) == set()
    assert tasks == len(fleet)  # one task per directory, run by the cluster
    assert frame["metrics_dir"].nunique() == len(fleet)


@pytest.mark.parametrize("rubric", ["rubric-v1", "rubric-v2"])
@pytest.mark.slow
def test_conformance_ledgers_on_a_cluster_equal_serial(client: Any, rubric: str) -> None:
    dirs = conformance_dirs()
    assert len(dirs) > 100
    with warnings.catch_warnings():
        # cases without a session to score are failures here; compared one by one below
        warnings.simplefilter("ignore", FleetFailureWarning)
        frame, tasks = _on_cluster(client, dirs, rubric)
        serial = score_fleet(dirs, rubric)
    _same(frame, serial)
    assert tasks == len(dirs)
    failed = assert_matches_score_ledger(frame, dirs, rubric)
    assert len(failed) < len(dirs) // 4  # most conformance cases hold sessions to score


@pytest.mark.slow
def test_failing_directories_on_a_cluster(client: Any, fleet: list[str], tmp_path: Path) -> None:
    bad = bad_directories(tmp_path)
    mixed = [fleet[0], *bad, fleet[1]]
    with pytest.warns(FleetFailureWarning, match=f"{len(bad)} of {len(mixed)}"):
        frame = score_fleet(mixed, client=client)
    with pytest.warns(FleetFailureWarning):
        _same(frame, score_fleet(mixed))
    assert assert_matches_score_ledger(frame, mixed, "rubric-v2") == set(bad)
    for failure in fleet_summary(frame).failures:
        assert bad[failure.metrics_dir] in failure.reason


def test_run_fleet_classifies_failures_on_a_cluster(client: Any, tmp_path: Path) -> None:
    names = [str(tmp_path / n) for n in ("a-ok", "b-input", "c-io", "d-bug", "e-ok")]
    assert run_fleet(names, classify, client=client) == run_fleet(names, classify)


def test_a_scheduler_address_connects_and_closes_its_own_client(
    client: Any, fleet: list[str]
) -> None:
    address = client.scheduler.address
    before = len(client.scheduler_info()["workers"])
    frame = score_fleet(fleet[:3], client=address)
    _same(frame, score_fleet(fleet[:3]))
    assert len(client.scheduler_info()["workers"]) == before


def test_a_cluster_object_is_connected_to_and_left_running(client: Any, fleet: list[str]) -> None:
    # before: a LocalCluster (or any cluster object) given as client= was refused
    cluster = client.cluster
    assert isinstance(cluster, dd.LocalCluster)
    frame = score_fleet(fleet[:3], client=cluster)
    _same(frame, score_fleet(fleet[:3]))
    assert cluster.status.name == "running"  # the caller's cluster is never closed here
    assert len(client.scheduler_info()["workers"]) == 2


def test_glob_and_list_file_on_a_cluster(client: Any, fleet: list[str]) -> None:
    root = Path(fleet[0]).parents[1]
    listing = root / "cluster-fleet.txt"
    listing.write_text("\n".join(fleet) + "\n", encoding="utf-8")
    by_file = score_fleet(listing, client=client)
    by_glob = score_fleet(str(root / "repo-*" / "metrics"), client=client)
    _same(by_file, score_fleet(fleet))
    _same(by_glob, score_fleet(sorted(fleet)))


def test_worker_memory_is_reported(client: Any) -> None:
    peaks = client.run(peak_rss_kib)
    assert len(peaks) == 2 and all(kib > 10_000 for kib in peaks.values())


@pytest.mark.slow
def test_a_lost_worker_is_a_failure_and_the_others_finish(tmp_path: Path) -> None:
    names = [str(tmp_path / n) for n in ("first", "kill", "last")]
    # the first death is final for the task that caused it (no retry); with one task per
    # thread handed to a worker, the other tasks wait on the scheduler and are not bystanders
    config = {
        "distributed.scheduler.allowed-failures": 0,
        "distributed.scheduler.worker-saturation": 1.0,
    }
    with dask.config.set(config), fleet_client(workers=1) as own:
        pids = list(own.run(os.getpid).values())
        out = run_fleet(names, die, client=own)
    assert [v for v, _ in out] == [names[0], None, names[2]]
    failure = out[1][1]
    assert failure is not None and failure.kind == "lost" and "KilledWorker" in failure.reason
    assert _gone(pids) == []


_SETTINGS_IN_A_FRESH_PROCESS = """
import json, os
import dask
from evalkit.fleet.score import fleet_client

def settings():
    import dask, os
    return [
        dask.config.get("distributed.worker.profile.enabled"),
        os.environ.get("MALLOC_TRIM_THRESHOLD_"),
        dask.config.get("distributed.admin.tick.interval"),
        dask.config.get("distributed.worker.memory.monitor-interval"),
    ]

with fleet_client(workers=1) as local:
    (worker,) = local.run(settings).values()
print(json.dumps({"worker": worker, "here": dask.config.get("distributed.worker.profile.enabled")}))
"""


@pytest.mark.slow
def test_the_local_cluster_of_fleet_client_runs_with_the_scoring_settings() -> None:
    # in a fresh interpreter, as `score --all --fleet --workers N` runs: Dask's nannies also
    # write their spawn environment into the process that starts them, so a process that
    # started a default cluster before (this one) passes MALLOC_TRIM_THRESHOLD_ on
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    done = subprocess.run(
        [sys.executable, "-c", _SETTINGS_IN_A_FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["worker"] == [False, None, "1s", "1s"]
    assert out["here"] is True  # scoped to starting that cluster: the caller's config is untouched
