"""``evalkit facts``: print the rubric-v2 judge facts of one stored record as JSON.

``evalkit facts RUN_ID`` reads the journal (``--journal FILE``, else ``--metrics-dir``'s
``eval.jsonl``); ``evalkit facts --record FILE`` reads one record from a JSON file (``-`` is
stdin). The facts come from the record's dimensions alone (:func:`evalkit.compute_facts`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.common import add_journal, add_metrics_dir, journal_path, read_journal
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.input import JsonInputError, dumps, parse_json, read_bytes, read_stream
from evalkit.journal.reader import MAX_RECORD_DEPTH, JournalRead
from evalkit.judge.facts import compute_facts


def register(subparsers: Any) -> None:
    """Add the ``facts`` subcommand."""
    parser = subparsers.add_parser(
        "facts",
        help=SUBCOMMANDS["facts"],
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
    """The record in the file ``spec`` (``-``: stdin), read through ``input_files``.

    A regular file only (a FIFO or device is refused, never waited on), bounded, strict UTF-8
    and JSON, nesting no deeper than a record can.
    """
    name = "<stdin>" if spec == "-" else spec
    data = read_stream(sys.stdin, "record") if spec == "-" else read_bytes(spec, "record file")
    try:
        value = parse_json(data.removeprefix(b"\xef\xbb\xbf"), max_depth=MAX_RECORD_DEPTH)
    except JsonInputError as exc:
        raise EvalkitError(f"{name}: line {exc.line or 1}: {exc}") from None
    if not isinstance(value, dict):
        raise EvalkitError(f"{name}: line 1: a record must be a JSON object")
    return value


def find_record(read: JournalRead, run_id: str, path: Path) -> dict[str, Any]:
    """The record with ``run_id`` (the last one when the journal holds it twice).

    A lone surrogate may be given as evalkit prints it, see :meth:`JournalRead.find`.
    """
    matches = read.find(run_id)
    if not matches:
        raise EvalkitError(f"{path}: {read.missing(run_id)}")
    return matches[-1][1]


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
        record = find_record(read_journal(path), args.run_id, path)
    facts = compute_facts(record.get("dimensions"))
    print(dumps(facts, indent=None if args.compact else 2))
    return 0
