"""``evalkit report RUN_ID``: render one journal record as a self-contained HTML file.

The journal is read through :func:`evalkit.journal.reader.read` (regular files only, bounded, every
bad line a diagnostic); text a UTF-8 page cannot hold (a lone surrogate) is written escaped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.common import (
    accepted_calibrations,
    add_journal,
    add_metrics_dir,
    journal_path,
    output_path,
)
from evalkit.cli.main import SUBCOMMANDS
from evalkit.files.input import escape_surrogates
from evalkit.files.output import write_output
from evalkit.views.report import render_report


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report",
        help=SUBCOMMANDS["report"],
        description="Render the stored record RUN_ID as one self-contained HTML file (no "
        "network request, no script): provenance, KPIs, every dimension with its evidence, "
        "the advisory judge dimensions apart, the re-verify command and what it does not prove.",
    )
    parser.add_argument("run_id", metavar="RUN_ID", help="run id of a record in the journal")
    add_metrics_dir(parser, "the metrics directory holding eval.jsonl")
    add_journal(parser)
    parser.add_argument("--out", type=Path, help="the HTML file to write (default stdout)")
    parser.set_defaults(func=run)


def _reverified(args: argparse.Namespace, accepted: Any) -> str | None:
    """Why the record does not re-verify from ``--metrics-dir`` (None: it agrees)."""
    from evalkit.errors import EvalkitError
    from evalkit.verify.rescore import verify_record

    try:
        result = verify_record(args.run_id, args.metrics_dir, journal_path(args), accepted=accepted)
    except EvalkitError as exc:  # no ledger, a session it no longer resolves
        return f"it cannot be re-scored: {exc}"
    return None if result.ok else result.headline()


def run(args: argparse.Namespace) -> int:
    """Write the report of one record; exit 1 on a user error (unknown run id, bad journal)."""
    from evalkit.verify.rescore import find_record  # deferred: verify loads the engine (numpy)

    out = None
    if args.out is not None:  # before any work: a place no output flag writes is refused
        journal = journal_path(args)
        out = output_path(
            args.out, "--out", metrics_dirs=[args.metrics_dir, journal.parent], inputs=[journal]
        )
    accepted = accepted_calibrations()
    record, notes = find_record(args.run_id, journal_path(args), accepted=accepted)
    for note in notes:
        print(f"evalkit report: note: {note}", file=sys.stderr)
    verification = _reverified(args, accepted)
    if verification is not None:
        print(f"evalkit report: warning: not verified: {verification}", file=sys.stderr)
    # a lone surrogate (legal in a JSON string) is shown as its escape, never a crash
    page = escape_surrogates(
        render_report(
            record, metrics_dir=args.metrics_dir, accepted=accepted, verification=verification
        )
    )
    if out is None:
        sys.stdout.write(page)
    else:
        write_output(out, page, "--out")
        print(f"evalkit report: wrote {out}", file=sys.stderr)
    return 0
