"""``evalkit demo [--out reports]``: build the default data, run every study, index them."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from evalkit.analyses.landing import render_index
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.output import write_output
from evalkit.studies import run as studies

# Parameters the demo passes per study: only data inputs. Every design parameter keeps its
# pre-registered value (the notebook default the lock froze), so each study page shows the run
# as pre-registered; a smaller bootstrap here would be a deviation from the lock.
_DEMO_PARAMS: dict[str, dict[str, Any]] = {
    "rubric-replay": {},
    "threshold-study": {},
    "agreement-study": {},
    "judge-calibration": {},
    "prevalence-study": {},
    "monitor": {},
}


def register(subparsers: Any) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help=SUBCOMMANDS["demo"],
        description="Build the preset rubric-v2-2026-09-19 into a work directory, run every "
        "study on it, and write reports/<study>/index.html + results.json and reports/index.html.",
    )
    parser.add_argument("--out", default="reports", metavar="DIR", help="output directory")
    parser.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    parser.set_defaults(func=_run)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


_DATA_DIR = "_default-data"
_MARKER = ".evalkit-simulated"


def _fresh_data_dir(out: Path) -> Path:
    """``<out>/_default-data/metrics``, emptied first only if evalkit wrote it (marker file).

    The default data stay beside the reports (the journal is the truth; reports are views),
    and a fixed path keeps results.json identical across reruns.
    """
    root = out / _DATA_DIR
    if root.exists():
        if not (root / _MARKER).is_file():
            raise EvalkitError(f"{root} exists and was not written by evalkit demo; move it away")
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / _MARKER).write_text(
        "written by `evalkit demo`; rebuilt on every run\n", encoding="utf-8"
    )
    return (root / "metrics").resolve()


def run_demo(out: Path, timeout: int = 600) -> list[dict[str, Any]]:
    """Run the demo; returns one summary row per study.

    Without the ``studies`` extra it refuses before building or writing anything, once
    (``MissingExtraError`` naming the extra), rather than once per study.
    """
    from evalkit.extras import require
    from evalkit.simulate import PRESET_RUBRIC_V2, build_preset  # deferred: loads numpy

    # what run_study requires of every study: every study would refuse alike
    require(*studies._KERNEL_STACK, purpose="evalkit demo (it runs every study)")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    t0 = time.monotonic()
    data = _fresh_data_dir(out)
    _say(f"[demo] building preset {PRESET_RUBRIC_V2} into {data} ...")
    ledger = build_preset(data)
    _say(
        f"[demo] preset built: {len(ledger.session_ids)} sessions, {ledger.records} records "
        f"({time.monotonic() - t0:.1f}s)"
    )
    for name in studies.STUDIES:
        try:
            declared = studies.declared_parameters(name)
        except Exception as exc:  # a missing or broken notebook is that study's failure
            rows.append({"study": name, "status": "failed", "error": str(exc), "seconds": 0.0})
            _say(f"[demo] {name}: cannot read its parameters: {exc}")
            continue
        wanted = dict(_DEMO_PARAMS.get(name, {}), metrics_dir=str(ledger.metrics_dir))
        params = {k: v for k, v in wanted.items() if k in declared}
        t1 = time.monotonic()
        try:
            run = studies.run_study(
                name, params, out_dir=out / name, timeout=timeout, progress=_say
            )
            status, error = run.status.value, run.error
        except Exception as exc:  # one broken study must not hide the others
            status, error = "failed", f"{type(exc).__name__}: {exc}"
            _say(f"[demo] {name}: could not run: {error}")
        rows.append(
            {
                "study": name,
                "status": status,
                "error": error,
                "seconds": round(time.monotonic() - t1, 1),
            }
        )
    write_output(out / "index.html", render_index(rows, out), "demo index")
    return rows


def _run(args: argparse.Namespace) -> int:
    from evalkit.cli.common import output_path

    output_path(Path(args.out) / "index.html", "--out")  # before any work
    t0 = time.monotonic()
    rows = run_demo(Path(args.out), timeout=args.timeout)
    failed = [r["study"] for r in rows if r["status"] != "ok"]
    _say(
        f"[demo] wrote {Path(args.out) / 'index.html'}: {len(rows) - len(failed)} ok, "
        f"{len(failed)} failed ({time.monotonic() - t0:.1f}s)"
    )
    if failed:
        _say(f"[demo] failed: {', '.join(failed)}")
        return 1
    return 0
