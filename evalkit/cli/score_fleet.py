"""``evalkit score --all --fleet``: every metrics directory of a fleet, serially or on Dask.

``--fleet`` names the directories (a glob, a file of paths, or one directory:
:func:`evalkit.fleet.score.resolve_fleet`). Without ``--workers``/``--scheduler`` they are scored one
after the other in this process (no Dask needed); ``--workers N`` starts a local Dask cluster
of ``N`` worker processes (loopback only), ``--scheduler ADDRESS`` uses a running one. Either
way it is one task per directory and the same rows.

The table is :func:`evalkit.score_fleet`'s (the ``score_ledger`` columns plus
``metrics_dir``); with ``--journal-each`` every directory's new records are appended to its own
``<dir>/eval.jsonl`` (:func:`evalkit.fleet.tasks.journal_directory`, incremental unless
``--rescore``) and the table holds the rows of the records appended. A directory that fails
never stops the others. On stderr: a progress bar over directories, then a summary table (one
line per directory: what it gave, or ``failed [kind]: reason``, the reason naming the file and
line), then the totals.

Exit codes (SPEC section 3): 0 every directory scored; 1 a user-facing error: a directory that
cannot be scored (missing, no session, a bad ``sessions.jsonl``), a bad fleet or argument, a
missing extra; 2 an I/O or internal failure: a directory that could not be read or journaled
(an append that failed: the reason says which records of the batch are on disk), a task lost
with its worker, a table that could not be written, a scheduler that cannot be reached. When
directories fail, the table of the others is still written: a partial result is kept, and
the exit code says it is partial.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from evalkit.cli.common import DIAGNOSTICS_SHOWN, output_path
from evalkit.cli.score_all import (
    REFUSED_SHOWN,
    err,
    progress_bar,
    table_format,
    text_table,
    write_table,
)
from evalkit.errors import EvalkitError
from evalkit.extras import MissingExtraError, require
from evalkit.fleet.score import (
    METRICS_DIR_COLUMN,
    SCHEDULER_TRUST,
    DirectoryOutcome,
    FleetFailure,
    FleetFailureWarning,
    fleet_client,
    fleet_summary,
    resolve_fleet,
    run_fleet,
    score_fleet,
)
from evalkit.fleet.tasks import JournaledDirectory, journal_directory

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
    _require_extras(args)
    dirs = resolve_fleet(args.fleet)  # a bad spec: EvalkitError, exit 1, nothing scored
    if args.out is not None:  # before any work: a place no output flag writes is refused
        args.out = output_path(args.out, "--out", metrics_dirs=dirs)
    with _client(args) as client:
        where = _where(args, client)
        if args.journal_each:
            return _journal_each(args, dirs, client, fmt, where)
        return _score_table(args, dirs, client, fmt, where)


def _require_extras(args: argparse.Namespace) -> None:
    """Every extra this run needs, before anything starts: one error naming all that miss."""
    checks: list[tuple[tuple[str, ...], str]] = []
    if args.workers is not None or args.scheduler is not None:
        flag = "--workers" if args.workers is not None else "--scheduler"
        checks.append((("dask", "distributed"), flag))
    checks.append((("pyarrow",), "--fleet (each directory's table travels as an Arrow stream)"))
    missing: dict[str, str] = {}
    for modules, purpose in checks:
        try:
            require(*modules, purpose=purpose, extra="fleet")
        except MissingExtraError as exc:
            missing[modules[0]] = str(exc)
    if missing:
        # serially needs no Dask: say so when Dask is all that is missing
        only_dask = list(missing) == ["dask"]
        serially = " (without --workers and --scheduler, --fleet scores serially in this process)"
        raise MissingExtraError("; ".join(missing.values()) + (serially if only_dask else ""))


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
    if args.scheduler is not None:  # said before connecting, every time
        err(f"--scheduler {args.scheduler}: {SCHEDULER_TRUST}")
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


def _finish(
    args: argparse.Namespace, failures: Sequence[FleetFailure], write_error: OSError | None
) -> int:
    """The exit code (SPEC section 3), after saying why the table is missing if it is."""
    if write_error is not None:
        where = args.out if args.out is not None else "stdout"
        err(f"the table could not be written to {where}: {write_error}")
        return 2
    if any(f.kind != "input" for f in failures):
        return 2  # read or append failed, a bug, a worker lost: not the user's input
    return 1 if failures else 0


def _failed(failure: FleetFailure) -> str:
    return f"failed [{failure.kind}]: {failure.reason}"


def _print_lines(lines: Sequence[str]) -> None:
    for line in lines:
        print(f"  {line}", file=sys.stderr)


def _bar_callback(bar: Any) -> Any:
    """``bar.update`` as each directory finishes, counting failures in its postfix."""
    failed = 0

    def advance(ok: bool) -> None:
        nonlocal failed
        failed += not ok
        bar.update(1)
        bar.set_postfix_str(f"{failed} failed" if failed else "")

    return advance


def _directories(n: int) -> str:
    return f"{n} metrics director{'y' if n == 1 else 'ies'}"


# -------------------------------------------------------------------------------- the table


def _score_table(
    args: argparse.Namespace, dirs: Sequence[str], client: Any, fmt: str, where: str
) -> int:
    bar = progress_bar(args, len(dirs), "score --all --fleet", "dir")
    advance = _bar_callback(bar)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FleetFailureWarning)  # the summary says it
            frame = score_fleet(
                dirs, args.rubric, client=client, progress=lambda o, *_: advance(o.ok)
            )
    finally:
        bar.close()
    summary = fleet_summary(frame)
    # parquet keeps a frame's attrs as JSON, which the summary object is not
    frame.attrs.pop("fleet", None)
    write_error = _write(frame, fmt, args)
    shown = None if args.diagnostics else DIAGNOSTICS_SHOWN
    rows = [("METRICS_DIR", "SESSIONS", "ROWS", "RESULT")]
    rows += [_table_row(outcome, shown) for outcome in summary.outcomes]
    _print_lines(text_table(rows, numeric=(1, 2)))
    # a task sends back its first DIAGNOSTICS_KEPT; score --all on the directory lists all
    hint = "--diagnostics lists more" if shown else "score --all on that directory lists all"
    for o in summary.outcomes:
        _print_lines(_ledger_lines(o.metrics_dir, o.diagnostics[:shown], o.n_diagnostics, hint))
    failures = summary.failures
    err(
        f"fleet of {_directories(len(dirs))} ({summary.rubric_version}, {where}): "
        f"{len(dirs) - len(failures)} scored, {len(failures)} failed; {summary.sessions} "
        f"sessions, {len(frame)} rows"
    )
    return _finish(args, failures, write_error)


def _table_row(outcome: DirectoryOutcome, shown: int | None) -> tuple[str, str, str, str]:
    """One directory's line: sessions, rows, and ``ok`` (with the ids not scored) or why not."""
    if outcome.failure is not None:
        return (outcome.metrics_dir, "-", "-", _failed(outcome.failure))
    result = "ok"
    if outcome.skipped:
        notes = outcome.notes[:shown]
        more = len(outcome.notes) - len(notes)
        result += f"; {len(outcome.skipped)} session id(s) not scored: " + "; ".join(
            [*notes, *([f"and {more} more (-v lists all)"] if more else [])]
        )
    return (outcome.metrics_dir, str(outcome.sessions), str(outcome.rows), result)


