"""``evalkit explore``: one self-contained, offline HTML file to explore a journal (or a fleet's).

Every record of the journal (every rubric version in it) in a table that filters by rubric,
dimension, status, session date, session id and flags, with the rates of the filtered set; a
page per record with the same session under the other rubric version beside it; fire rates
over time. The page is :func:`evalkit.views.explorer.render_explorer`; its use is in
``docs/EXPLORER.md``. Each record is re-verified from its ledger while the page is built
(``--no-verify`` skips it; a progress bar on stderr). Exit codes: 0 the page was written; 1 no
journal to read (a fleet: no member has one), a bad argument or fleet spec; 2 the page could not
be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.common import (
    DEFAULT_METRICS_DIR,
    accepted_calibrations,
    output_path,
    progress_bar,
)
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.output import write_output
from evalkit.journal.reader import JOURNAL_NAME

EPILOG = """examples:
  evalkit explore --metrics-dir .orchestrator/metrics --out explorer.html
  evalkit explore --fleet 'repos/*/.orchestrator/metrics' --out fleet.html
  then open explorer.html#rubric=rubric-v1&dimension=process-safety&status=fail
  or explorer.html#run=RUN_ID (one record)

exit codes: 0 the page was written; 1 no journal to read (with --fleet: no directory has
one; those without are left out and named on stderr), a bad argument or fleet spec, an --out
no output flag writes (a journal or ledger file, gold/, calibrations/, a link; docs/CLI.md);
2 the page could not be written (the old file, if any, is left as it was).
"""


def register(subparsers: Any) -> None:
    """Add the ``explore`` subcommand."""
    parser = subparsers.add_parser(
        "explore",
        help=SUBCOMMANDS["explore"],
        description=(
            "Write one self-contained HTML file (no network, opens from disk) holding every\n"
            "record of the journal: a table that filters by rubric, dimension, status, session\n"
            "date, session id and flags, with counts, rates and Wilson intervals of the filtered\n"
            "set; each record's page with its evidence, KPIs, facts, judge dimensions, verify\n"
            "state and the same session under the other rubric version, flips highlighted; fire\n"
            "rates over time. The view's state is in the URL fragment, so a view can be shared."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--metrics-dir",
        type=Path,
        help=f"the metrics directory holding {JOURNAL_NAME} and its ledger "
        f"(default {DEFAULT_METRICS_DIR})",
    )
    where.add_argument(
        "--fleet",
        metavar="GLOB|FILE|DIR",
        help="every metrics directory of a fleet (a glob, a file listing one per line, or one "
        "directory), each with its own journal",
    )
    parser.add_argument(
        "--journal",
        type=Path,
        help=f"the journal file (default <metrics-dir>/{JOURNAL_NAME}); the metrics directory "
        "still gives session dates and the ledger to verify from",
    )
    parser.add_argument("--out", type=Path, help="the HTML file to write (default stdout)")
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="do not re-verify the records from their ledger while building (faster; the page "
        "says they were not verified)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def _sources(args: argparse.Namespace) -> list[Any]:
    from evalkit.fleet.paths import resolve_fleet
    from evalkit.views.explorer_data import ExplorerSource

    if args.fleet is not None:
        if args.journal is not None:
            raise EvalkitError(
                "--journal names one journal; with --fleet each directory has its own"
            )
        found: list[ExplorerSource] = []
        missing: list[ExplorerSource] = []
        for directory in resolve_fleet(args.fleet):
            source = ExplorerSource.of_metrics_dir(directory)
            (found if source.journal.is_file() else missing).append(source)
        for source in missing:
            print(
                f"evalkit explore: {source.journal}: no journal file there; left out",
                file=sys.stderr,
            )
        if not found:
            raise EvalkitError(f"--fleet {args.fleet}: no directory holds a {JOURNAL_NAME}")
        return found
    metrics_dir = args.metrics_dir or DEFAULT_METRICS_DIR
    journal = args.journal or metrics_dir / JOURNAL_NAME
    if not journal.is_file():
        raise EvalkitError(f"{journal}: no journal file there")
    return [ExplorerSource(str(metrics_dir), journal, metrics_dir)]


def run(args: argparse.Namespace) -> int:
    """Build the explorer page and write it; exit 1 when there is no journal to read."""
    from evalkit.views.explorer import build_explorer  # deferred: loads the engine

    sources = _sources(args)
    out = None
    if args.out is not None:  # before any work: never a journal, a ledger, gold/, a link, ...
        out = output_path(
            args.out,
            "--out",
            metrics_dirs=[d for s in sources for d in (s.metrics_dir, s.journal.parent) if d],
            inputs=[s.journal for s in sources],
        )

    def noted(source: Any, read: Any) -> None:
        for diag in read.diagnostics:
            print(f"evalkit explore: {source.journal}: {diag}", file=sys.stderr)

    progress = progress_bar("explore: verify", "record", disable=args.no_progress)
    page = build_explorer(
        sources,
        verify=not args.no_verify,
        accepted=accepted_calibrations(),
        progress=progress,
        on_read=noted,
    )
    if out is None:
        sys.stdout.write(page)
    else:
        write_output(out, page, "--out")
        size = out.stat().st_size
        print(f"evalkit explore: wrote {out} ({size / 1e6:.1f} MB)", file=sys.stderr)
    return 0
