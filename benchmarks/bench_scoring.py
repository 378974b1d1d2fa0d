"""The ledger at scale (issue 25): every batch path as a ratio to the parse floor, in one run.

A seeded hostile ledger (:mod:`evalkit.simulate.hostile_ledgers`, 100 events per session) is
generated once per size under ``benchmarks/out/`` (gitignored) and reused. Sizes:
``$EVALKIT_BENCH_SESSIONS``, a comma-separated list (default ``20000``; the 100k case,
about 1.8 GB, with ``EVALKIT_BENCH_SESSIONS=20000,100000``). Every figure is measured in a
fresh child process: wall and CPU seconds and peak RSS (``wait4``), start-up included for the
commands. The machine may be shared: CPU time is what other processes cannot inflate, so both
ratios are printed. Per size:

* the floor: read each file's bytes and ``orjson.loads`` every line (collector paused);
* ``score_ledger``, ``score --all --journal`` into a fresh journal, and ``verify --all``, each
  ``$EVALKIT_BENCH_REPEATS`` times (default 3), every run paired with a floor run just before
  it: the figure is the median of the pairs' ratios, which a drifting machine cannot bias;
* incremental reruns on a copy of the ledger: nothing new; 10 sessions appended; 1% of the
  events appended inside the windows of 1% of the sessions (late events); the same events
  spread over every window (no target: most sessions then change); each as a fraction of the
  full run, its records checked equal to a full ``--rescore``'s.

Then ``evalkit --help`` against ``python -c pass``, and Cohen's kappa at 10^6 items against
scikit-learn (time, and peak traced memory), no interval asked for. The child processes raise
the file cap (``$EVALKIT_MAX_FILE_BYTES``) so that the 100k ledger is read at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
RUBRIC = "rubric-v2"
EVENTS_PER_SESSION = 100
TIMESTAMPS = iter(f"2026-10-01T00:{m:02d}:00.000Z" for m in range(60))
#: Raised for every child: the 100k ledger's events file is about 1.8 GB.
FILE_CAP = str(16 << 30)
KAPPA_ITEMS = 1_000_000


@dataclass(frozen=True)
class Run:
    """One child process: wall and CPU seconds, peak RSS in MiB, what it printed."""

    wall: float
    cpu: float
    peak_mib: float
    out: str

    @property
    def seconds(self) -> float:
        """The child's own timing when it printed one (library calls), else its wall time."""
        try:
            return float(json.loads(self.out)["seconds"])
        except (ValueError, KeyError, TypeError):
            return self.wall


def _spawn(argv: list[str]) -> Run:
    """Run ``argv`` to its end: wall and CPU seconds, peak RSS (``wait4``), its stdout."""
    full_env = {**os.environ, "EVALKIT_MAX_FILE_BYTES": FILE_CAP}
    out_path = OUT / "child.out"
    err_path = OUT / "child.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=full_env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err_path.read_text()}")
    text = out_path.read_text()
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text.strip())


def _best(argv: list[str], repeats: int) -> Run:
    runs = [_spawn(argv) for _ in range(repeats)]
    best = min(runs, key=lambda r: r.seconds)
    # peak memory does not depend on the machine's load: the smallest seen is the figure
    return Run(best.wall, min(r.cpu for r in runs), min(r.peak_mib for r in runs), best.out)


def _evalkit(*argv: str) -> list[str]:
    return [sys.executable, "-m", "evalkit", *argv]


def _self(*argv: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", *argv]


# ----------------------------------------------------------------------------- children


def _child_floor(ledger: str) -> None:
    """Read both files' bytes and orjson.loads every line, the collector paused: the floor."""
    import gc

    import orjson

    gc.disable()
    t0 = time.perf_counter()
    values = []
    for name in ("sessions.jsonl", "events.jsonl"):
        for line in Path(ledger, name).read_bytes().split(b"\n"):
            if line.strip():
                with contextlib.suppress(orjson.JSONDecodeError):
                    values.append(orjson.loads(line))
    print(json.dumps({"seconds": time.perf_counter() - t0, "values": len(values)}))


def _child_score_ledger(ledger: str) -> None:
    from evalkit.scoring.engine import score_ledger

    t0 = time.perf_counter()
    frame = score_ledger(ledger, RUBRIC)
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "rows": len(frame)}))


def _child_kappa(which: str) -> None:
    """Time (best of 3) and peak traced memory of one kappa at 10^6 items."""
    import tracemalloc

    import numpy as np

    rng = np.random.default_rng(20261001)
    a = rng.integers(0, 3, KAPPA_ITEMS)
    b = np.where(rng.random(KAPPA_ITEMS) < 0.3, rng.integers(0, 3, KAPPA_ITEMS), a)
    if which == "sklearn":
        from sklearn.metrics import cohen_kappa_score

        def fn() -> float:
            return float(cohen_kappa_score(a, b))
    else:
        from evalkit.stats import cohen_kappa

        ratings = np.column_stack([a, b])

        def fn() -> float:
            return float(cohen_kappa(ratings).statistic)  # type: ignore[arg-type]

    value = fn()  # warm: imports and caches are not the figure
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"seconds": best, "peak": peak, "value": value}))


