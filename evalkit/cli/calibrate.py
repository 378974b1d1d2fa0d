"""``evalkit calibrate``: a judge's labels against a frozen gold set, written as JSON.

Labels (--labels): a run log of `evalkit judge run` (recognised by its schema line; with
several judges in it, --judge NAME picks one), or a .csv / JSON-lines file in long format
item_id,label[,repeat][,outcome][,judge] (one label per item needs no repeat column). A run
log's items must be the gold set's (its gold set sha256 and every item's content hash are
checked; another version or changed items are refused, naming them).

A run log, or K > 1 repeats per item, is a model judge's: kappa vs gold on every labelled call
and on the per-item majority label (ties counted, never broken), each with a BCa interval that
resamples items; Fleiss kappa across repeats, the flip rate (Wilson), and the share of calls
without a label (cannot-parse, error, never run). It is judged under the pre-registered
gold/<set>/DECISION_RULE-model-judge.json; one label per item under DECISION_RULE.json; --rule
FILE names another rule, which must be locked (unless --no-lock).

The JSON result goes to stdout (or ``--out``); the summary goes to stderr: kappa with the
interval this run displays (its level, resamples and seed), then the pre-registered interval
graduation is judged on, the verdict and the status (``undefined (reason)`` where kappa or its
interval is undefined); with repeats, one line each for the majority kappa, the consistency
and the calls.

The run needs the pre-registration lock (``evalkit preregister``) and refuses when the locked
gold set or decision rule changed. ``--no-lock`` runs without one: the result then says
``"preregistration": "none (--no-lock)"`` and can never be registered.

``--register`` mints a graduating calibration: it writes the calibration certificate
``calibrations/<calibration_ref>.json`` into this repository (never anywhere else), re-checks
it, and only then may records carry its ``calibrated:`` status, and only records whose judge
has the identity that earned it (docs/JUDGES.md: the spec, the model the API reported, the
prompt template, the parameters, K). A certificate made from a labels file says so and names
no judge: no record can claim it. A calibration against a gold set outside the repository, or
not as the lock holds it, is computed and shown, never minted: ``mintable`` is false and
``mintable_reason`` says why. Graduation is judged only under the repository's locked rule for
the gold set's name; under any other rule, or with ``--no-lock``, the result says "not
pre-registered" and does not graduate. A certificate whose re-check would exceed the bound
(calls x resamples) is not registered.

Exit 0 when the result was written (and registered, with ``--register``), whether the judge
graduates or not; exit 1 on bad input (a ``--labels`` that is not a file or a ``--gold`` that
is not a directory, refused at once; unreadable labels, a gold set whose bytes changed, a
changed pre-registered input, no lock without ``--no-lock``) and on ``--register`` of a
calibration that did not graduate or cannot be minted (the result is still written).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from evalkit.cli.main import SUBCOMMANDS
from evalkit.errors import DegenerateDataWarning
from evalkit.record.dimension import DimensionId


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` subcommand."""
    parser = subparsers.add_parser(
        "calibrate",
        help=SUBCOMMANDS["calibrate"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--labels",
        metavar="RUNLOG|FILE",
        help="a run log of `evalkit judge run`, or labels (.csv / .jsonl: item_id, label"
        "[, repeat][, outcome][, judge])",
    )
    src.add_argument(
        "--rule-judge", action="store_true", help="calibrate the rule judge (apply_rules)"
    )
    parser.add_argument(
        "--gold",
        default=None,
        help=f"gold set folder or version (default {DEFAULT_GOLD}, its newest version: here, "
        "else evalkit's own checkout)",
    )
    parser.add_argument(
        "--judge",
        default=None,
        metavar="NAME",
        help="the judge to calibrate when the labels hold several (a run log of several "
        "judges); with a plain labels file, the name the result gives it (default: the file)",
    )
    parser.add_argument(
        "--rule",
        default=None,
        metavar="FILE",
        help="decision rule to judge graduation by (must be locked; default: the gold set's "
        "DECISION_RULE-model-judge.json for a model judge, else DECISION_RULE.json)",
    )
    parser.add_argument(
        "--dimension", default=DimensionId.INSTRUCTION_ADHERENCE.value, help="judge dimension id"
    )
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


DEFAULT_GOLD = "gold/instruction-adherence"


def _gold_path(given: str | None) -> Path:
    """``--gold``, else the default set here (the cwd), else in evalkit's own checkout."""
    if given is not None:
        return Path(given)
    here = Path(DEFAULT_GOLD)
    if here.exists():
        return here
    from evalkit.provenance.repository import repo_root

    return repo_root() / DEFAULT_GOLD


def _labels(args: argparse.Namespace, gold: Any) -> tuple[Any, str | None]:
    """The labels to calibrate and the judge name to give them (None: the labels' own)."""
    from evalkit.calibration import RULE_JUDGE_NAME, read_labels, rule_judge_labels
    from evalkit.calibration.labels import say_notes

    if args.rule_judge:
        return rule_judge_labels(gold), args.judge or RULE_JUDGE_NAME
    labels = read_labels(args.labels, None if args.judge is None else args.judge)
    say_notes(labels)
    if labels.judge is None:  # a plain file: --judge names it, else its name (never a path)
        return labels, args.judge or Path(args.labels).name
    return labels, None


def _refuse_missing_paths(args: argparse.Namespace) -> None:
    """Refuse a ``--labels`` or ``--gold`` that names nothing, before anything heavy loads.

    The calibration stack takes seconds to import; a typo should not.
    """
    import os

    from evalkit.errors import EvalkitError
    from evalkit.files.input import open_regular

    if args.labels is not None:  # a regular file, or the reason it is not (FIFO, folder, ...)
        if not os.path.lexists(args.labels):
            raise EvalkitError(f"--labels {args.labels}: does not exist")
        os.close(open_regular(args.labels, "--labels"))
    if args.gold is not None and not Path(args.gold).is_dir():
        what = "is not a directory" if Path(args.gold).exists() else "does not exist"
        raise EvalkitError(f"--gold {args.gold}: {what} (a gold set folder or version)")


def _say_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Say each degenerate interval (a perfect judge's) in one line on stderr.

    Never as a warning with a source path (issue 24 #16); any other warning is shown as
    Python shows it.
    """
    notes: dict[str, None] = {}
    for w in caught:
        if issubclass(w.category, DegenerateDataWarning):
            notes[str(w.message)] = None
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for note in notes:
        print(f"evalkit calibrate: note: {note}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    _refuse_missing_paths(args)
    from evalkit.calibration import calibrate
    from evalkit.calibration import register as register_calibration
    from evalkit.cli.common import output_path
    from evalkit.gold.sets import load

    # before any work: never onto a gold file, the labels, or another place no flag writes
    inputs = [args.labels] if args.labels else []
    out = (
        output_path(args.out, "--out", gold=[_gold_path(args.gold)], inputs=inputs)
        if args.out
        else None
    )
    gold = load(_gold_path(args.gold))
    labels, judge = _labels(args, gold)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateDataWarning)
        result = calibrate(
            labels,
            gold,
            dimension_id=args.dimension,
            judge=judge,
            n_resamples=args.n_resamples,
            rng=args.rng,
            decision_rule=args.rule,
            no_lock=args.no_lock,
        )
    _say_warnings(caught)
    text = result.to_json() + "\n"
    if out is not None:
        _write_out(out, text)
    else:
        sys.stdout.write(text)
    if result.repeats is not None:
        print(repeats_summary(result), file=sys.stderr)
    print(summary(result, registering=args.register), file=sys.stderr)
    if args.register:
        cert = register_calibration(result)
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
    """The one-line summary of a calibration.

    It says which interval is displayed, which one graduation is judged on, and what status a
    record may carry (a graduating result only once it is registered).
    """
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
        if result.n < 2:
            why = "fewer than 2 items"
        elif getattr(result.kappa, "few_items", False):
            why = f"{result.n} items, whose standard error is 0 or undefined"
        else:
            why = "the bootstrap is degenerate"
        return f"{k.statistic:.3f} [CI undefined ({why})]"
    return f"{k.statistic:.3f} [{k.low:.3f}, {k.high:.3f}]"


def _write_out(path: Path, text: str) -> None:
    from evalkit.files.errors import input_file_error
    from evalkit.files.output import write_output

    try:
        write_output(path, text, "calibration result")
    except OSError as exc:
        raise input_file_error(exc, "calibration result", path) from exc


def _est(e: Any, percent: bool = False) -> str:
    """``0.825 [0.757, 0.887]`` (or percentages); ``undefined`` parts said as such."""
    if e.statistic is None:
        return "undefined"

    def f(x: float) -> str:
        return f"{100 * x:.1f}%" if percent else f"{x:.3f}"

    if e.low is None or e.high is None:
        return f"{f(e.statistic)} [CI undefined]"
    return f"{f(e.statistic)} [{f(e.low)}, {f(e.high)}]"


def repeats_summary(result: Any) -> str:
    """What a calibration with repeats adds to the summary.

    The design, the majority kappa, the consistency over repeats and the calls without a
    label, each with its n.
    """
    r = result.repeats
    calls = r.calls
    ties = len(r.majority_ties)
    lines = [
        f"judge {result.judge}: K = {r.repeats} repeat(s) over {r.n_items} of "
        f"{result.n_gold} gold items ({calls['expected']} calls expected); categories "
        f"{', '.join(r.categories)}",
        f"kappa on all repeats {_est(result.kappa_ci)}, n = {result.kappa_ci.n} labelled calls "
        f"({result.kappa_ci.method})",
        f"kappa on the majority label {_est(r.kappa_majority)}, n = {r.kappa_majority.n} items; "
        f"{ties} tie(s) left out, never broken"
        + (f" ({', '.join(r.majority_ties[:5])}{', ...' if ties > 5 else ''})" if ties else ""),
        f"Fleiss kappa across repeats {_est(r.repeat_kappa)}, n = {r.repeat_kappa.n} items "
        f"({r.repeat_kappa.method})",
        f"flip rate {_est(r.flip_rate, True)} (Wilson), {r.flips} of {r.flip_rate.n} items with "
        ">= 2 labelled repeats disagree",
        "calls: "
        + ", ".join(
            f"{k} {calls[k]} ({_est(r.outcomes[k], True)})"
            for k in ("ok", "cannot-parse", "error", "not-run")
        )
        + f" of {calls['expected']}",
    ]
    return "\n".join(lines)
