r"""``evalkit verify RUN_ID`` / ``evalkit verify --all``: re-score and compare offline.

The stored records are re-scored and compared byte for byte. One record: the first line says
the outcome and, for a drift, whether a verdict changed; then one line per difference,
classified (verdict, score, kpi, evidence values, evidence wording, order, identity, seal,
inputs, extra or missing key, judge contract, duplicate, form); then what verify cannot
re-derive (the run inputs it takes from the record, bound by its seal). The rule is in
:mod:`evalkit.verify.rescore`.

``--all``: every record of the journal in one pass over the ledger
(:func:`evalkit.verify.rescore.verify_journal`): a table run_id -> agreement / drift (what differs) /
version mismatch / error, as text (default), ``--format csv`` or ``--format jsonl`` (one JSON
object per entry, the full result in it); a progress bar and the counts go to stderr.

Exit codes: 0 agreement (``--all``: every record agrees); 1 any difference, or a user error
such as an unknown run id or a line with this run id that is not a valid record (``--all``:
any drift, error or unreadable line); 3 version mismatch (``--all``: the only findings are
version mismatches). A run id holding a lone surrogate may be given as evalkit prints it
(``\ud800``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.cli.common import accepted_calibrations, add_journal, add_metrics_dir, progress_bar
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.escape import csv_text
from evalkit.files.input import dumps, escape_surrogates

FORMATS = ("table", "csv", "jsonl")


def register(subparsers: Any) -> None:
    """Add the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help=SUBCOMMANDS["verify"],
        description="Re-score the stored record RUN_ID (or, with --all, every record of the "
        "journal in one pass over the ledger) from the same ledger with its stored run inputs "
        "(timestamp, model, handle, harness) and compare the record the engine writes with "
        "the stored line, byte for byte: every key, value and order. Judge dimensions are "
        "advisory: checked against the judge contract, not re-scored. Exit 0 agreement, 1 any "
        "difference, 3 version mismatch.",
    )
    parser.add_argument(
        "run_id", metavar="RUN_ID", nargs="?", help="run id of a record in the journal"
    )
    parser.add_argument(
        "--all", action="store_true", help="verify every record of the journal (one pass)"
    )
    add_metrics_dir(parser, "the metrics directory to re-score from")
    add_journal(parser)
    parser.add_argument("--json", action="store_true", help="one record: print one JSON object")
    parser.add_argument(
        "--format", choices=FORMATS, help="--all: table (default), csv or jsonl on stdout"
    )
    parser.add_argument("--no-progress", action="store_true", help="--all: no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``evalkit verify``: one record (RUN_ID) or the whole journal (``--all``)."""
    if args.all == (args.run_id is not None):
        raise EvalkitError("give either RUN_ID or --all")
    if args.all:
        if args.json:
            raise EvalkitError("--json is for one record; with --all use --format jsonl")
        return _run_all(args)
    if args.format is not None:
        raise EvalkitError("--format only applies to --all (one record: --json)")
    # deferred: verify loads the engine (numpy); every command imports this module
    from evalkit.verify.rescore import verify_record

    result = verify_record(
        args.run_id,
        args.metrics_dir,
        journal_path=args.journal,
        accepted=accepted_calibrations(),
    )
    if args.json:
        print(dumps(result.to_dict()))
    else:
        for line in result.lines():
            print(line)
    return result.exit_code


def _run_all(args: argparse.Namespace) -> int:
    # deferred: verify loads the engine (numpy), which `verify RUN_ID --help` does not need
    from evalkit.verify.rescore import verify_journal

    progress = progress_bar("verify --all", "record", disable=args.no_progress)
    found = verify_journal(
        args.journal, args.metrics_dir, accepted=accepted_calibrations(), progress=progress
    )
    fmt = args.format or "table"
    if fmt == "jsonl":
        for entry in found.entries:
            print(dumps(entry.to_dict()))
    elif fmt == "csv":
        fields = ["line", "run_id", "session_id", "outcome", "exit_code", "what_differs"]
        rows = ([entry.row()[f] for f in fields] for entry in found.entries)
        sys.stdout.write(csv_text(fields, rows))  # a cell that starts a formula is neutralized
    else:
        _print_table(found.entries)
    counts = ", ".join(f"{n} {outcome}" for outcome, n in found.counts().items() if n)
    print(
        f"evalkit verify: {found.journal}: {len(found.entries)} entr(y/ies): {counts or 'none'}; "
        f"exit {found.exit_code}",
        file=sys.stderr,
    )
    return found.exit_code


def _print_table(entries: Any) -> None:
    rows = [("LINE", "RUN_ID", "OUTCOME", "WHAT DIFFERS")]
    rows += [
        (str(e.line), escape_surrogates(e.run_id or "-"), e.outcome.value, e.summary())
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]).rstrip())
