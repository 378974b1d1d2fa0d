"""``evalkit score --all --fleet``: every metrics directory of a fleet, serially or on Dask.

``--fleet`` names the directories (a glob, a file of paths, or one directory:
:func:`evalkit.fleet.resolve_fleet`). Without ``--workers``/``--scheduler`` they are scored one
after the other in this process (no Dask needed); ``--workers N`` starts a local Dask cluster
of ``N`` worker processes (loopback only), ``--scheduler ADDRESS`` uses a running one. Either
way it is one task per directory and the same rows.

The table is :func:`evalkit.score_fleet`'s (the ``score_ledger`` columns plus
``metrics_dir``); with ``--journal-each`` every directory's new records are appended to its own
``<dir>/eval.jsonl`` (:func:`evalkit.fleet.journal_directory`, incremental unless
``--rescore``) and the table holds the rows of the records appended. A directory that fails
never stops the others: a progress bar over directories, then a summary on stderr (directories
ok and failed, sessions, rows, and each failure with its kind and reason).

Exit codes: 0 every directory scored; 1 a directory failed (its journal append included: the
reason says which records of the batch are on disk), a bad fleet spec or argument, or a
missing ``fleet`` extra; 2 the table could not be written, or the scheduler could not be
reached. When directories fail, the table of the others is still written: a partial result
is kept, and the exit code says it is partial.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from evalkit.cli.common import DIAGNOSTICS_SHOWN
from evalkit.cli.score_all import REFUSED_SHOWN, err, progress_bar, table_format, write_table
from evalkit.errors import EvalkitError
from evalkit.extras import MissingExtraError, require
from evalkit.fleet import (
    METRICS_DIR_COLUMN,
    FleetFailure,
    FleetFailureWarning,
    JournaledDirectory,
    fleet_client,
    fleet_summary,
    journal_directory,
    resolve_fleet,
    run_fleet,
    score_fleet,
)

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """``score --all --fleet``: the table (and with ``--journal-each`` the journals).

    Parameters
    ----------
    args
        The parsed ``evalkit score`` arguments, already checked by :mod:`evalkit.cli.score`.

    Returns
    -------
    int
        The exit code (module docstring).
    """
    fmt = table_format(args)
    dirs = resolve_fleet(args.fleet)  # a bad spec: EvalkitError, exit 1, nothing scored
    with _client(args) as client:
        where = _where(args, client)
        if args.journal_each:
            return _journal_each(args, dirs, client, fmt, where)
        return _score_table(args, dirs, client, fmt, where)


def _where(args: argparse.Namespace, client: Any) -> str:
    """Where the tasks run, for the summary; warns when a scheduler has no worker yet."""
    if client is None:
        return "serially in this process"
    n = len(client.nthreads())
    workers = f"{n} worker{'' if n == 1 else 's'}"
    if args.scheduler is None:
        return f"on a local Dask cluster of {workers}"
    if n == 0:
        err(
            f"the Dask scheduler at {args.scheduler} has no worker yet: the tasks wait until "
            "one joins (Ctrl-C stops)"
        )
    return f"on the Dask scheduler at {args.scheduler} ({workers} at the start)"


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[Any]:
    """No client (serially here), or a Dask client for ``--workers``/``--scheduler``."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    flag = "--workers" if args.workers is not None else "--scheduler"
    try:
        require("dask", "distributed", purpose=flag)
    except MissingExtraError as exc:
        raise MissingExtraError(
            f"{exc} (without --workers and --scheduler, --fleet scores serially in this process)"
        ) from None
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(fleet_client(args.scheduler, workers=args.workers))
        except EvalkitError:
            raise
        except ValueError as exc:  # Dask's word for an address it cannot parse
            raise EvalkitError(f"--scheduler {args.scheduler!r}: {exc}") from None
        except OSError as exc:
            where = f"the Dask scheduler at {args.scheduler}" if args.scheduler else "Dask"
            raise OSError(f"cannot reach {where}: {exc}") from None
        yield client


def _write(frame: Any, fmt: str, args: argparse.Namespace) -> OSError | None:
    """Write the table; the error, when it could not be (reported after the summary)."""
    try:
        write_table(frame, fmt, args.out)
    except OSError as exc:
        return exc
    return None


def _write_failed(exc: OSError, args: argparse.Namespace) -> int:
    where = args.out if args.out is not None else "stdout"
    err(f"the table could not be written to {where}: {exc}")
    return 2


def _failure_line(failure: FleetFailure) -> str:
    return f"  failed [{failure.kind}] {failure}"


# -------------------------------------------------------------------------------- the table