CHILDREN = {"floor": _child_floor, "score_ledger": _child_score_ledger, "kappa": _child_kappa}


# ---------------------------------------------------------------------------- the ledger


def _ledger(n_sessions: int) -> Path:
    """The generated ledger of ``n_sessions`` (made once, reused while the generator is the same)."""
    from evalkit.simulate import hostile_ledgers

    source = Path(hostile_ledgers.__file__).read_bytes()
    import hashlib

    stamp = hashlib.sha256(source).hexdigest()[:16]
    target = OUT / f"ledger-{n_sessions}"
    marker = target / ".generated"
    if marker.exists() and marker.read_text() == stamp:
        return target
    shutil.rmtree(target, ignore_errors=True)
    t0 = time.perf_counter()
    hostile_ledgers.generate_ledger(
        target, n_sessions=n_sessions, n_events=n_sessions * EVENTS_PER_SESSION
    )
    marker.write_text(stamp)
    size = sum(p.stat().st_size for p in target.glob("*.jsonl")) / 2**20
    print(f"generated {n_sessions} sessions in {time.perf_counter() - t0:.0f} s ({size:.0f} MiB)")
    return target


def _latest(journal: Path) -> dict[str, dict[str, Any]]:
    """Session id -> its latest record (:func:`evalkit.journal.latest_records`), parsed fast."""
    from evalkit.journal import latest_records

    with open(journal, encoding="utf-8") as fh:
        return latest_records(json.loads(line) for line in fh)


def _journal_argv(metrics: Path, journal: Path, *extra: str) -> list[str]:
    return _evalkit("score", "--all", "--journal", str(journal), "--metrics-dir", str(metrics),
                    "--no-progress", "--timestamp", next(TIMESTAMPS), "--out", os.devnull,
                    *extra)  # fmt: skip


def _journal_all(metrics: Path, journal: Path, *extra: str) -> Run:
    return _spawn(_journal_argv(metrics, journal, *extra))


def _target(ok: bool) -> str:
    return "met" if ok else "NOT met"


@dataclass(frozen=True)
class Paired:
    """A command run ``repeats`` times, each run right after a run of the floor.

    On a shared machine the speed drifts by tens of percent within minutes; a ratio of two
    runs made back to back is what the drift cannot bias, so the figure is the median of the
    pairs' ratios (wall and CPU), and ``last`` the command's last run.
    """

    wall_ratios: tuple[float, ...]
    cpu_ratios: tuple[float, ...]
    peak_mib: float
    last: Run

    @property
    def wall_ratio(self) -> float:
        """The median of the pairs' wall-time ratios."""
        return statistics.median(self.wall_ratios)

    @property
    def cpu_ratio(self) -> float:
        """The median of the pairs' CPU-time ratios."""
        return statistics.median(self.cpu_ratios)

    def line(self, name: str, target: float, floor_peak: float) -> str:
        ok = self.wall_ratio <= target and self.peak_mib <= floor_peak
        pairs = ", ".join(f"{r:.2f}" for r in self.wall_ratios)
        return (
            f"{name}: {self.last.wall:.2f} s (last run), peak {self.peak_mib:.0f} MiB: median "
            f"{self.wall_ratio:.2f}x wall, {self.cpu_ratio:.2f}x CPU the floor run just before "
            f"it (pairs: {pairs}), peak {self.peak_mib / floor_peak:.2f}x (target <= "
            f"{target}x, peak <= 1x: {_target(ok)})"
        )


def _paired(floor: list[str], command: Any, repeats: int) -> Paired:
    """``command()`` (the argv to run, made afresh each time) ``repeats`` times after the floor."""
    walls, cpus, peaks = [], [], []
    run = None
    for _ in range(repeats):
        base = _spawn(floor)
        run = _spawn(command())
        walls.append(run.seconds / base.seconds)
        cpus.append(run.cpu / base.cpu)
        peaks.append(run.peak_mib)
    assert run is not None
    return Paired(tuple(walls), tuple(cpus), min(peaks), run)


