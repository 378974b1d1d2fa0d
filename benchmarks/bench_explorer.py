"""Building the explorer for 5,000 sessions x 2 rubrics, as a ratio to reading the journal.

The ledger is bench_scoring's (5,000 sessions, 500,000 events), journaled under rubric-v1 and
rubric-v2 (10,000 records). In one run: reading the journal alone (the baseline, best of 3),
building the page without re-verifying (best of 2), and building it with every record
re-verified from the ledger (once), each as a ratio to the baseline; the page's size. Then, in
headless Chromium when there is one: redrawing the page for a filter, as a ratio to merely
parsing the page's data (both timed inside the page).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _best(fn: Callable[[], Any], times: int) -> tuple[float, Any]:
    runs = [_timed(fn) for _ in range(times)]
    return min(t for t, _ in runs), runs[-1][1]


#: The journal the issue sizes the explorer for: 5,000 sessions, each under two rubrics.
N_SESSIONS = 5_000
N_EVENTS = 500_000


def _bind_tests() -> None:
    """Bind the name ``tests`` to this repository's tests (for the browser driver)."""
    sys.path.insert(0, str(ROOT))
    import conftest  # noqa: F401 - binds the name "tests" to this repository's tests


_IN_PAGE = """new Promise(resolve => {
  const text = document.getElementById('explorer-data').textContent;
  const t0 = performance.now(); JSON.parse(text); const parse = performance.now() - t0;
  const out = {parse: parse, filters: []};
  const fragments = %s;
  const next = i => {
    if (i === fragments.length) { resolve(JSON.stringify(out)); return; }
    let t1 = 0;
    window.addEventListener('hashchange', () => {
      out.filters.push({fragment: fragments[i], ms: performance.now() - t1,
        rows: document.querySelectorAll('#record-table tr[data-run-id]').length});
      setTimeout(() => next(i + 1), 0);
    }, {once: true});
    t1 = performance.now();
    location.hash = fragments[i];
  };
  next(0);
})"""

_FRAGMENTS = [
    "rubric=rubric-v1&dimension=process-safety&status=fail",
    "q=session-4",
    "from=2026-07-10&to=2026-07-20&flag=contaminated",
    "",
]


def _browser(page: Path, tmp: Path) -> None:
    import shutil

    from tests.browser import DevTools, open_page  # importable once _bind_tests ran

    binary = next(
        (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
    )
    if binary is None:
        print("browser: no chromium on PATH; the in-page timings are skipped")
        return
    with DevTools(binary, tmp / "profile") as tools:
        info = open_page(tools, page, _IN_PAGE % json.dumps(_FRAGMENTS))
    got = info["extra"]
    parse = got["parse"]
    print(f"in Chromium: parsing the page's data {parse:.0f} ms (the baseline)")
    for f in got["filters"]:
        print(
            f"  redraw for #{f['fragment'] or '(no filter)'}: {f['ms'] / parse:.2f}x the parse "
            f"({f['rows']} rows drawn)"
        )


def main() -> None:
    """Generate and journal the ledger, then time the explorer against reading the journal."""
    from evalkit import journal
    from evalkit.calibration.calibrations import repository_calibrations
    from evalkit.cli.main import main as cli
    from evalkit.verify.rescore import verify_journal
    from evalkit.views.explorer import ExplorerSource, build_explorer

    _bind_tests()
    from evalkit.simulate import hostile_ledgers

    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
        metrics = Path(tmp) / "metrics"
        seconds, _ = _timed(
            lambda: hostile_ledgers.generate_ledger(
                metrics, n_sessions=N_SESSIONS, n_events=N_EVENTS
            )
        )
        for rubric in ("rubric-v1", "rubric-v2"):
            argv = [
                "score",
                "--all",
                "--journal",
                "--metrics-dir",
                str(metrics),
                "--rubric",
                rubric,
            ]
            # the ledger's seeded bad lines and one whitespace-only session id are reported
            # (exit 1); the table and that report are not this benchmark's output
            quiet = io.StringIO()
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                assert cli([*argv, "--no-progress"]) in (0, 1)
        path = metrics / "eval.jsonl"
        accepted = repository_calibrations()
        read_s, read = _best(lambda: journal.read(path, accepted=accepted), 3)
        sessions = len({r["session_id"] for r in read.records})
        print(
            f"generated {N_SESSIONS} sessions / {N_EVENTS} events in {seconds:.1f} s; "
            f"journal: {len(read.records)} records of {sessions} sessions under two rubrics; "
            f"reading it (validated, seals checked): {read_s:.2f} s (best of 3, the baseline)"
        )
        source = [ExplorerSource.of_metrics_dir(metrics)]
        build_s, page = _best(lambda: build_explorer(source, verify=False, accepted=accepted), 2)
        size = len(page.encode("utf-8"))
        print(
            f"build the explorer without re-verifying: {build_s / read_s:.2f}x reading the journal "
            f"(best of 2); page {size / 1e6:.1f} MB ({size / (20 * 1024 * 1024):.0%} of 20 MiB)"
        )
        verify_s, _ = _timed(lambda: verify_journal(path, metrics, accepted=accepted))
        full_s, page = _timed(lambda: build_explorer(source, verify=True, accepted=accepted))
        print(
            f"build it re-verifying every record from the ledger: {full_s / read_s:.2f}x reading "
            f"the journal (verify --all alone, timed apart: {verify_s / read_s:.2f}x)"
        )
        out = Path(tmp) / "explorer.html"
        out.write_text(page, encoding="utf-8")
        _browser(out, Path(tmp))


if __name__ == "__main__":
    main()
