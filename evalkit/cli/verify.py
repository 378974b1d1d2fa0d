"""``evalkit verify RUN_ID``: re-score a stored record offline and compare it.

Exit codes: 0 agreement; 1 drift (one line per differing field, naming the dimension), or a
user error such as an unknown run id; 3 version mismatch (unknown rubric version, or a rubric
text whose sha256 differs from the stored one; both hashes are printed). Findings go to stdout.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalkit.cli.common import accepted_calibrations, add_journal, add_metrics_dir


def register(subparsers: Any) -> None:
    """Add the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help="re-score a stored record offline and compare it dimension by dimension",
        description="Re-score the stored record RUN_ID from the same ledger with its stored "
        "timestamp, model, handle and harness, and compare every deterministic dimension "
        "(status, score, the facts its evidence carries). Judge dimensions are advisory and "
        "not verified. Exit 0 agreement, 1 drift, 3 version mismatch.",
    )
    parser.add_argument("run_id", metavar="RUN_ID", help="run id of a record in the journal")
    add_metrics_dir(parser, "the metrics directory to re-score from")
    add_journal(parser)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.verify import verify_record

    result = verify_record(
        args.run_id,
        args.metrics_dir,
        journal_path=args.journal,
        accepted=accepted_calibrations(),
    )
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        for line in result.lines():
            print(line)
    return result.exit_code
