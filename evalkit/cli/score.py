"""``evalkit score``: score one session (and journal it), or ``--all`` sessions into a table.

With ``--all`` and ``--journal`` the records go into the journal too
(:mod:`evalkit.cli.score_all`); with ``--all --fleet`` every metrics directory of a fleet is
scored, serially or on Dask, and with ``--journal-each`` each into its own journal
(:mod:`evalkit.cli.score_fleet`).

One session: the record goes to stdout (a compact dimension table, or with ``--json`` one JSON
line) and is appended to the journal unless ``--no-write``. A record that could not be
appended is still printed; the exit code (2) says so, e.g. when the journal's directory does
not exist (it is never created: a mistyped ``--journal`` must not start a second journal).
An append is all-or-nothing (:func:`evalkit.journal.reader.append`); the message says what is on
disk. ``--journal`` may not name a file of the ledger (``sessions.jsonl``, ``events.jsonl``,
its archives and ring), compared by resolved path and inode.

What the ledger reading skipped or doubted (file:line: reason) goes to stderr: the first
:data:`DIAGNOSTICS_SHOWN` always, every one with ``--diagnostics``/``-v``. A session that cannot
be resolved names ``sessions.jsonl``'s path and state (missing, a directory, a FIFO, a
dangling symlink, empty).

Text arguments (``--session``, ``--model-id``, ``--handle``, ``--timestamp``) must be valid
UTF-8: bytes the shell passed that are not (Python decodes them as lone surrogates) are refused
with exit 1 before anything is scored or written. They would otherwise become a permanent
identity field no UTF-8 tool can show or match; refusing is reversible, storing is not.

With ``--judge SPEC`` (and a journal) every record gets the judge dimensions of its rubric,
each naming its judge, its calls in the run log (``--judge-log``, default beside the journal)
and its calibration status (:mod:`evalkit.judge.record_judge`); the call parameters are those
of ``judge run``. Deterministic records without ``--judge`` are unchanged, byte for byte.

Exit codes: 0 scored; 1 user error (bad argument, no session resolvable, a run log held by
another run); 2 evaluation or I/O failure (also: not appended); 4 with ``--judge``: a record
held back because its judge calls did not all get an answer (the same command retries them).
``--fleet`` has its own (:mod:`evalkit.cli.score_fleet`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit import journal
from evalkit.cli import score_all, score_fleet
from evalkit.cli.common import (
    DEFAULT_METRICS_DIR,
    DIAGNOSTICS_SHOWN,
    add_metrics_dir,
    journal_path,
    output_path,
    print_diagnostics,
    require_text,
)
from evalkit.cli.main import SUBCOMMANDS
from evalkit.cli.score_all import err, text_table
from evalkit.errors import EvalkitError, SessionResolutionError, ValidationError
from evalkit.fleet.score import SCHEDULER_TRUST
from evalkit.journal.reader import dumps_record
from evalkit.ledger.files import describe_sessions_file, ledger_role
from evalkit.record.contract import ModelSource, validate_timestamp
from evalkit.rubrics import RUBRIC_VERSIONS

FORMATS = score_all.FORMATS
_TEXT_ARGUMENTS = (
    ("--session", "session"),
    ("--model-id", "model_id"),
    ("--handle", "handle"),
    ("--timestamp", "timestamp"),
)
MODEL_SOURCES = tuple(source.value for source in ModelSource)

_FLEET_EPILOG = """\
a fleet (--all --fleet):
  evalkit score --all --fleet 'repos/*/.orchestrator/metrics' --out fleet.csv
  evalkit score --all --fleet fleet.txt --workers 4 --journal-each
  evalkit score --all --fleet fleet.txt --scheduler tcp://scheduler:8786

  Without --workers or --scheduler the directories are scored one after the other in
  this process (no Dask needed). --workers and --scheduler need the 'fleet' extra:
  pip install 'evalkit[fleet]'; every run needs pyarrow (also in the 'fleet' extra). With
  --scheduler every worker must see every directory at the same path and have evalkit
  installed. On stderr: a progress bar over directories, then a summary table, one line
  per directory (its counts, or 'failed [kind]: reason', the reason naming the file and
  the line of a bad sessions.jsonl), then the totals. A directory that fails never stops
  the others, and the table of those that scored is still written (a partial result is
  kept; the exit code says it is partial).

  exit codes with --fleet: 0 every directory scored; 1 a directory that cannot be scored
  (missing, no session, a bad sessions.jsonl), a bad fleet (a glob matching no directory,
  a directory named twice, ...) or argument, or an extra missing; 2 a directory that
  could not be read or journaled (an append failed: the reason says which records are on
  disk), a task lost with its worker, the table could not be written, or the scheduler
  could not be reached.
