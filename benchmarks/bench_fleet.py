"""Fleet scoring: ``score_fleet`` serially against a 2-worker Dask LocalCluster, same run.

40 generated metrics directories of 500 sessions each (``simulate_metrics_dir``; cached under
``benchmarks/out/fleet-ledgers/``, rebuilt when the generator's source or the parameters
change) are scored once in this process and once on a local cluster of 2 worker processes
with one thread each. Both sides are warmed first (imports, one directory), cluster start-up
is timed separately. Prints the speed-up (serial / cluster; on a quiet 2-core machine
>= 1.5x is expected), each worker's peak resident memory (``getrusage`` run on the worker,
before and after the fleet), what travelled back (Arrow streams, against score_ledger's own
frame pickled, on a sample of directories) and whether both results are identical.
Needs the fleet extra: ``pip install 'evalkit[fleet]'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import pickle
import shutil
import sys
import time
from pathlib import Path
from typing import Any

N_LEDGERS = 40
N_SESSIONS = 500
SEED = 20261201
WORKERS = 2
SAMPLE_PICKLED = 5
#: Each path is timed this many times and its best run kept, serial and cluster alike.
REPEATS = 3
CACHE = Path(__file__).resolve().parent / "out" / "fleet-ledgers"


def _generator_digest() -> str:
    import evalkit.simulate as sim

    h = hashlib.sha256(f"{N_LEDGERS}/{N_SESSIONS}/{SEED}".encode())
    for path in sorted(Path(sim.__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


def fleet_ledgers(root: Path = CACHE) -> list[str]:
    """The benchmark's metrics directories, generated once and reused while still valid."""
    from evalkit.simulate import simulate_metrics_dir

    dirs = [root / f"repo-{i:02d}" / "metrics" for i in range(N_LEDGERS)]
    manifest = root / "manifest.json"
    digest = _generator_digest()
    cached = manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8")) == {
        "digest": digest
    }
    if cached and all((d / "sessions.jsonl").is_file() for d in dirs):
        print(f"ledgers: {N_LEDGERS} x {N_SESSIONS} sessions, cached in {root}")
        return [str(d) for d in dirs]
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    for i, d in enumerate(dirs):
        # guard counts vary by repository, so the fleet is not one ledger repeated
        simulate_metrics_dir(
            d, n_sessions=N_SESSIONS, seed=SEED + i, score=False, mean_blocked=i % 7
        )
    manifest.write_text(json.dumps({"digest": digest}) + "\n", encoding="utf-8")
    print(
        f"ledgers: generated {N_LEDGERS} x {N_SESSIONS} sessions in {time.perf_counter() - t0:.1f} s"
    )
    return [str(d) for d in dirs]


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _runs(runs: list[tuple[float, Any]]) -> str:
    return " / ".join(f"{t:.2f} s" for t, _ in runs)


def _timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        print("skipped: dask is not installed (pip install 'evalkit[fleet]')")
        return
    import pandas as pd

    from evalkit.fleet.score import fleet_client, fleet_summary, score_fleet
    from evalkit.scoring.engine import score_ledger

    dirs = fleet_ledgers()
    score_fleet(dirs[:1])  # warm: imports and caches, as the workers get below
    serial_runs = [_timed(lambda: score_fleet(dirs)) for _ in range(REPEATS)]
    serial_s, serial = min(t for t, _ in serial_runs), serial_runs[-1][1]
    sessions = fleet_summary(serial).sessions
    print(
        f"serial: {len(dirs)} directories, {sessions} sessions, {len(serial)} rows in "
        f"{serial_s:.2f} s (best of {REPEATS}: {_runs(serial_runs)})"
    )

    # the local cluster `score --all --fleet --workers 2` starts (LOCAL_WORKER_CONFIG applied)
    with contextlib.ExitStack() as stack:
        start_s, client = _timed(lambda: stack.enter_context(fleet_client(workers=WORKERS)))
        score_fleet(dirs[:WORKERS], client=client)  # warm every worker
        before = client.run(_peak_rss_mib)
        cluster_runs = [_timed(lambda: score_fleet(dirs, client=client)) for _ in range(REPEATS)]
        cluster_s, distributed = min(t for t, _ in cluster_runs), cluster_runs[-1][1]
        after = client.run(_peak_rss_mib)
    print(
        f"cluster: fleet_client(workers={WORKERS}), {WORKERS} worker processes x 1 thread "
        f"(start-up {start_s:.1f} s, not counted): "
        f"{cluster_s:.2f} s (best of {REPEATS}: {_runs(cluster_runs)})"
    )
    print(
        f"ratio (serial / cluster): {serial_s / cluster_s:.2f}x (>= 1.5x expected on 2 quiet cores)"
    )
    for worker in sorted(after):
        print(
            f"peak memory of worker {worker}: {after[worker]:.0f} MiB "
            f"(after warm-up {before[worker]:.0f} MiB)"
        )
    print(f"peak memory of this (client) process: {_peak_rss_mib():.0f} MiB")
    summary = fleet_summary(distributed)
    arrow = [o.payload_bytes for o in summary.outcomes]
    # what a task returning score_ledger's own frame would send (pickled object columns)
    sample = dirs[:SAMPLE_PICKLED]
    pickled = [len(pickle.dumps(score_ledger(d), protocol=5)) for d in sample]
    per_arrow = sum(arrow[: len(sample)]) / len(sample)
    print(
        f"sent back: {sum(arrow) / 1e6:.2f} MB of Arrow streams in all; per directory "
        f"{per_arrow / 1e3:.0f} KB vs {sum(pickled) / len(sample) / 1e3:.0f} KB for score_ledger's "
        f"frame pickled ({sum(pickled) / len(sample) / per_arrow:.0f}x, mean of {len(sample)})"
    )
    try:
        pd.testing.assert_frame_equal(distributed, serial)
        print("identical results (serial vs cluster): yes")
    except AssertionError as exc:
        print(f"identical results (serial vs cluster): NO\n{exc}")


if __name__ == "__main__":
    sys.exit(main())
