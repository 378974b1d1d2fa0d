"""``evalkit calibrate``: a judge's labels against a frozen gold set, written as JSON.

The JSON result goes to stdout (or ``--out``); a one-line summary goes to stderr, with kappa
and its CI, or ``undefined (reason)`` where kappa or its interval is undefined on these labels
(e.g. gold and judge use one label only). Exit 0 when the result was written, whether the judge
graduates or not; exit 1 on bad input (unreadable labels, a gold set whose bytes changed, a
changed pre-registered input) and on ``--register`` of a judge that did not graduate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="calibrate a judge's labels against a frozen gold set (kappa with BCa CI, ...)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--labels", help="judge labels: .jsonl or .csv with item_id, label")
    src.add_argument(
        "--rule-judge", action="store_true", help="calibrate the rule judge (apply_rules)"
    )
    parser.add_argument(
        "--gold", default="gold/instruction-adherence", help="gold set folder (newest version)"
    )
    parser.add_argument(
        "--judge", default=None, help="name of the judge (default: the labels file)"
    )
    parser.add_argument("--dimension", default="instruction-adherence", help="judge dimension id")
    parser.add_argument("--out", default=None, help="write the result JSON here (default stdout)")
    parser.add_argument("--n-resamples", type=int, default=None, help="bootstrap resamples")
    parser.add_argument("--rng", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--register", action="store_true", help="record a graduated calibration in the registry"
    )
    parser.add_argument("--registry", default=None, help="registry file (default calibrations/)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from evalkit.calibration import calibrate, read_judge_labels, register, rule_judge_labels
    from evalkit.gold import load

    gold = load(args.gold)
    labels = rule_judge_labels(gold) if args.rule_judge else read_judge_labels(args.labels)
    judge = args.judge or (
        "rule-judge (evalkit.judge.apply_rules)" if args.rule_judge else args.labels
    )
    result = calibrate(
        labels,
        gold,
        dimension_id=args.dimension,
        judge=judge,
        n_resamples=args.n_resamples,
        rng=args.rng,
    )
    text = result.to_json() + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(
        f"kappa {describe_kappa(result)} n={result.n} "
        f"missing={result.n_missing} disagreements={len(result.disagreements)}; "
        f"{result.graduation_reason}; status {result.calibration_status}",
        file=sys.stderr,
    )
    if args.register:
        entry = register(result, args.registry)
        print(
            f"registered {entry['calibration_status']} ({entry['calibration_ref']})",
            file=sys.stderr,
        )
    return 0


def describe_kappa(result: Any) -> str:
    """Kappa with its CI as text, ``undefined (reason)`` where the figure or interval is None.

    An undefined kappa is never printed as a number (and never crashes the summary): it is
    ``0/0`` when gold and judge together use one label only on the labeled items.
    """
    k = result.kappa_ci
    if k.statistic is None:
        agreement = result.kappa
        if agreement is not None and agreement.chance_agreement == 1:
            why = (
                f"chance agreement is 1: gold and judge use one label only on the "
                f"{result.n} labeled items"
            )
        else:
            why = f"degenerate data on the {result.n} labeled items"
        return f"undefined ({why}); CI undefined"
    if k.low is None or k.high is None:
        why = "fewer than 2 items" if result.n < 2 else "the bootstrap is degenerate"
        return f"{k.statistic:.3f} [CI undefined ({why})]"
    return f"{k.statistic:.3f} [{k.low:.3f}, {k.high:.3f}]"