# ------------------------------------------------------------------------ --journal-each


def _journal_each(
    args: argparse.Namespace, dirs: Sequence[str], client: Any, fmt: str, where: str
) -> int:
    from evalkit.fleet.arrow import decode_ledger_tables
    from evalkit.scoring.run_inputs import RunInputs

    # validated once, here: every directory's records are named by the same timestamp
    run = RunInputs.of(
        timestamp=args.timestamp,
        model_id=args.model_id,
        model_source=args.model_source,
        handle=args.handle,
    )
    task = partial(
        journal_directory,
        rubric=args.rubric,
        rescore=args.rescore,
        run=run,
        diagnostics_kept=None if args.diagnostics else DIAGNOSTICS_SHOWN,
    )
    bar = progress_bar(args, len(dirs), "score --all --fleet", "dir")
    advance = _bar_callback(bar)
    try:
        results = run_fleet(dirs, task, client=client, on_result=lambda *r: advance(r[3] is None))
    finally:
        bar.close()
    done = [(d, v) for d, (v, _) in zip(dirs, results, strict=True) if v is not None]
    frame = decode_ledger_tables([(d, v.payload) for d, v in done], METRICS_DIR_COLUMN)
    write_error = _write(frame, fmt, args)
    failures = _report_journals(args, dirs, results, where)
    return _finish(args, failures, write_error)