"""


def register(subparsers: Any) -> None:
    """Add the ``score`` subcommand.

    Parameters
    ----------
    subparsers
        The ``evalkit`` parser's subparsers (``add_subparsers()``).
    """
    parser = subparsers.add_parser(
        "score",
        help=SUBCOMMANDS["score"],
        description="Score one session of a metrics directory against a pre-registered rubric "
        "and append the record to the journal (eval.jsonl); or score every session with --all; "
        "or every metrics directory of a fleet with --all --fleet.",
        epilog=_FLEET_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # default None: --fleet must know whether --metrics-dir was given; run() fills it in
    add_metrics_dir(parser, "the metrics directory", default=None)
    parser.add_argument("--session", help="session id (default: the resolution cascade)")
    parser.add_argument(
        "--rubric", default="rubric-v2", help="rubric version: rubric-v1 or rubric-v2 (default)"
    )
    parser.add_argument("--json", action="store_true", help="print the record as one JSON line")
    parser.add_argument(
        "--no-write", action="store_true", help="do not append the record to the journal"
    )
    parser.add_argument(
        "--journal",
        nargs="?",
        const="",
        metavar="FILE",
        help="journal file (default <metrics-dir>/eval.jsonl); its directory must exist: it is "
        "never created, so a mistyped path cannot start a second journal (one session: the "
        "record is then printed, not appended, exit 2). With --all: append every session's "
        "record to it (--all exits 1 when the metrics directory holds no sessions.jsonl, "
        "as one session does; an existing empty one is an empty ledger: 0)",
    )
    parser.add_argument(
        "--timestamp", help="ISO-8601 evaluation timestamp; names the run (default: now)"
    )
    parser.add_argument("--model-id", help="id of the model that ran the session")
    parser.add_argument(
        "--model-source",
        help=f"where the model id comes from: {', '.join(MODEL_SOURCES)} (default self-report)",
    )
    parser.add_argument("--handle", help="a handle to attach (default none: anonymized)")
    parser.add_argument(
        "-v",
        "--diagnostics",
        action="store_true",
        help="list every ledger line that was skipped or doubted (file:line: reason) on "
        f"stderr (default: the first {DIAGNOSTICS_SHOWN})",
    )
    batch = parser.add_argument_group("batch (--all)")
    batch.add_argument(
        "--all",
        action="store_true",
        help="score every session into a table; with --journal, append the records too",
    )
    batch.add_argument(
        "--rescore",
        action="store_true",
        help="with --all --journal: score every session, also those whose latest record was "
        "scored from the same inputs under the same rubric (default: skip them)",
    )
    batch.add_argument(
        "--format",
        help="table format: csv, jsonl or parquet (default: from --out's suffix, else csv)",
    )
    batch.add_argument("--out", type=Path, help="write the table here (default stdout)")
    batch.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    from evalkit.cli.judge_run import add_record_judge

    add_record_judge(parser)
    _add_fleet_arguments(parser)
    parser.set_defaults(func=run)


def _add_fleet_arguments(parser: Any) -> None:
    fleet = parser.add_argument_group("fleet (--all --fleet): many metrics directories")
    fleet.add_argument(
        "--fleet",
        metavar="GLOB|FILE|DIR",
        help="score every metrics directory that a glob (quoted: 'repos/*/metrics'; ** "
        "recurses), a file of paths (one per line, # comments) or one directory names; the "
        "table gets a metrics_dir column. Serially in this process unless --workers or "
        "--scheduler. Not with --metrics-dir or --session",
    )
    where = fleet.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run on a local Dask cluster of N worker processes on loopback, one task per "
        "directory; it speaks mutual TLS with a key made for this run, so no other local user "
        "can reach it (needs pip install 'evalkit[fleet]')",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on the running Dask scheduler at ADDRESS, e.g. tcp://scheduler:8786 "
        f"(needs pip install 'evalkit[fleet]'). Trust: {SCHEDULER_TRUST}",
    )
    fleet.add_argument(
        "--journal-each",
        action="store_true",
        help="also append each directory's records to its own <dir>/eval.jsonl, "
        "incrementally as --all --journal does for one (--rescore: every session); the "
        "summary table counts scored / unchanged / refused per directory, the table written "
        "holds the rows appended "
        "(--journal FILE is refused with --fleet: one journal per directory)",
    )


def _check_arguments(args: argparse.Namespace) -> None:
    for flag, attr in _TEXT_ARGUMENTS:
        value = getattr(args, attr)
        if value is not None:
            require_text(value, flag)
    if args.rubric not in RUBRIC_VERSIONS:
        raise EvalkitError(
            f"--rubric: unknown rubric version {args.rubric!r} (known: {', '.join(RUBRIC_VERSIONS)})"
        )
    if args.model_source is not None and args.model_source not in MODEL_SOURCES:
        raise EvalkitError(
            f"--model-source: must be one of {', '.join(MODEL_SOURCES)}, got {args.model_source!r}"
        )
    if args.timestamp is not None:
        try:
            validate_timestamp(args.timestamp, "--timestamp")
        except ValidationError as exc:
            raise EvalkitError(str(exc)) from None
    if args.all:
        _check_batch_arguments(args)
    else:
        if args.rescore:
            raise EvalkitError("--rescore only applies to --all --journal")
        for flag, value in (("--format", args.format), ("--out", args.out), *_fleet_flags(args)):
            if value is not None:
                raise EvalkitError(f"{flag} only applies to --all")
    if args.format is not None and args.format not in FORMATS:
        raise EvalkitError(f"--format: must be one of {', '.join(FORMATS)}, got {args.format!r}")
    _check_judge_arguments(args)


def _check_judge_arguments(args: argparse.Namespace) -> None:
    """``--judge`` needs a journal; its options need ``--judge``."""
    if args.judge is None:
        for flag, value in (("--repeats", args.repeats), ("--judge-log", args.judge_log)):
            if value is not None:
                raise EvalkitError(f"{flag} only applies with --judge")
        return
    require_text(args.judge, "--judge")
    if args.fleet is not None:
        raise EvalkitError("--judge is not available with --fleet (judge each directory's journal)")
    if args.no_write:
        raise EvalkitError("--judge writes judge dimensions into the journal: drop --no-write")
    if args.all and args.journal is None:
        raise EvalkitError(
            "--judge needs --journal with --all: judge dimensions go into records, not the table"
        )


def _fleet_flags(args: argparse.Namespace) -> tuple[tuple[str, Any], ...]:
    """The fleet options given (value None when not)."""
    return (
        ("--fleet", args.fleet),
        ("--workers", args.workers),
        ("--scheduler", args.scheduler),
        ("--journal-each", args.journal_each or None),
    )


def _check_batch_arguments(args: argparse.Namespace) -> None:
    if args.fleet is not None:
        _check_fleet_arguments(args)
        return
    for flag, value in _fleet_flags(args)[1:]:
        if value is not None:
            raise EvalkitError(f"{flag} only applies to --all --fleet")
    if args.session is not None:
        raise EvalkitError("--session cannot be combined with --all (it scores every session)")
    if args.journal is None:
        # the table alone names no run: run inputs belong to records
        for flag, value in (("--timestamp", args.timestamp), ("--rescore", args.rescore or None)):
            if value is not None:
                raise EvalkitError(f"{flag} only applies to --all with --journal")
    elif args.no_write:
        raise EvalkitError("--no-write cannot be combined with --journal")


def _check_fleet_arguments(args: argparse.Namespace) -> None:
    for flag, value in (("--fleet", args.fleet), ("--scheduler", args.scheduler)):
        if value is not None:
            require_text(value, flag)
    if args.metrics_dir is not None:
        raise EvalkitError(
            "--fleet names the metrics directories: it cannot be combined with --metrics-dir "
            "(name one directory with --fleet DIR)"
        )
    if args.session is not None:
        raise EvalkitError("--session cannot be combined with --fleet (it scores every session)")
    if args.journal is not None:
        raise EvalkitError(
            "--journal names one journal file: with --fleet use --journal-each, which appends "
            "each directory's records to its own <dir>/eval.jsonl"
        )
    if args.workers is not None and args.workers < 1:
        raise EvalkitError(f"--workers must be at least 1, got {args.workers}")
    if args.journal_each:
        if args.no_write:
            raise EvalkitError("--no-write cannot be combined with --journal-each")
        return
    # the table alone names no run: run inputs belong to records
    for flag, value in (("--timestamp", args.timestamp), ("--rescore", args.rescore or None)):
        if value is not None:
            raise EvalkitError(f"{flag} only applies to --all --fleet with --journal-each")


def run(args: argparse.Namespace) -> int:
    """Run ``evalkit score`` with the parsed arguments.

    Parameters
    ----------
    args
        What :func:`register`'s parser parsed.

    Returns
    -------
    int
        The exit code (module docstring; ``--fleet``: :mod:`evalkit.cli.score_fleet`).
    """
    _check_arguments(args)
    if args.fleet is not None:
        return score_fleet.run(args)
    if args.metrics_dir is None:
        args.metrics_dir = DEFAULT_METRICS_DIR
    if args.out is not None:  # before any work: a place no output flag writes is refused
        args.out = output_path(args.out, "--out", metrics_dirs=[args.metrics_dir])
    journal_given = args.journal is not None
    if args.journal == "":  # --journal without a file: the default journal
        args.journal = None
    elif args.journal is not None:
        args.journal = Path(args.journal)
    if not Path(args.metrics_dir).is_dir():
        raise EvalkitError(f"--metrics-dir: {args.metrics_dir} is not a directory")
    if args.all and not journal_given:
        return score_all.run_table(args)
    if not args.no_write:
        _check_journal_target(args)
        journal = journal_path(args)
        if not journal.exists() or journal.is_file():  # a folder, a FIFO: the writer names it
            output_path(journal, "--journal", metrics_dirs=[args.metrics_dir], journals=False)
    if args.all:
        return score_all.run_journal(args)
    return _run_one(args)


def _check_journal_target(args: argparse.Namespace) -> None:
    """Refuse a journal that is a file of the ledger being scored (by resolved path/inode)."""
    target = journal_path(args)
    role = ledger_role(args.metrics_dir, target)
    if role is not None:
        raise EvalkitError(
            f"--journal {str(target)!r} is the ledger's {role} in {str(args.metrics_dir)!r}; "
            "records are never appended to the ledger (it would break every later score and "
            "verify): name a separate journal file, e.g. <metrics-dir>/eval.jsonl"
        )


def _resolution_error(exc: SessionResolutionError, metrics_dir: Path) -> None:
    """No session resolved: say so, with sessions.jsonl's path and state."""
    err(f"{exc} ({describe_sessions_file(metrics_dir)})")


