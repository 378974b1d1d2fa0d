"""Benchmark: ``evalkit monitor`` over a 5,000-session journal and ``confidence_sequence`` over
10^6 outcomes, each as a ratio against a baseline measured in the same run.

* ``monitor(metrics_dir)`` (every check's band, with the ledger's measurability profile)
  against reading the same journal alone (``read_journal``: parse, validate, seal check).
* ``confidence_sequence`` over 10^6 outcomes against the fixed-n Wilson interval at every
  prefix of the same stream (vectorized numpy: what peeking would compute), and its cost per
  outcome against reading one journal record.

The journal is a seeded synthetic ledger of 5,000 sessions (``simulate_metrics_dir``)
journaled in one batch under rubric-v2; building it takes a few minutes and is not timed.
The machine is shared, so both sides are timed in interleaved pairs and the medians compared,
by wall clock and by process CPU time; no absolute threshold is asserted anywhere.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

N_SESSIONS = 5000
N_OUTCOMES = 1_000_000
PAIRS = 3  # interleaved pairs per comparison (a monitor run takes tens of seconds)


def _timed(fn: Any) -> tuple[float, float, Any]:
    """(wall seconds, process CPU seconds, result) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def _pairs(ours: Any, baseline: Any) -> dict[str, float]:
    """Median wall and CPU times of interleaved (ours, baseline) pairs, and the ratios."""
    wall_o, cpu_o, wall_b, cpu_b, ratios = [], [], [], [], []
    for _ in range(PAIRS):
        w, c, _ = _timed(ours)
        wb, cb, _ = _timed(baseline)
        wall_o.append(w)
        cpu_o.append(c)
        wall_b.append(wb)
        cpu_b.append(cb)
        ratios.append(w / wb)
    return {
        "ours_wall": statistics.median(wall_o),
        "base_wall": statistics.median(wall_b),
        "ratio_wall": statistics.median(wall_o) / statistics.median(wall_b),
        "ratio_cpu": statistics.median(cpu_o) / statistics.median(cpu_b),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }


def _journal(root: Path) -> Path:
    from evalkit.journal.batch import journal_ledger
    from evalkit.simulate import simulate_metrics_dir

    metrics = root / "metrics"
    simulate_metrics_dir(metrics, n_sessions=N_SESSIONS, seed=22, score=False)
    journal_ledger(
        metrics, metrics / "eval.jsonl", "rubric-v2", timestamp="2026-12-01T00:00:00.000Z"
    )
    return metrics


def _wilson_every_prefix(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import norm

    z = float(norm.isf(0.025))
    n = np.arange(1, x.size + 1, dtype=float)
    p = np.cumsum(x) / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def main() -> None:
    from evalkit.analyses._journal import read_journal
    from evalkit.analyses.monitor import monitor
    from evalkit.stats import confidence_sequence

    with tempfile.TemporaryDirectory(prefix="evalkit-bench-monitor-") as tmp:
        t0 = time.perf_counter()
        metrics = _journal(Path(tmp))
        print(f"built a {N_SESSIONS}-session ledger and journal in {time.perf_counter() - t0:.0f}s")
        journal = metrics / "eval.jsonl"
        report = monitor(metrics)  # warm-up (imports, first-call overhead)
        records = len(read_journal(journal).records)
        mon = _pairs(lambda: monitor(metrics), lambda: read_journal(journal))
        print(
            f"monitor over {records} records ({len(report.bands)} checks): "
            f"{mon['ratio_wall']:.2f}x reading the journal alone by wall clock "
            f"({mon['ours_wall']:.1f}s vs {mon['base_wall']:.1f}s; per-pair "
            f"{mon['ratio_min']:.2f}-{mon['ratio_max']:.2f}x), {mon['ratio_cpu']:.2f}x by CPU time"
        )
        read_per_record = mon["base_wall"] / records

    x = np.random.default_rng(20261201).random(N_OUTCOMES) < 0.1
    confidence_sequence(x[:1000])  # warm-up
    cs = _pairs(lambda: confidence_sequence(x), lambda: _wilson_every_prefix(x))
    per_outcome = cs["ours_wall"] / N_OUTCOMES
    print(
        f"confidence_sequence over {N_OUTCOMES:,} outcomes: {cs['ratio_wall']:.1f}x the fixed-n "
        f"Wilson interval at every prefix by wall clock ({cs['ours_wall']:.2f}s vs "
        f"{cs['base_wall']:.3f}s; per-pair {cs['ratio_min']:.1f}-{cs['ratio_max']:.1f}x), "
        f"{cs['ratio_cpu']:.1f}x by CPU time; per outcome {per_outcome / read_per_record:.4f}x "
        "the cost of reading one journal record"
    )
    print("(a shared machine: ratios within this run only)")


if __name__ == "__main__":
    main()
