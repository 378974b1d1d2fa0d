"""``evalkit facts``: print the rubric-v2 judge facts of one stored record as JSON.

``evalkit facts RUN_ID`` reads the journal (``--journal FILE``, else ``--metrics-dir``'s
``eval.jsonl``); ``evalkit facts --record FILE`` reads one record from a JSON file (``-`` is
stdin). The facts come from the record's dimensions alone (:func:`evalkit.compute_facts`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.common import add_journal, add_metrics_dir, journal_path, read_journal_records
from evalkit.errors import EvalkitError
from evalkit.facts import compute_facts


def register(subparsers: Any) -> None:
    """Add the ``facts`` subcommand."""
    parser = subparsers.add_parser(
        "facts",
        help="print the judge facts of a stored record as JSON",
        description="Print the rubric-v2 judge facts (computed from the record's dimension "
        "evidence) of one record as JSON.",
    )
    parser.add_argument("run_id", nargs="?", help="run id of a record in the journal")
    source = parser.add_mutually_exclusive_group()
    add_metrics_dir(source, "directory holding eval.jsonl", default=None)
    add_journal(source, "the journal file (eval.jsonl)")
    source.add_argument("--record", help="a JSON file holding one record ('-' for stdin)")
    parser.add_argument("--compact", action="store_true", help="print one line")
    parser.set_defaults(func=run)


def _load_record(spec: str) -> dict[str, Any]:
    name = "<stdin>" if spec == "-" else spec
    try:
        text = sys.stdin.read() if spec == "-" else Path(spec).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalkitError(f"{name}: no such file") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise EvalkitError(f"{name}: line {getattr(exc, 'lineno', 1)}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise EvalkitError(f"{name}: line 1: a record must be a JSON object")
    return value


def find_record(records: list[dict[str, Any]], run_id: str, path: Path) -> dict[str, Any]:
    """The record with ``run_id`` (the last one when the journal holds it twice)."""
    matches = [rec for rec in records if rec.get("run_id") == run_id]
    if not matches:
        raise EvalkitError(f"{path}: no record with run_id {run_id!r}")
    return matches[-1]


def run(args: argparse.Namespace) -> int:
    """Print the facts; exit 1 on a user error (unknown run id, bad file)."""
    if args.record is not None:
        if args.run_id is not None:
            raise EvalkitError("give either RUN_ID or --record, not both")
        record = _load_record(args.record)
    else:
        if args.run_id is None:
            raise EvalkitError("give a RUN_ID (or --record FILE)")
        path = journal_path(args)
        record = find_record(read_journal_records(path), args.run_id, path)
    facts = compute_facts(record.get("dimensions"))
    print(json.dumps(facts, ensure_ascii=False, indent=None if args.compact else 2))
    return 0
