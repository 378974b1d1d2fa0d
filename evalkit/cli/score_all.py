"""``evalkit score --all``: every session of a ledger as a table, and into the journal.

Without ``--journal`` the table of every session's deterministic verdicts is written (csv,
jsonl or parquet; :func:`evalkit.scoring.engine.score_ledger`). With ``--journal [FILE]`` the records
are appended to the journal (:func:`evalkit.journal.batch.journal_ledger`: one lock for the batch,
one write per line, one fsync at the end, each record all-or-nothing), incrementally unless
``--rescore``, and the table holds the rows of the records appended. A progress bar (tqdm) and
a summary (scored / skipped / refused) go to stderr; the table to ``--out`` or stdout.

With ``--judge SPEC`` each record gets its judge dimensions before it is appended
(:mod:`evalkit.judge.record_judge`): the judge's calls run ``--concurrency`` at a time, batch
after batch without a pause (:mod:`evalkit.judge.call_stream`); a record whose calls did not
all get an answer is held back.

Exit codes: 0 done (refused sessions are listed, not an error; an existing but empty
``sessions.jsonl`` is an empty ledger: 0, with a warning); 1 user error (no such metrics
directory, one without ``sessions.jsonl``, as ``evalkit score`` says; a journal whose directory
does not exist; a run log held by another run); 2 an append failed (the message says which
records of the batch are on disk); 4 with ``--judge``: records held back (their judge calls
unanswered; the same command retries them).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from evalkit.cli.common import accepted_calibrations, journal_path, print_diagnostics
from evalkit.errors import EvalkitError, SessionResolutionError
from evalkit.extras import require
from evalkit.files.escape import csv_text
from evalkit.files.input import dumps
from evalkit.files.output import write_output
from evalkit.journal.reader import JournalWriteError
from evalkit.ledger.files import describe_sessions_file
from evalkit.ledger.nothing_to_score import NoSession

__all__ = [
    "FORMATS",
    "REFUSED_SHOWN",
    "err",
    "no_ledger",
    "progress_bar",
    "run_journal",
    "run_table",
    "table_format",
    "text_table",
    "write_rows",
    "write_table",
]

FORMATS = ("csv", "jsonl", "parquet")
#: Refused sessions listed without ``--diagnostics``.
REFUSED_SHOWN = 5


def err(message: str) -> None:
    """Print ``message`` on stderr, after ``evalkit score:``."""
    print(f"evalkit score: {message}", file=sys.stderr)


class _NoBar:
    """The bar ``--no-progress`` asks for: the calls of a tqdm bar, showing nothing."""

    def update(self, n: int = 1) -> None:
        """Advance the bar that is not shown."""

    def set_postfix_str(self, text: str) -> None:
        """Say what the bar that is not shown is doing."""

    def close(self) -> None:
        """Close the bar that is not shown."""


def progress_bar(args: argparse.Namespace, total: int, command: str, unit: str) -> Any:
    """A tqdm bar on stderr, ``<command> (<rubric>)``, hidden by ``--no-progress``.

    Parameters
    ----------
    args
        The ``evalkit score`` arguments (``rubric``, ``no_progress``).
    total
        How many ``unit`` make 100%.
    command
        What runs, e.g. ``"score --all"``.
    unit
        What one step is (``"session"``, ``"dir"``).

    Returns
    -------
    tqdm.tqdm
        The bar (close it when done).
    """
    if args.no_progress:
        return _NoBar()
    from tqdm import tqdm  # deferred: only a command that shows a bar loads it

    return tqdm(
        total=total,
        desc=f"{command} ({args.rubric})",
        unit=unit,
        file=sys.stderr,
        disable=args.no_progress,
    )


def text_table(rows: Sequence[Sequence[str]], numeric: Collection[int] = ()) -> list[str]:
    """``rows`` (the first one the header) as aligned lines, two spaces between columns.

    Columns in ``numeric`` are right-aligned, the others left-aligned; the last column is not
    padded, so a long text there (a reason) never widens the others.

    Parameters
    ----------
    rows
        The header, then the rows; every row has the same number of cells.
    numeric
        Indices of the columns to right-align.

    Returns
    -------
    list of str
        One line per row, without trailing spaces.
    """
    last = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(last)]
    return [
        "  ".join(
            [
                *(
                    cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
                    for i, cell in enumerate(row[:last])
                ),
                row[last],
            ]
        ).rstrip()
        for row in rows
    ]


def table_format(args: argparse.Namespace) -> str:
    """The table format: ``--format``, else ``--out``'s suffix, else csv.

    Parameters
    ----------
    args
        The ``evalkit score`` arguments (``format``, ``out``).

    Returns
    -------
    str
        One of :data:`FORMATS`.

    Raises
    ------
    EvalkitError
        Parquet to a terminal, or without pyarrow (checked before anything is scored).
    """
    fmt: str | None = args.format
    if fmt is None:
        suffix = args.out.suffix.lstrip(".").lower() if args.out else ""
        fmt = suffix if suffix in FORMATS else "csv"
    if fmt == "parquet" and args.out is None and sys.stdout.isatty():
        raise EvalkitError("--format parquet is binary: give --out FILE or redirect stdout")
    if fmt == "parquet":  # before scoring, not after
        require("pyarrow", purpose="--format parquet")
    return fmt


def no_ledger(metrics_dir: str | Path) -> bool:
    """Whether ``metrics_dir`` holds no ``sessions.jsonl`` at all (then the error is printed).

    A mistyped or wrong path exits 1 before anything is scored or written; an empty
    ``sessions.jsonl`` is a ledger without sessions, not this.

    Parameters
    ----------
    metrics_dir
        The ``--metrics-dir`` given (an existing directory).

    Returns
    -------
    bool
        True when there is nothing at ``<metrics_dir>/sessions.jsonl``; the error is printed.
    """
    if os.path.lexists(os.path.join(os.fspath(metrics_dir), "sessions.jsonl")):
        return False
    err(
        f"error: no sessions.jsonl in {str(metrics_dir)!r}: not a metrics directory, so nothing "
        "is scored or written (an empty sessions.jsonl would be an empty ledger)"
    )
    return True


def run_table(args: argparse.Namespace) -> int:
    """``score --all``: the table of every session's deterministic verdicts.

    Parameters
    ----------
    args
        The ``evalkit score`` arguments, checked.

    Returns
    -------
    int
        The exit code: 0, or 1 when there is no ``sessions.jsonl`` or no session resolves.
    """
    if no_ledger(args.metrics_dir):
        return 1
    # deferred: the engine loads numpy; every command imports this module
    from evalkit.scoring.engine import score_ledger

    fmt = table_format(args)
    # score_ledger offers no progress hook, so the bar advances over the phases run here.
    phases = progress_bar(args, 2, "score --all", "phase")
    try:
        phases.set_postfix_str("scoring ledger")
        try:
            frame = score_ledger(args.metrics_dir, rubric=args.rubric)
        except SessionResolutionError as exc:
            err(f"{exc} ({describe_sessions_file(args.metrics_dir)})")
            return 1
        phases.update(1)
        phases.set_postfix_str(f"writing {len(frame)} rows as {fmt}")
        write_table(frame, fmt, args.out)
        phases.update(1)
        phases.set_postfix_str(f"{frame['session_id'].nunique()} sessions, {len(frame)} rows")
    finally:
        phases.close()
    print_diagnostics(frame.attrs.get("diagnostics") or [], args.diagnostics, prog="evalkit score")
    if frame.attrs.get("no_session"):
        _warn_nothing_to_score(NoSession.from_dict(frame.attrs["no_session"]))
    skipped = frame.attrs.get("skipped") or []
    if skipped:
        err(f"{len(skipped)} session id(s) not scored (only whitespace): {skipped!r}")
    return 0


def run_journal(args: argparse.Namespace) -> int:
    """``score --all --journal [FILE]``: append every new record, write their table, summarize.

    Parameters
    ----------
    args
        The ``evalkit score`` arguments, checked.

    Returns
    -------
    int
        The exit code: 0, 1 when there is no ``sessions.jsonl`` or no session resolves, 2 when
        an append failed.
    """
    if no_ledger(args.metrics_dir):
        return 1
    fmt = table_format(args)
    target = journal_path(args)
    if not target.parent.is_dir():
        raise EvalkitError(
            f"--journal: directory {str(target.parent)!r} does not exist (evalkit score never "
            "creates it; create it or fix --journal)"
        )

    def progress(total: int) -> Any:
        return progress_bar(args, total, "score --all", "session")

    accepted = accepted_calibrations()
    if getattr(args, "judge", None) is None:
        return _journal(args, fmt, target, accepted, progress, None)
    from evalkit.cli.judge_run import record_judge

    with record_judge(args, target, accepted) as judge:
        return _journal(args, fmt, target, accepted, progress, judge)


def _journal(
    args: argparse.Namespace, fmt: str, target: Path, accepted: Any, progress: Any, judge: Any
) -> int:
    from evalkit.journal.batch import deterministic_rows, journal_ledger

    try:
        result = journal_ledger(
            args.metrics_dir,
            target,
            args.rubric,
            rescore=args.rescore,
            timestamp=args.timestamp,
            model_id=args.model_id,
            model_source=args.model_source,
            handle=args.handle,
            accepted=accepted,
            progress=progress,
            judge=judge,
        )
    except SessionResolutionError as exc:
        err(f"{exc} ({describe_sessions_file(args.metrics_dir)})")
        return 1
    except JournalWriteError as exc:
        err(f"the batch was cut short: {exc} ({exc.appended} record(s) of it are in {target})")
        return 2
    print_diagnostics(result.diagnostics, args.diagnostics, prog="evalkit score")
    write_rows(list(deterministic_rows(result.appended)), fmt, args.out)
    hint = "; --rescore scores them again" if result.unchanged else ""
    for note in result.reading:  # what the journal's cursor could not spare (docs/INCREMENTAL.md)
        err(note)
    err(result.summary() + hint)
    if result.no_session is not None and not (result.scored or result.unchanged or result.refused):
        _warn_nothing_to_score(result.no_session)
    refused = result.refused if args.diagnostics else result.refused[:REFUSED_SHOWN]
    for item in refused:
        print(f"  refused {item}", file=sys.stderr)
    if len(refused) < len(result.refused):
        print(
            f"  ... and {len(result.refused) - len(refused)} more (-v lists all)", file=sys.stderr
        )
    if judge is not None:
        print(f"evalkit score: judge {judge.judge.name}: {judge.summary.line()}", file=sys.stderr)
        if result.held_back:
            from evalkit.cli.judge_run import EXIT_UNANSWERED, held_back_message

            print(held_back_message(judge, len(result.held_back), "evalkit score"), file=sys.stderr)
            return EXIT_UNANSWERED
    return 0


def _warn_nothing_to_score(reason: NoSession) -> None:
    """An empty batch is not an error (exit 0), but the user hears why it is empty."""
    err(f"warning: {reason}")


def write_rows(rows: list[tuple[Any, ...]], fmt: str, out: Path | None) -> None:
    """Rows of :data:`evalkit.scoring.engine.LEDGER_COLUMNS` in ``fmt``, to ``out`` or stdout.

    csv and jsonl are written with the standard library (the incremental run stays fast),
    parquet through pandas.

    Parameters
    ----------
    rows
        ``(session_id, dimension, status, score, evidence)`` tuples.
    fmt
        One of :data:`FORMATS`.
    out
        The file to write, or None for stdout.
    """
    from evalkit.scoring.engine import LEDGER_COLUMNS  # deferred: the engine loads numpy

    if fmt == "parquet":
        import pandas as pd  # deferred: heavy, and only parquet needs it

        columns = list(zip(*rows, strict=True)) or [()] * len(LEDGER_COLUMNS)
        frame = pd.DataFrame(
            {
                name: pd.Series(col, dtype=object)
                for name, col in zip(LEDGER_COLUMNS, columns, strict=True)
            }
        )
        write_table(frame, fmt, out)
        return
    if fmt == "csv":
        text = csv_text(LEDGER_COLUMNS, rows)  # a text cell that starts a formula is neutralized
    else:
        text = "".join(dumps(dict(zip(LEDGER_COLUMNS, row, strict=True))) + "\n" for row in rows)
    if out is not None:
        write_output(out, text, "--out")
    else:
        sys.stdout.write(text)


def write_table(frame: Any, fmt: str, out: Path | None) -> None:
    """``frame`` as csv, jsonl or parquet, to ``out`` or stdout.

    Parameters
    ----------
    frame
        The table (a ``pandas.DataFrame``).
    fmt
        One of :data:`FORMATS`.
    out
        The file to write, or None for stdout.
    """
    if fmt == "csv":
        # a text cell that starts a formula is neutralized (evalkit.files.escape)
        text = csv_text(list(frame.columns), frame.itertuples(index=False, name=None))
    elif fmt == "jsonl":
        text = frame.to_json(orient="records", lines=True, force_ascii=False)
        if text and not text.endswith("\n"):
            text += "\n"
    else:
        if out is not None:
            write_output(out, lambda handle: frame.to_parquet(handle, index=False), "--out")
        else:
            sys.stdout.flush()
            frame.to_parquet(sys.stdout.buffer, index=False)
            sys.stdout.buffer.flush()
        return
    if out is not None:
        write_output(out, text, "--out")
    else:
        sys.stdout.write(text)
