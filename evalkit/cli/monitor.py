"""``evalkit monitor``: every check's fire rate as an anytime-valid band over the journal.

Reads the journal in session order (or scores a ledger without one in memory) and reports per
check n, fires, the unmeasured sessions, the running rate, the band and its state (``broken``,
``quiet``, ``within``, ``undecided``) with the session it was first reached at; with
``--runlog`` and ``--gold``, a judge's disagreement with the gold set over its re-runs. Exit
codes (docs/CLI.md): 0 no alarm check broken, 1 a user error, 2 an I/O failure, 4 an alarm
check turned broken. The logic is :mod:`evalkit.analyses.monitor`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from evalkit.cli.common import DEFAULT_METRICS_DIR, require_text
from evalkit.cli.main import SUBCOMMANDS
from evalkit.cli.score_all import text_table
from evalkit.errors import EvalkitError
from evalkit.files.escape import csv_text
from evalkit.files.input import dumps, escape_surrogates
from evalkit.stats.limits import DEFAULT_FLOOR, DEFAULT_OPTIMIZE_AT, FIRE_RATE_CEILING

if TYPE_CHECKING:  # numpy and the analyses load when the command runs, not when --help does
    from evalkit.analyses.monitor import MonitorReport

#: Exit code when an alarm check's band passed the ceiling (docs/CLI.md).
EXIT_BROKEN = 4

_EPILOG = """\
exit codes: 0 no alarm check is broken; 1 a user error (bad argument, no journal or ledger);
2 an I/O failure; 4 an alarm check turned broken (its band's lower end passed --ceiling).
Shares (a dimension's pass or not-applicable rate, the rule judge's pass, rules 3 and 4,
which only set facts aside) are reported with their band but never set the exit code.
"""


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a rate must be in [0, 1], got {text}")
    return value


def _alpha(text: str) -> float:
    value = _rate(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"alpha must be strictly between 0 and 1, got {text}")
    return value


def register(subparsers: Any) -> None:
    """Add the ``monitor`` subcommand."""
    parser = subparsers.add_parser(
        "monitor",
        help=SUBCOMMANDS["monitor"],
        description="Read the journal in session order and report, for every check (each "
        "dimension x status, each fact flag, the rule judge and its rules, judge dimensions "
        "when present), n, fires, unmeasured sessions, the running rate, the anytime-valid "
        "band and its state: broken (lower end above --ceiling: HR-101), quiet (upper end "
        "below --floor: HR-105), within, or undecided, with the session it was first reached "
        "at. A metrics directory without a journal is scored in memory (nothing is written). "
        "With --runlog and --gold: a judge's disagreement with the gold set over its re-runs.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--metrics-dir",
        type=Path,
        help=f"metrics directory holding eval.jsonl, or a journal file (default {DEFAULT_METRICS_DIR})",
    )
    parser.add_argument("--rubric", help="monitor the records of one rubric version only")
    parser.add_argument(
        "--ceiling",
        type=_rate,
        default=FIRE_RATE_CEILING,
        help=f"broken above this rate (default {FIRE_RATE_CEILING}, HR-101's ~10%%)",
    )
    parser.add_argument(
        "--floor",
        type=_rate,
        default=DEFAULT_FLOOR,
        help=f"quiet below this rate (default {DEFAULT_FLOOR}; 0 turns quiet off)",
    )
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=0.05,
        help="the band leaves the true rate at some session with probability <= alpha "
        "(default 0.05)",
    )
    parser.add_argument(
        "--optimize-at",
        type=float,
        default=DEFAULT_OPTIMIZE_AT,
        help=f"sessions the band is tightest around (default {DEFAULT_OPTIMIZE_AT:g})",
    )
    parser.add_argument(
        "--since", help="only sessions that started on or after this ISO-8601 date or time"
    )
    parser.add_argument(
        "--from-ledger",
        action="store_true",
        help="score the ledger's sessions in memory even when a journal exists",
    )
    parser.add_argument("--runlog", type=Path, help="judge drift: a run log of gold re-runs")
    parser.add_argument("--gold", type=Path, help="judge drift: the gold set the run log judged")
    parser.add_argument("--format", choices=("table", "json", "csv"), default="table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(func=run)


def _report(args: argparse.Namespace) -> MonitorReport:
    from evalkit.analyses.monitor import Limits, monitor

    if (args.runlog is None) != (args.gold is None):
        raise EvalkitError("--runlog and --gold go together (judge drift)")
    limits = Limits(args.ceiling, args.floor, args.alpha, args.optimize_at)
    if args.runlog is not None:
        if args.metrics_dir is not None or args.rubric or args.since or args.from_ledger:
            raise EvalkitError(
                "--runlog/--gold monitor a judge's run log: --metrics-dir, --rubric, --since "
                "and --from-ledger do not apply"
            )
        from evalkit.analyses.monitor_drift import judge_drift

        return judge_drift(args.runlog, args.gold, limits)
    metrics_dir = args.metrics_dir or DEFAULT_METRICS_DIR
    if not metrics_dir.exists():
        raise EvalkitError(f"{metrics_dir}: no such metrics directory or journal")

    def bar(records: Any) -> Any:
        return tqdm(
            records, desc="monitor", unit="record", file=sys.stderr, disable=args.no_progress
        )

    return monitor(
        metrics_dir,
        rubric=require_text(args.rubric, "--rubric") if args.rubric else None,
        since=args.since,
        from_ledger=args.from_ledger,
        progress=bar,
        limits=limits,
    )


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _table(report: MonitorReport) -> str:
    lines = [
        f"{report.source}: {escape_surrogates(report.name)}; "
        + ", ".join(f"{k or 'judges'}: {v} {report.unit}" for k, v in report.sessions.items()),
        f"band: anytime-valid {100 * (1 - report.alpha):g}% (two-sided beta-binomial mixture, "
        f"tightest around {report.optimize_at:g} {report.unit}); broken above "
        f"{_pct(report.ceiling)}, quiet below {_pct(report.floor)}",
    ]
    if report.repeat_records:
        lines.append(
            f"{report.repeat_records} record(s) of a session already monitored under its rubric "
            "(a re-score) were not counted twice"
        )
    lines += [*report.notes]
    for role, alarm in (("alarm checks", True), ("shares (reported, never an alarm)", False)):
        rows = [("CHECK", "N", "FIRES", "UNMEASURED", "RATE", "BAND", "STATE", "SINCE")]
        for b in (b for b in report.bands if b.check.alarm is alarm):
            low, high = b.interval
            band = "—" if low is None else f"[{_pct(low)}, {_pct(high)}]"
            since = (
                "" if b.state_at is None else f"{report.unit[:-1]} {b.state_at} ({b.state_session})"
            )
            rows.append(
                (
                    escape_surrogates(b.check.label),
                    f"{b.n}/{b.sessions}",
                    str(b.fires),
                    str(b.unmeasured.count),
                    _pct(b.rate),
                    band,
                    b.state.value,
                    escape_surrogates(since),
                )
            )
        if len(rows) > 1:
            lines += ["", f"{role}:", *text_table(rows, numeric=(1, 2, 3, 4))]
    if report.skipped_lines:
        lines += ["", f"{len(report.skipped_lines)} line(s) skipped (not valid records):"]
        lines += [f"  {escape_surrogates(s)}" for s in report.skipped_lines]
    return "\n".join(lines)


def _csv(report: MonitorReport) -> None:
    frame = report.frame()
    rows = (
        ["" if v is None or v != v else v for v in row] for row in frame.itertuples(index=False)
    )
    sys.stdout.write(csv_text(list(frame.columns), rows))  # a formula-like cell is neutralized


def run(args: argparse.Namespace) -> int:
    """``evalkit monitor``: print every check's band; exit 4 when an alarm check is broken."""
    report = _report(args)
    if args.format == "json":
        print(dumps(report.to_dict()))
    elif args.format == "csv":
        _csv(report)
    else:
        print(_table(report))
    broken = report.broken_alarms
    if broken:
        named = "; ".join(
            f"{b.check.label} (since {report.unit[:-1]} {b.state_at})" for b in broken
        )
        print(
            f"evalkit monitor: {len(broken)} check(s) broken: {escape_surrogates(named)}",
            file=sys.stderr,
        )
        return EXIT_BROKEN
    return 0
