"""``evalkit journal``: list the records of a journal and summarize it.

Shows every valid record (line, run id, rubric version, deterministic statuses, and its judge
dimensions with their status and calibration), then the counts per rubric version, why each
judge is calibrated or not (one line per judge and dimension), the duplicate run ids with their
lines, every unreadable line with its reason, and the chain (where it starts, every line whose
link to the line before it does not hold). ``--json`` prints the same as one JSON object.
Exit 0 when the journal could be read (bad lines are reported, not fatal); 1 when there is no
journal.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from evalkit import journal
from evalkit.cli.common import accepted_calibrations, add_journal_source, journal_path
from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import EvalkitError
from evalkit.files.input import dumps, escape_surrogates

_SHORT = {"pass": "pass", "fail": "fail", "not-applicable": "n/a", "cannot-determine": "cd"}


def register(subparsers: Any) -> None:
    """Add the ``journal`` subcommand."""
    parser = subparsers.add_parser(
        "journal",
        help=SUBCOMMANDS["journal"],
        description="List the records of a journal and summarize it: counts per rubric "
        "version, duplicate run ids, unreadable lines.",
    )
    add_journal_source(parser, "the journal file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _statuses(record: dict[str, Any]) -> str:
    counts = Counter(d["status"] for d in record["dimensions"] if d["method"] == "deterministic")
    return " ".join(f"{_SHORT[s]}={counts[s]}" for s in _SHORT if counts[s])


def _judges(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in record["dimensions"] if d["method"] == "judge"]


def _judge_cell(record: dict[str, Any]) -> str:
    """``id=status (calibrated|uncalibrated)`` of each judge dimension."""
    return " ".join(
        f"{d['id']}={_SHORT.get(d['status'], d['status'])} "
        f"({'calibrated' if d['calibration_status'] != 'uncalibrated' else 'uncalibrated'})"
        for d in _judges(record)
    )


def _judge_name(dim: dict[str, Any]) -> str:
    block = dim.get("judge")
    if not isinstance(block, dict):
        return "(no judge recorded)"
    return f"{block.get('spec')} (model {block.get('model')}, K = {block.get('repeats')})"


def _reasons(records: list[dict[str, Any]], accepted: Any) -> dict[tuple[str, str, str], Any]:
    """(judge, dimension, status) -> [why, how many records] over every judge dimension."""
    out: dict[tuple[str, str, str], Any] = {}
    for rec in records:
        for dim in _judges(rec):
            key = (_judge_name(dim), dim["id"], dim["calibration_status"])
            if key not in out:
                out[key] = [accepted.explain(dim["id"], dim), 0]
            out[key][1] += 1
    return out


def summarize(read: Any) -> dict[str, Any]:
    """The JSON-ready summary of a ``JournalRead``."""
    return {
        "path": str(read.path),
        "records": len(read.records),
        "by_rubric_version": dict(
            sorted(Counter(r["rubric_version"] for r in read.records).items())
        ),
        "duplicates": {rid: list(lines) for rid, lines in read.duplicates.items()},
        "diagnostics": [
            {"line": d.line, "kind": d.kind.value, "reason": d.reason} for d in read.diagnostics
        ],
        "chain": {
            "started": read.chain.started,
            "unchained": list(read.chain.unchained),
            "breaks": [{"line": b.line, "reason": b.reason} for b in read.chain.breaks],
        },
    }


def run(args: argparse.Namespace) -> int:
    """``evalkit journal``: summarize the journal (records, duplicates, skipped lines)."""
    path = journal_path(args)
    accepted = accepted_calibrations()
    try:
        read = journal.read(path, accepted=accepted)
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no journal file there") from None
    summary = summarize(read)
    reasons = _reasons(list(read.records), accepted)
    if args.json:
        listing = [
            {
                "line": line,
                "run_id": rec["run_id"],
                "session_id": rec["session_id"],
                "rubric_version": rec["rubric_version"],
                "timestamp": rec["timestamp"],
                "dimensions": {d["id"]: d["status"] for d in rec["dimensions"]},
                "judge_dimensions": [
                    {
                        "id": d["id"],
                        "status": d["status"],
                        "calibration_status": d["calibration_status"],
                        "judge": _judge_name(d),
                        "calibration": reasons[(_judge_name(d), d["id"], d["calibration_status"])][
                            0
                        ],
                    }
                    for d in _judges(rec)
                ],
            }
            for line, rec in zip(read.line_numbers, read.records, strict=True)
        ]
        print(dumps({**summary, "entries": listing}))
        return 0

    rows = [("LINE", "RUN_ID", "RUBRIC", "DETERMINISTIC STATUSES", "JUDGE DIMENSIONS")]
    # a lone surrogate is shown as its escape, so the columns line up as printed
    rows += [
        (
            str(line),
            escape_surrogates(rec["run_id"]),
            rec["rubric_version"],
            _statuses(rec),
            _judge_cell(rec),
        )
        for line, rec in zip(read.line_numbers, read.records, strict=True)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join([*(row[i].ljust(widths[i]) for i in range(4)), row[4]]).rstrip())
    print()
    print(f"journal   {path}")
    print(f"records   {summary['records']}")
    by_version = ", ".join(f"{v}: {n}" for v, n in summary["by_rubric_version"].items())
    print(f"rubrics   {by_version or 'none'}")
    for (judge, dim_id, status), (why, count) in reasons.items():
        line = f"judge     {judge}: {dim_id} {status} ({count} record(s)): {why}"
        print(escape_surrogates(line))
    if read.duplicates:
        for rid, lines in read.duplicates.items():
            print(f"duplicate {rid} on lines {', '.join(map(str, lines))}")
    else:
        print("duplicates none")
    if read.diagnostics:
        for diag in read.diagnostics:
            print(f"skipped   {diag}")
    else:
        print("skipped   none")
    print(f"chain     {read.chain.summary()}")
    return 0
