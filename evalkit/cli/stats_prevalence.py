"""``evalkit stats prevalence`` and ``evalkit stats plan-prevalence``: class shares on a target.

* ``prevalence``: a judge's labels on a target, the same judge's labels on the gold set (or a
  registered calibration certificate), optionally human labels on a random subsample of the
  target -> the naive, corrected and PPI++ share of every class with intervals and n
  (:mod:`evalkit.analyses.prevalence`).
* ``plan-prevalence``: how many gold items (corrected design) and how many human labels
  (PPI++) give an interval of half-width h (:func:`evalkit.stats.plan_prevalence`).

JSON goes to stdout, a readable summary to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.input import dumps, parse_json, read_text

__all__ = ["register_prevalence", "run_plan_prevalence", "run_prevalence"]

DEFAULT_GOLD = Path("gold/instruction-adherence")

_LAYOUTS = """\
label files (CSV, UTF-8, a header line):
  one row per item:       item_id,label         (an empty label: the judge gave none)
  one row per judge call: item_id,judge,repeat,label,outcome
                          (read so when the header has 'repeat'; outcome 'ok' carries a
                          label, any other outcome none; --judge picks one judge of several)

one label per item from repeated calls: an item's label is the label strictly more of its
'ok' calls gave than any other. A tie for the most calls, or no 'ok' call, leaves the item
without a label: counted and listed, never broken by order or seed, never guessed.

an item the judge left without a label is its outcome '(no label)', on the target and on
the gold set alike: never a class and never dropped. Its rate per true class is measured on
the gold set like any label, so the correction accounts for a judge that abstains more on
one class. A gold item absent from the judge's labels is missing (left out, counted).
"""

_ASSUMPTIONS = """\
assumptions: the corrected share assumes the judge's error rates measured on the gold set
hold on the target; PPI++ assumes the human-labelled items are a simple random sample of
the target with correct labels (and nothing about the judge).

