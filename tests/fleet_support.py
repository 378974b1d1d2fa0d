"""Shared by the fleet tests: fleets of generated ledgers, row-for-row comparison with
``score_ledger``, and per-directory functions for ``run_fleet`` that Dask workers import by name
(a local cluster's workers are spawned with the test process's ``sys.path``, so this module,
beside the tests, is found there as it is here).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import EvalkitError
from evalkit.simulate.hostile_ledgers import generate_ledger


def classify(metrics_dir: str) -> str:
    """Answers for a name ending in ``ok``; raises one kind of error per other ending."""
    name = os.path.basename(metrics_dir)
    if name.endswith("input"):
        raise EvalkitError(f"{metrics_dir}: the user's to fix")
    if name.endswith("io"):
        raise FileNotFoundError(2, "No such file or directory", metrics_dir)
    if name.endswith("bug"):
        raise KeyError("a bug")
    return f"scored {name}"


def die(metrics_dir: str) -> str:
    """Ends the worker process that runs it (a lost task); answers for other names."""
    if os.path.basename(metrics_dir) == "kill":
        os._exit(3)
    return metrics_dir


def peak_rss_kib() -> int:
    """Peak resident memory of this process (KiB on Linux)."""
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


# -- building and comparing fleets -----------------------------------------------------------


def make_fleet(root: Path, sizes: tuple[int, ...] = (24, 40, 31, 57), seed: int = 7) -> list[str]:
    """Seeded generated metrics directories ``root/repo-<i>/metrics`` (different sizes, shapes
    and mean guard counts), and one ledger of the hostile benchmark generator (overlaps,
    duplicates, stubs, odd timestamps, bad lines)."""
    from evalkit.simulate import simulate_metrics_dir

    dirs = []
    for i, n in enumerate(sizes):
        target = root / f"repo-{i}" / "metrics"
        simulate_metrics_dir(target, n_sessions=n, seed=seed + i, score=False, mean_blocked=i)
        dirs.append(str(target))
    hostile = root / "repo-hostile" / "metrics"
    generate_ledger(hostile, n_sessions=60, n_events=1500, seed=seed)
    dirs.append(str(hostile))
    return dirs


def journaled_fleet(root: Path, n_sessions: int = 10, seed: int = 30) -> list[str]:
    """Three seeded metrics directories ``root/repo-<i>/metrics`` with their journals (scored
    under rubric-v1 as each session ended), guard counts rising from one repository to the
    next; the simulator reuses session ids, so the repositories share some."""
    from evalkit.simulate import simulate_metrics_dir

    dirs = []
    for i in range(3):
        target = root / f"repo-{i}" / "metrics"
        simulate_metrics_dir(target, n_sessions=n_sessions, seed=seed + i, mean_blocked=1 + 2 * i)
        dirs.append(str(target))
    return dirs


def conformance_dirs() -> list[str]:
    """Every conformance case folder (each is a metrics directory), as the conformance test
    finds them; fails under CI, skips elsewhere, when ../shared is missing."""
    from conftest import require_shared

    dirs = []
    for corpus in ("public", "real"):
        folder = require_shared("conformance", corpus)
        dirs += [str(p) for p in sorted(folder.iterdir()) if p.is_dir()]
    return dirs


def rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Rows with each score's type, so 1 (int) and 1.0 (float) never compare equal."""
    return [
        (r.session_id, r.dimension, r.status, type(r.score).__name__, r.score, r.evidence)
        for r in frame.itertuples(index=False)
    ]


def assert_matches_score_ledger(frame: pd.DataFrame, dirs: list[str], rubric: str) -> set[str]:
    """Each directory's rows of a fleet frame are ``score_ledger``'s, row for row; returns the
    directories ``score_ledger`` refuses or finds no session in (the fleet's failures)."""
    from evalkit.fleet.score import fleet_summary
    from evalkit.scoring.engine import LEDGER_COLUMNS, score_ledger

    assert list(frame.columns) == [*LEDGER_COLUMNS, "metrics_dir"]
    for name in LEDGER_COLUMNS:
        assert frame[name].dtype == object, name
    empty = set()
    order = []
    for d in dirs:
        got = frame[frame["metrics_dir"] == d].drop(columns="metrics_dir")
        try:
            expected = score_ledger(d, rubric=rubric)
        except EvalkitError:  # refused (e.g. not there): no rows, and a failure
            assert got.empty, d
            empty.add(d)
            continue
        assert rows(got) == rows(expected), d
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_like=False)
        if expected.empty:
            empty.add(d)
        else:
            order.append(d)
    assert list(dict.fromkeys(frame["metrics_dir"])) == order  # fleet order, then ledger order
    summary = fleet_summary(frame)
    assert {f.metrics_dir for f in summary.failures} == empty
    assert summary.rubric_version == rubric
    return empty


def bad_directories(root: Path) -> dict[str, str]:
    """Directories that cannot be scored -> a fragment their failure reason must contain."""
    missing = root / "gone"
    as_dir = root / "sessions-is-a-directory"
    (as_dir / "sessions.jsonl").mkdir(parents=True)
    fifo = root / "sessions-is-a-fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "sessions.jsonl")  # must be refused, never block the task
    empty = root / "no-sessions"
    empty.mkdir()
    blank = root / "only-blank-ids"
    blank.mkdir()
    (blank / "sessions.jsonl").write_text('{"session_id": "   "}\n', encoding="utf-8")
    return {
        str(missing): "metrics directory not found",
        str(as_dir): "is a directory, not a regular file",
        str(fifo): "named pipe (FIFO)",
        str(empty): "no such file",
        str(blank): "1 session id(s) skipped",
    }
