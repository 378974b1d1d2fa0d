"""``evalkit judge``: the rule judge over a journal, and model judges over items (``judge run``).

``evalkit judge --rules`` writes long-format labels, one row per record: ``item_id,rater,label,
rule`` with ``item_id`` = run id, ``rater`` = ``rule-judge``, ``label`` = the verdict status and
``rule`` = the number of the deciding rule. A journal without a single valid record is a user
error (exit 1, nothing written; the skipped lines are listed on stderr).

``evalkit judge run`` runs model judges (``openai:MODEL``, ``anthropic:MODEL``, or
``replay:RUNLOG``) over every gold item or journal record, K times each, into an append-only,
resumable run log (:mod:`evalkit.judge.runner`, :mod:`evalkit.judge.runlog`). Its exit code is
0 when the calls it made got at least one reply (error outcomes are recorded in the log and a
rerun retries them), 1 on a user error or when every call it made failed, 2 when the log cannot
be written.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.cli.common import add_journal_source, journal_path, output_path, read_journal
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.escape import csv_text
from evalkit.files.output import write_output
from evalkit.judge.facts import compute_facts
from evalkit.judge.rules import apply_rules

RATER = "rule-judge"
COLUMNS = ("item_id", "rater", "label", "rule")


def register(subparsers: Any) -> None:
    """Add the ``judge`` subcommand (``--rules`` form) and its ``run`` subcommand."""
    parser = subparsers.add_parser(
        "judge",
        help=SUBCOMMANDS["judge"],
        description="Apply the rubric-v2 rule judge to every record of a journal and write "
        "long-format labels item_id,rater,label,rule (--rules). Exit 1 when the journal holds "
        "no valid record (nothing is written). `evalkit judge run --help`: model judges.",
    )
    parser.add_argument(
        "--rules", action="store_true", help="use the deterministic rule judge (required)"
    )
    add_journal_source(parser, "the journal file (eval.jsonl)")
    parser.add_argument("--out", default="-", help="output CSV file ('-' = stdout, the default)")
    parser.set_defaults(func=run)
    commands = parser.add_subparsers(dest="judge_command", metavar="{run}")
    from evalkit.cli.judge_run import register_run

    register_run(commands)


def rule_labels(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One long-format label row per record (journal order)."""
    rows = []
    for rec in records:
        verdict = apply_rules(compute_facts(rec.get("dimensions")))
        rows.append(
            {
                "item_id": rec.get("run_id"),
                "rater": RATER,
                "label": str(verdict.status),
                "rule": verdict.rule,
            }
        )
    return rows


def _csv_text(rows: list[dict[str, Any]]) -> str:
    r"""The CSV text: a cell that starts a formula neutralized, lone surrogates as ``\udXXX``."""
    return csv_text(COLUMNS, ([row[c] for c in COLUMNS] for row in rows))


def run(args: argparse.Namespace) -> int:
    """Write the labels; exit 1 on a user error."""
    if not args.rules:
        raise EvalkitError(
            "give --rules for the rule judge; model judges run with "
            "`evalkit judge run --judge SPEC` (see evalkit judge run --help)"
        )
    path = journal_path(args)
    out = (
        None
        if args.out == "-"
        else output_path(args.out, "--out", metrics_dirs=[path.parent], inputs=[path])
    )
    journal = read_journal(path)
    if not journal.records:
        skipped = len(journal.diagnostics)
        raise EvalkitError(
            f"{path}: no valid record to label ({skipped} line(s) skipped"
            + (", listed above" if skipped else ", the journal is empty")
            + "); nothing written"
        )
    rows = rule_labels(list(journal.records))
    text = _csv_text(rows)
    if out is None:
        sys.stdout.write(text)
    else:
        write_output(out, text, "--out")
        print(f"evalkit judge: {len(rows)} label(s) written to {args.out}", file=sys.stderr)
    return 0
