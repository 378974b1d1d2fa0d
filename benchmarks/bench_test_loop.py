"""The test loop's wall time: the suite serially against the same suite in xdist workers.

Both runs happen here, one after the other, on the same checkout, so the ratio is the figure
(a machine shared with other work moves both). Also printed: how busy the CPUs were (the
children's user + system time over wall time times cores). Opt-in, since a full run takes
many minutes: ``python benchmarks/run.py test_loop`` (``make bench`` skips it).
``EVALKIT_BENCH_TEST_SCOPE=full`` times the whole suite under ``CI=true`` (what ``make test``
runs), the default the ``make test-fast`` subset; ``TEST_WORKERS`` as in the Makefile.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

OPT_IN = True
ROOT = Path(__file__).resolve().parents[1]
FAST = ["-m", "not slow and not notebook and not browser"]


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, children's CPU seconds and pytest's exit code of one pytest run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> None:
    full = os.environ.get("EVALKIT_BENCH_TEST_SCOPE", "fast") == "full"
    workers = os.environ.get("TEST_WORKERS", "4")
    env = {**os.environ, "CI": "true"} if full else dict(os.environ)
    scope = [] if full else FAST
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    print(f"scope: {'whole suite, CI=true' if full else 'make test-fast subset'}; "
          f"{cores} cores, load {load:.1f} at start")  # fmt: skip
    serial = _run(["-p", "no:xdist", *scope], env)
    parallel = _run(["-n", workers, "--dist", "loadfile", "--no-loadscope-reorder", *scope], env)
    for name, (wall, cpu, rc) in (("serial", serial), (f"-n {workers}", parallel)):
        busy = cpu / (wall * cores)
        print(f"  {name:>8}: {wall:7.1f} s wall, CPU busy {busy:.0%} of {cores} cores, exit {rc}")
    print(f"  ratio parallel / serial: {parallel[0] / serial[0]:.2f}")
