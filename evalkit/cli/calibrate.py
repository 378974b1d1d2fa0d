"""``evalkit calibrate``: a judge's labels against a frozen gold set, written as JSON."""

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
    k = result.kappa_ci
    print(
        f"kappa {k.statistic:.3f} [{k.low:.3f}, {k.high:.3f}] n={result.n} "
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