exit status: 0 the estimates were written (an undefined estimate is reported with its
reason, never a number); 1 bad input (the message names the file, line and field); 2 I/O.
"""


def register_prevalence(sub: Any) -> None:
    """Add ``prevalence`` and ``plan-prevalence`` to the ``stats`` subcommands."""
    _register_prevalence(sub)
    _register_plan(sub)


def _emit(payload: dict[str, Any], compact: bool) -> int:
    sys.stdout.write(dumps(payload, indent=None if compact else 2, default=str) + "\n")
    return 0


# --------------------------------------------------------------------------- prevalence


def _register_prevalence(sub: Any) -> None:
    p = sub.add_parser(
        "prevalence",
        help="naive, judge-error-corrected and PPI++ class shares of a target, with CIs",
        description="The share of each class on a target a judge labelled: the judge's own "
        "(naive) shares, the shares corrected for its error rates on the gold set "
        "(maximum likelihood, two-sample bootstrap interval), and with --human the PPI++ "
        "shares beside the human-only ones; each with its interval and n. JSON on stdout, "
        "a table on stderr.",
        epilog=_LAYOUTS + "\n" + _ASSUMPTIONS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--target", required=True, type=Path, help="the judge's labels on the target")
    cal = p.add_mutually_exclusive_group(required=True)
    cal.add_argument(
        "--gold-labels", type=Path, help="the same judge's labels on the gold items (with --gold)"
    )
    cal.add_argument(
        "--calibration",
        type=Path,
        metavar="CERT",
        help="a calibration certificate (calibrations/<ref>.json): re-checked offline first; "
        "its labels and the gold set it names are used",
    )
    p.add_argument(
        "--gold",
        type=Path,
        help="with --gold-labels: the gold set, a version folder or a set folder for its newest "
        "version (default gold/instruction-adherence)",
    )
    p.add_argument("--human", type=Path, help="human labels (item_id,label) on target items")
    p.add_argument("--judge", help="the judge to read from long-format files holding several")
    p.add_argument("--root", type=Path, help="repository a --calibration is checked against "
                   "(default: evalkit's own checkout)")  # fmt: skip
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    p.add_argument("--compact", action="store_true", help="print the JSON on one line")
    p.set_defaults(func=run_prevalence)


def _data(args: argparse.Namespace) -> Any:
    from evalkit import gold as gold_sets
    from evalkit.analyses.prevalence import PrevalenceData, read_calibration
    from evalkit.files.labels import read_item_labels

    if args.calibration is not None:
        if args.gold is not None:
            raise EvalkitError("--gold goes with --gold-labels; a certificate names its gold set")
        gold_judge, gold = read_calibration(args.calibration, root=args.root)
    else:
        if args.root is not None:
            raise EvalkitError("--root goes with --calibration")
        gold = gold_sets.load(args.gold or DEFAULT_GOLD)
        gold_judge = read_item_labels(args.gold_labels, "gold labels file", judge=args.judge)
    return PrevalenceData(
        target=read_item_labels(args.target, "target labels file", judge=args.judge),
        gold_judge=gold_judge,
        gold_tag=gold.tag,
        gold_sha256=gold.sha256,
        gold_ids=tuple(gold.items["item_id"]),
        gold_labels=tuple(gold.items["label"]),
        human=read_item_labels(args.human, "human labels file") if args.human else None,
    )


def run_prevalence(args: argparse.Namespace) -> int:
    """``evalkit stats prevalence``."""
    from evalkit.analyses.prevalence import estimate, figures
    from evalkit.analyses.prevalence_page import estimates_frame

    data = _data(args)
    est = estimate(data, level=args.level, n_resamples=args.n_resamples, seed=args.seed)
    payload = {"seed": args.seed, "n_resamples": args.n_resamples, **figures(est, data)}
    say = sys.stderr.write
    say(f"class shares on {data.target.n} target items ({100 * est.level:g}% intervals):\n")
    say(estimates_frame(est, data).to_string() + "\n")
    for reason in (est.corrected.reason, est.ppi.reason if est.ppi is not None else None):
        if reason:
            say(f"undefined: {reason}\n")
    for note in est.notes:
        say(f"note: {note}\n")
    say(f"assumption (corrected): {est.corrected.assumption}\n")
    return _emit(payload, args.compact)


# --------------------------------------------------------------------------- plan-prevalence

_PLAN_EPILOG = """\
shares and rates are given as class=value pairs ("pass=0.5,fail=0.2,cannot-determine=0.3")
or as a JSON object. The judge's error rates come from one of:
  --accuracy A         the judge gives the right class with probability A, its errors
                       spread evenly over the other classes
  --confusion JSON     true class -> {judge label -> probability}, every row summing to 1
  --confusion-file F   the same JSON object in a file

