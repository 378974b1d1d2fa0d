"""``evalkit verify RUN_ID``: re-score a stored record offline and compare it byte for byte.

The first line says the outcome and, for a drift, whether a verdict changed; then one line per
difference, classified (verdict, score, kpi, evidence values, evidence wording, order,
identity, extra or missing key, judge contract, duplicate, form); then what verify cannot
re-derive (the run inputs it takes from the record). The rule is in :mod:`evalkit.verify`.

Exit codes: 0 agreement; 1 any difference, or a user error such as an unknown run id or a line
with this run id that is not a valid record; 3 version mismatch (unknown rubric version, or a
rubric text whose sha256 differs from the stored one; both hashes are printed). Findings go to
stdout. A run id holding a lone surrogate may be given as evalkit prints it (``\\ud800``).
"""

from __future__ import annotations

import argparse
from typing import Any

from evalkit.cli.common import accepted_calibrations, add_journal, add_metrics_dir
from evalkit.input_files import dumps


def register(subparsers: Any) -> None:
    """Add the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help="re-score a stored record offline and compare it dimension by dimension",
        description="Re-score the stored record RUN_ID from the same ledger with its stored "
        "run inputs (timestamp, model, handle, harness) and compare the record the engine "
        "writes with the stored line, byte for byte: every key, value and order. Judge "
        "dimensions are advisory: checked against the judge contract, not re-scored. Exit 0 "
        "agreement, 1 any difference, 3 version mismatch.",
    )
    parser.add_argument("run_id", metavar="RUN_ID", help="run id of a record in the journal")
    add_metrics_dir(parser, "the metrics directory to re-score from")
    add_journal(parser)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.verify import verify_record  # deferred: verify loads the engine (numpy)

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
