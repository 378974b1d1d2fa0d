"""``evalkit calibrate``: a judge's labels against a frozen gold set, written as JSON.

The JSON result goes to stdout (or ``--out``); a one-line summary goes to stderr: kappa with
the interval this run displays (its level, resamples and seed), then the pre-registered
interval graduation is judged on, the verdict and the status (``undefined (reason)`` where
kappa or its interval is undefined).

The run needs the pre-registration lock (``evalkit preregister``) and refuses when the locked
gold set or decision rule changed. ``--no-lock`` runs without one: the result then says
``"preregistration": "none (--no-lock)"`` and can never be registered.

``--register`` mints a graduating calibration: it writes the calibration certificate
``calibrations/<calibration_ref>.json`` into this repository (never anywhere else), re-checks
it, and only then may records carry its ``calibrated:`` status. A calibration against a gold
set outside the repository, or not as the lock holds it, is computed and shown, never minted:
``mintable`` is false and ``mintable_reason`` says why.

Exit 0 when the result was written (and registered, with ``--register``), whether the judge
graduates or not; exit 1 on bad input (unreadable labels, a gold set whose bytes changed, a
changed pre-registered input, no lock without ``--no-lock``) and on ``--register`` of a
calibration that did not graduate or cannot be minted (the result is still written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit import calibration
from evalkit.gold import load as load_gold


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
        "--register",
        action="store_true",
        help="mint a graduated calibration: write its certificate into calibrations/",
    )
    parser.add_argument(
        "--no-lock",
        action="store_true",
        help="run without a pre-registration lock (stated in the result; never registrable)",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    gold = load_gold(args.gold)
    labels = (
        calibration.rule_judge_labels(gold)
        if args.rule_judge
        else calibration.read_judge_labels(args.labels)
    )
    judge = args.judge or (
        "rule-judge (evalkit.judge.apply_rules)" if args.rule_judge else args.labels
    )
    result = calibration.calibrate(
        labels,
        gold,
        dimension_id=args.dimension,
        judge=judge,
        n_resamples=args.n_resamples,
        rng=args.rng,
        no_lock=args.no_lock,
    )
    text = result.to_json() + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(summary(result, registering=args.register), file=sys.stderr)
    if args.register:
        cert = calibration.register(result)
        print(
            f"registered calibrations/{cert.calibration_ref}.json (verified): records of "
            f"{cert.dimension_id!r} may carry calibration_status {cert.calibration_status} "
            f"with calibration_ref {cert.calibration_ref}",
            file=sys.stderr,
        )
    return 0


def _interval(level: float, n_resamples: Any, rng: Any) -> str:
    return f"{100 * level:g}% BCa, {n_resamples} resamples, seed {rng}"


def summary(result: Any, *, registering: bool = False) -> str:
    """The one-line summary: which interval is displayed, which one graduation is judged on,
    and what status a record may carry (a graduating result only once it is registered)."""
    shown = _interval(result.level, result.n_resamples, result.rng)
    decision = result.decision_kappa_ci
    rule_ci = result.decision_rule.get("ci", {})
    pre = _interval(
        float(rule_ci.get("level", result.level)),
        rule_ci.get("n_resamples"),
        rule_ci.get("rng", result.rng),
    )
    if pre == shown:
        kappa = f"kappa {describe_kappa(result)} ({shown}: the pre-registered interval)"
    else:
        low = "undefined" if decision is None or decision.low is None else f"{decision.low:.3f}"
        kappa = (
            f"kappa {describe_kappa(result)} ({shown}); graduation judged on the "
            f"pre-registered interval ({pre}): lower bound {low}"
        )
    status = f"status {result.calibration_status}"
    if result.graduates and not result.mintable:
        status += f" (never minted: {result.mint_reason})"
    elif result.graduates and not registering:
        status = (
            f"status uncalibrated until registered (--register mints {result.calibration_status})"
        )
    return (
        f"{kappa}; n={result.n} missing={result.n_missing} "
        f"disagreements={len(result.disagreements)}; {result.graduation_reason}; {status}; "
        f"preregistration {result.preregistration}"
    )


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