# ------------------------------------------------------------------------------ one session


def _fmt_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def format_record_table(record: dict[str, Any]) -> str:
    """A compact, human-readable view of a record: identity, dimension table, KPIs.

    Parameters
    ----------
    record
        A record as a dict (:meth:`evalkit.scoring.eval_record.EvalRecord.to_dict`).

    Returns
    -------
    str
        The lines, without a final newline.
    """
    dims = record["dimensions"]
    rows = [("DIMENSION", "METHOD", "STATUS", "SCORE")]
    for dim in dims:
        method = dim["method"] + (" (advisory)" if dim["method"] == "judge" else "")
        rows.append((dim["id"], method, dim["status"], _fmt_value(dim.get("score"))))
    table = "\n".join(text_table(rows))
    kpis = " ".join(
        f"{key}={'not recorded' if value is None else _fmt_value(value)}"
        for key, value in record["kpis"].items()
    )
    head = [
        f"session   {record['session_id']}",
        f"run_id    {record['run_id']}",
        f"rubric    {record['rubric_version']} (sha256 {record['provenance']['rubric_sha256'][:12]})",
        f"model     {record['model']['id']} ({record['model']['source']})",
    ]
    return "\n".join([*head, "", table, "", f"kpis      {kpis}"])


def _run_one(args: argparse.Namespace) -> int:
    if args.judge is None:
        return _score_one(args, None, None)
    from evalkit.cli.common import accepted_calibrations
    from evalkit.cli.judge_run import record_judge

    accepted = accepted_calibrations()
    with record_judge(args, journal_path(args), accepted) as judge:
        return _score_one(args, judge, accepted)