def _scale(n_sessions: int, repeats: int) -> None:
    ledger = _ledger(n_sessions)
    print(f"-- {n_sessions} sessions, {n_sessions * EVENTS_PER_SESSION} events --", flush=True)
    floor_argv = _self("floor", str(ledger))
    floor = _best(floor_argv, repeats)
    print(f"floor (read + orjson.loads every line): {floor.seconds:.2f} s, CPU {floor.cpu:.2f} s, "
          f"peak {floor.peak_mib:.0f} MiB (best of {repeats})", flush=True)  # fmt: skip
    batch = _paired(floor_argv, lambda: _self("score_ledger", str(ledger)), repeats)
    print(batch.line("score_ledger", 2.5, floor.peak_mib), flush=True)

    work = OUT / f"work-{n_sessions}"
    journal = work / "eval.jsonl"

    def fresh_journal_run() -> list[str]:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(ledger, work)
        return _journal_argv(work, journal)

    full = _paired(floor_argv, fresh_journal_run, repeats)
    print(full.line("score --all --journal", 3.5, floor.peak_mib), flush=True)
    verify_argv = _evalkit("verify", "--all", "--metrics-dir", str(work), "--no-progress",
                           "--format", "csv")  # fmt: skip
    verify = _paired(floor_argv, lambda: verify_argv, repeats)
    print(verify.line("verify --all", 4, floor.peak_mib), flush=True)
    _incremental(work, journal, full.last, n_sessions)


def _incremental(work: Path, journal: Path, full: Run, n_sessions: int) -> None:
    from evalkit.simulate import hostile_ledgers

    def rerun(what: str, target: bool) -> None:
        before = _latest(journal)
        run = _journal_all(work, journal)
        fresh = work / "rescored.jsonl"
        fresh.unlink(missing_ok=True)
        _journal_all(work, fresh, "--rescore")
        after, rescored = _latest(journal), _latest(fresh)
        changed = sum(1 for sid, rec in after.items() if before.get(sid) != rec)
        same = after == rescored
        fraction = run.wall / full.wall
        goal = f" (target <= 0.15: {_target(fraction <= 0.15 and same)})" if target else ""
        print(f"incremental, {what}: {run.wall:.2f} s = {fraction:.2f} of the full run "
              f"(CPU {run.cpu / full.cpu:.2f}); {changed} sessions' records changed; latest "
              f"records identical to a full rescore: {same}{goal}", flush=True)  # fmt: skip

    rerun("nothing new", True)
    hostile_ledgers.append_sessions(work, 10)
    rerun("10 sessions appended", True)
    n_late = n_sessions * EVENTS_PER_SESSION // 100
    hostile_ledgers.append_late_events(work, n_late, sessions=max(1, n_sessions // 100), seed=1)
    rerun(f"{n_late} events (1%) appended inside the windows of 1% of the sessions", True)
    hostile_ledgers.append_late_events(work, n_late, seed=2)
    rerun(f"{n_late} events (1%) appended inside windows of any session (no target)", False)


def _startup() -> None:
    bare = min((_spawn([sys.executable, "-c", "pass"]) for _ in range(7)), key=lambda r: r.wall)
    helped = min((_spawn(_evalkit("--help")) for _ in range(7)), key=lambda r: r.wall)
    ratio = helped.wall / bare.wall
    print(f"evalkit --help: {helped.wall * 1000:.0f} ms, python -c pass: {bare.wall * 1000:.0f} ms "
          f"(best of 7): {ratio:.1f}x (target <= 4x: {_target(ratio <= 4)})", flush=True)  # fmt: skip


def _kappa() -> None:
    ours = json.loads(_spawn(_self("kappa", "evalkit")).out)
    theirs = json.loads(_spawn(_self("kappa", "sklearn")).out)
    t, m = ours["seconds"] / theirs["seconds"], ours["peak"] / theirs["peak"]
    same = abs(ours["value"] - theirs["value"]) < 1e-12
    print(f"Cohen's kappa, {KAPPA_ITEMS} items, no interval: {ours['seconds'] * 1000:.0f} ms and "
          f"{ours['peak'] / 2**20:.0f} MiB traced vs scikit-learn {theirs['seconds'] * 1000:.0f} ms "
          f"and {theirs['peak'] / 2**20:.0f} MiB: {t:.2f}x time, {m:.2f}x memory, same value: "
          f"{same} (target <= 1.5x both: {_target(t <= 1.5 and m <= 1.5)})", flush=True)  # fmt: skip


def main() -> None:
    """Every figure of the module docstring, per size, then start-up and kappa."""
    OUT.mkdir(exist_ok=True)
    sizes = [int(s) for s in os.environ.get("EVALKIT_BENCH_SESSIONS", "20000").split(",")]
    for n in sizes:
        repeats = int(os.environ.get("EVALKIT_BENCH_REPEATS", "3" if n <= 20_000 else "1"))
        _scale(n, repeats)
    _startup()
    _kappa()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        CHILDREN[sys.argv[2]](*sys.argv[3:])
    else:
        main()