formula: the delta method for the corrected shares (Rogan-Gladen's variance for two
classes) and the PPI++ variance with its optimal lambda; simulation: the estimators run on
seeded simulated data. Both give the expected precision: about half of the studies of that
size get a slightly wider interval.
"""


def _shares(text: str) -> dict[str, float]:
    """``a=0.5,b=0.5`` or a JSON object -> {class: number} (argparse type)."""
    try:
        if text.lstrip().startswith("{"):
            obj = parse_json(text)
            if not isinstance(obj, dict):
                raise ValueError
            return {str(k): _number(v) for k, v in obj.items()}
        out: dict[str, float] = {}
        for part in text.split(","):
            key, sep, value = part.partition("=")
            if not sep or not key.strip() or key.strip() in out:
                raise ValueError
            out[key.strip()] = _number(value.strip())
        return out
    except (ValueError, TypeError, EvalkitError):
        raise argparse.ArgumentTypeError(
            f"expected class=share pairs like 'pass=0.6,fail=0.4' or a JSON object, got {text!r}"
        ) from None


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(value)
    return float(value)


def _register_plan(sub: Any) -> None:
    p = sub.add_parser(
        "plan-prevalence",
        help="gold items and human labels needed for a class-share interval of half-width h",
        description="How many gold items (to measure the judge's error rates for the "
        "corrected share) and how many human labels on the target (for PPI++) give every "
        "class share of a target of N judge-labelled items an interval of half-width h, at "
        "the expected true shares and judge error rates. JSON on stdout, a summary on stderr.",
        epilog=_PLAN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--prevalence",
        type=_shares,
        required=True,
        metavar="SHARES",
        help="the true share you expect of each class on the target, e.g. "
        "pass=0.5,fail=0.2,cannot-determine=0.3 (summing to 1); the plan holds for these",
    )
    rates = p.add_mutually_exclusive_group(required=True)
    rates.add_argument(
        "--accuracy",
        type=float,
        metavar="A",
        help="the judge's expected chance of giving an item its true class (errors spread "
        "evenly over the other classes)",
    )
    rates.add_argument(
        "--confusion",
        metavar="JSON",
        help="the judge's expected error rates: true class -> {judge label -> probability}",
    )
    rates.add_argument("--confusion-file", type=Path, metavar="FILE",
                       help="the same JSON object, in a file")  # fmt: skip
    p.add_argument(
        "--half-width",
        type=float,
        required=True,
        metavar="H",
        help="the half-width wanted for every class share's interval, as a share "
        "(0.05 = +-5 percentage points)",
    )
    p.add_argument(
        "--n-target",
        type=int,
        required=True,
        metavar="N",
        help="target items the judge labels; the corrected share's precision is limited by "
        "them as well as by the gold set",
    )
    p.add_argument(
        "--gold-shares",
        type=_shares,
        metavar="SHARES",
        help="the class mix of the gold set to build (default: --prevalence, a gold set "
        "drawn from the target's population)",
    )
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument(
        "--method",
        choices=("formula", "simulation"),
        default="formula",
        help="formula (default): delta method and PPI++ variance; simulation: the "
        "estimators run on seeded simulated studies",
    )
    p.add_argument("--n-simulations", type=int, default=400,
                   help="simulated studies per candidate size (simulation; 400)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="simulation seed (0)")
    p.add_argument("--compact", action="store_true", help="print the JSON on one line")
    p.set_defaults(func=run_plan_prevalence)


def _confusion(args: argparse.Namespace, classes: list[str]) -> Any:
    if args.accuracy is not None:
        a, k = args.accuracy, len(classes)
        if not 0 < a <= 1 or k < 2:
            raise EvalkitError(
                f"--accuracy must be in (0, 1] and --prevalence name at least 2 classes, got "
                f"{a!r} and {k} class(es)"
            )
        off = (1 - a) / (k - 1)
        return {c: {d: a if c == d else off for d in classes} for c in classes}
    if args.confusion_file is not None:
        text, where = read_text(args.confusion_file, "confusion file"), str(args.confusion_file)
    else:
        text, where = args.confusion, "--confusion"
    try:
        return parse_json(text)
    except EvalkitError as exc:
        raise EvalkitError(f"{where}: {exc}") from None


def run_plan_prevalence(args: argparse.Namespace) -> int:
    """``evalkit stats plan-prevalence``."""
    from evalkit.stats import plan_prevalence

    classes = list(args.prevalence)
    confusion = _confusion(args, classes)
    plan = plan_prevalence(
        args.prevalence,
        confusion,
        args.half_width,
        n_target=args.n_target,
        level=args.level,
        gold_shares=args.gold_shares,
        method=args.method,
        n_simulations=args.n_simulations,
        rng=args.seed,
    )
    payload = {**plan.to_dict(), "confusion": confusion}
    if args.method == "simulation":
        payload.update(n_simulations=args.n_simulations, seed=args.seed)
    sys.stderr.write(_plan_summary(plan) + "\n")
    return _emit(json.loads(dumps(payload)), args.compact)


def _plan_summary(plan: Any) -> str:
    h = f"+-{100 * plan.half_width:g} points at {100 * plan.level:g}%"
    lines = [f"for {h} on every class share of {plan.n_target} target items ({plan.method}):"]
    if plan.n_gold is None:
        lines.append(f"  corrected: no gold set suffices: {plan.gold_reason}")
    else:
        per = ", ".join(f"{c} {n}" for c, n in (plan.n_gold_per_class or {}).items())
        lines.append(f"  corrected: {plan.n_gold} gold items ({per})")
    if plan.n_human is None:
        lines.append(f"  PPI++: {plan.human_reason}")
    else:
        lines.append(f"  PPI++: {plan.n_human} human-labelled target items")
    return "\n".join(lines)