def _score_one(args: argparse.Namespace, judge: Any, accepted: Any) -> int:
    # deferred: the engine loads numpy; every command imports this module
    from evalkit.scoring.engine import JudgeUnanswered, score_session

    try:
        scored = score_session(
            args.metrics_dir,
            session_id=args.session,
            rubric=args.rubric,
            timestamp=args.timestamp,
            model_id=args.model_id,
            model_source=args.model_source,
            handle=args.handle,
            judge=judge,
        )
    except SessionResolutionError as exc:
        _resolution_error(exc, args.metrics_dir)
        return 1
    except JudgeUnanswered:
        from evalkit.cli.judge_run import EXIT_UNANSWERED, held_back_message

        print(held_back_message(judge, 1, "evalkit score"), file=sys.stderr)
        return EXIT_UNANSWERED
    except EvalkitError as exc:  # the reference's "other evaluation error"
        err(f"evaluation error: {exc}")
        return 2
    print_diagnostics(scored.ledger_diagnostics, args.diagnostics, prog="evalkit score")
    record = scored.to_dict()

    target = journal_path(args)
    write_error: Exception | None = None
    if not args.no_write:
        if not target.parent.is_dir():
            # The journal is the single source of truth: a typo in --journal must not silently
            # start a new one in a freshly created directory.
            write_error = EvalkitError(
                f"directory {str(target.parent)!r} does not exist (evalkit score never creates "
                "it; create it or fix --journal)"
            )
        else:
            try:
                record = journal.append(target, record, accepted=accepted)
            except (OSError, EvalkitError) as exc:
                write_error = exc

    if args.json:
        print(dumps_record(record))
    else:
        print(format_record_table(record))
        if args.no_write:
            print("journal   not written (--no-write)")
        elif write_error is None:
            print(f"journal   appended to {target}")
    if write_error is not None:
        partly = isinstance(write_error, journal.JournalWriteError) and write_error.remains
        state = "may be PARTLY on disk in" if partly else "was NOT appended to"
        err(f"the record {state} {target}: {write_error}")
        return 2
    return 0