def _score_table(
    args: argparse.Namespace, dirs: Sequence[str], client: Any, fmt: str, where: str
) -> int:
    bar = progress_bar(args, len(dirs), "score --all --fleet", "dir")
    failed = 0

    def progress(outcome: Any, done: int, total: int) -> None:
        nonlocal failed
        failed += not outcome.ok
        bar.update(1)
        bar.set_postfix_str(f"{failed} failed" if failed else "")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FleetFailureWarning)  # the summary says it
            frame = score_fleet(dirs, args.rubric, client=client, progress=progress)
    finally:
        bar.close()
    summary = fleet_summary(frame)
    # parquet keeps a frame's attrs as JSON, which the summary object is not
    frame.attrs.pop("fleet", None)
    write_error = _write(frame, fmt, args)
    n, failures = len(dirs), summary.failures
    err(
        f"fleet of {n} metrics director{'y' if n == 1 else 'ies'} ({summary.rubric_version}, "
        f"{where}): {n - len(failures)} scored, {len(failures)} failed; {summary.sessions} sessions, "
        f"{len(frame)} rows"
    )
    for d, ids in summary.skipped.items():
        print(f"  {d}: {len(ids)} session id(s) not scored (only whitespace)", file=sys.stderr)
    for failure in failures:
        print(_failure_line(failure), file=sys.stderr)
    if write_error is not None:
        return _write_failed(write_error, args)
    return 1 if failures else 0


# ------------------------------------------------------------------------ --journal-each


def _journal_each(
    args: argparse.Namespace, dirs: Sequence[str], client: Any, fmt: str, where: str
) -> int:
    from evalkit.fleet_arrow import decode_ledger_tables

    task = partial(
        journal_directory,
        rubric=args.rubric,
        rescore=args.rescore,
        timestamp=args.timestamp,
        model_id=args.model_id,
        model_source=args.model_source,
        handle=args.handle,
        diagnostics_kept=None if args.diagnostics else DIAGNOSTICS_SHOWN,
    )
    bar = progress_bar(args, len(dirs), "score --all --fleet", "dir")
    failed = 0

    def progress(index: int, metrics_dir: str, value: Any, failure: Any) -> None:
        nonlocal failed
        failed += failure is not None
        bar.update(1)
        bar.set_postfix_str(f"{failed} failed" if failed else "")

    try:
        results = run_fleet(dirs, task, client=client, on_result=progress)
    finally:
        bar.close()
    done = [(d, v) for d, (v, f) in zip(dirs, results, strict=True) if f is None]
    frame = decode_ledger_tables([(d, v.payload) for d, v in done], METRICS_DIR_COLUMN)
    write_error = _write(frame, fmt, args)
    _report_journals(args, dirs, results, where)
    if write_error is not None:
        return _write_failed(write_error, args)
    return 1 if len(done) < len(dirs) else 0


def _report_journals(
    args: argparse.Namespace,
    dirs: Sequence[str],
    results: Sequence[tuple[JournaledDirectory | None, FleetFailure | None]],
    where: str,
) -> None:
    """One line per directory (scored / skipped / refused, or why it failed), then totals."""
    notes: dict[str, None] = {}
    totals = {"scored": 0, "unchanged": 0, "refused": 0, "rows": 0, "failed": 0}
    for d, (value, failure) in zip(dirs, results, strict=True):
        if failure is not None or value is None:
            totals["failed"] += 1
            print(_failure_line(failure or FleetFailure(d, "lost", "no result")), file=sys.stderr)
            continue
        notes.update(dict.fromkeys(value.notes))
        for key in ("scored", "unchanged", "rows"):
            totals[key] += getattr(value, key)
        totals["refused"] += len(value.refused)
        _report_directory(args, d, value)
    for note in notes:
        print(f"evalkit: {note}", file=sys.stderr)
    n = len(dirs)
    err(
        f"fleet of {n} metrics director{'y' if n == 1 else 'ies'} ({args.rubric}, {where}): "
        f"{n - totals['failed']} journaled, {totals['failed']} failed; {totals['scored']} "
        f"scored and appended, {totals['unchanged']} unchanged (skipped), {totals['refused']} "
        f"refused; {totals['rows']} rows"
        + ("; --rescore scores unchanged sessions again" if totals["unchanged"] else "")
    )


def _report_directory(
    args: argparse.Namespace, metrics_dir: str, value: JournaledDirectory
) -> None:
    print(
        f"  {metrics_dir}: {value.scored} scored and appended to {value.journal}, "
        f"{value.unchanged} unchanged (skipped), {len(value.refused)} refused",
        file=sys.stderr,
    )
    refused = value.refused if args.diagnostics else value.refused[:REFUSED_SHOWN]
    for item in refused:
        print(f"    refused {item}", file=sys.stderr)
    if len(refused) < len(value.refused):
        more = len(value.refused) - len(refused)
        print(f"    ... and {more} more (-v lists all)", file=sys.stderr)
    if value.n_diagnostics:
        print(
            f"    ledger: {value.n_diagnostics} line(s) or file(s) skipped or doubted while "
            "reading:",
            file=sys.stderr,
        )
        for diag in value.diagnostics:
            print(f"      {diag}", file=sys.stderr)
        if len(value.diagnostics) < value.n_diagnostics:
            more = value.n_diagnostics - len(value.diagnostics)
            print(f"      ... and {more} more (--diagnostics lists all)", file=sys.stderr)