def _report_journals(
    args: argparse.Namespace,
    dirs: Sequence[str],
    results: Sequence[tuple[JournaledDirectory | None, FleetFailure | None]],
    where: str,
) -> list[FleetFailure]:
    """The summary table (one line per directory), the details, the totals; the failures."""
    counted = ("scored", "unchanged", "refused", "rows")
    rows = [("METRICS_DIR", *(key.upper() for key in counted), "RESULT")]
    details: list[str] = []
    notes: dict[str, None] = {}
    failures: list[FleetFailure] = []
    totals = dict.fromkeys(counted, 0)
    for d, (value, failure) in zip(dirs, results, strict=True):
        if value is None:
            failures.append(failure or FleetFailure(d, "lost", "no result came back"))
            rows.append((d, "-", "-", "-", "-", _failed(failures[-1])))
            continue
        counts = {
            "scored": value.scored,
            "unchanged": value.unchanged,
            "refused": len(value.refused),
            "rows": value.rows,
        }
        for key in counted:
            totals[key] += counts[key]
        rows.append((d, *(str(counts[key]) for key in counted), f"ok, journal {value.journal}"))
        notes.update(dict.fromkeys(value.notes))
        details += _directory_details(args, d, value)
    _print_lines(text_table(rows, numeric=(1, 2, 3, 4)))
    _print_lines(details)
    for note in notes:
        print(f"evalkit: {note}", file=sys.stderr)
    n = len(dirs)
    err(
        f"fleet of {_directories(n)} ({args.rubric}, {where}): {n - len(failures)} "
        f"journaled, {len(failures)} failed; {totals['scored']} scored and appended, "
        f"{totals['unchanged']} unchanged (skipped), {totals['refused']} refused; "
        f"{totals['rows']} rows"
        + ("; --rescore scores unchanged sessions again" if totals["unchanged"] else "")
    )
    return failures


def _directory_details(
    args: argparse.Namespace, metrics_dir: str, value: JournaledDirectory
) -> list[str]:
    """Below the table: a directory's refused sessions, and the ledger lines it skipped."""
    lines = []
    refused = value.refused if args.diagnostics else value.refused[:REFUSED_SHOWN]
    lines += [f"{metrics_dir}: refused {item}" for item in refused]
    if len(refused) < len(value.refused):
        more = len(value.refused) - len(refused)
        lines.append(f"{metrics_dir}: ... and {more} more refused (-v lists all)")
    return lines + _ledger_lines(metrics_dir, value.diagnostics, value.n_diagnostics)


def _ledger_lines(
    metrics_dir: str, diagnostics: Sequence[str], n: int, hint: str = "--diagnostics lists all"
) -> list[str]:
    """A directory's ledger lines or files skipped or doubted: those given, of ``n``."""
    if not n:
        return []
    lines = [f"{metrics_dir}: ledger: {n} line(s) or file(s) skipped or doubted while reading:"]
    lines += [f"  {diag}" for diag in diagnostics]
    if len(diagnostics) < n:
        lines.append(f"  ... and {n - len(diagnostics)} more ({hint})")
    return lines
