"""``evalkit stats``: agreement, sample sizes and threshold studies from the command line.

* ``evalkit stats kappa --labels FILE`` — a long CSV (``item_id,rater,label``; ``item`` is
  accepted for ``item_id``) to Cohen's kappa (two raters, or the pair ``--rater-a/--rater-b``)
  or Fleiss' kappa (three or more raters), with a confidence interval, as JSON.
* ``evalkit stats sample-size ci|test`` — items for a kappa CI of a target width, or for a
  powered test of kappa against a null value (R irr's ``N.cohen.kappa``/``N2.cohen.kappa``).
* ``evalkit stats thresholds --csv FILE --count-column C [--cluster-column S]`` — the fire
  rate of "count >= t" for every t, with cluster-bootstrap intervals, as JSON (optionally a
  PNG plot). An empty cell is an unknown count, never 0.

Data go to stdout as JSON; warnings and errors to stderr.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evalkit.cli.main import SUBCOMMANDS
from evalkit.cli.stats_prevalence import register_prevalence
from evalkit.errors import EvalkitError
from evalkit.files.input import read_text
from evalkit.finite import finite_float

_ITEM_COLUMNS = ("item_id", "item")


def register(subparsers: Any) -> None:
    """Add the ``stats`` subcommand and its ``kappa``, ``sample-size`` and ``thresholds``."""
    parser = subparsers.add_parser(
        "stats",
        help=SUBCOMMANDS["stats"],
        description="Statistics for rubric authors and calibration: kappa with a confidence "
        "interval from a label file, sample sizes for kappa, threshold studies of a count.",
    )
    parser.set_defaults(func=lambda args: _usage(parser))
    sub = parser.add_subparsers(dest="stats_command", metavar="STATS_COMMAND")
    _register_kappa(sub)
    _register_sample_size(sub)
    _register_thresholds(sub)
    register_prevalence(sub)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 1


def _emit(payload: dict[str, Any], compact: bool) -> int:
    text = json.dumps(payload, indent=None if compact else 2, allow_nan=False, default=str)
    sys.stdout.write(text + "\n")
    return 0


@contextmanager
def _csv_rows(path: Path) -> Iterator[csv.DictReader[str]]:
    """A ``csv.DictReader`` over the UTF-8 CSV file at ``path``.

    Read through :func:`evalkit.files.input.read_text`: a regular file only (a FIFO or device
    is refused, never waited on), bounded by the byte and line caps, strict UTF-8 (a bad byte
    is named by line and column). A row the csv module refuses (a field over its size limit, a bad quote) is an
    ``EvalkitError`` naming the file and line, never a traceback.
    """
    text = read_text(path, "CSV file", line_cap=True)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        yield reader
    except csv.Error as exc:
        # the DictReader's own line_num lags behind on a failed row; its reader's does not
        line = reader.reader.line_num
        raise EvalkitError(f"{path}: line {line}: not readable as CSV ({exc})") from None


def _header_text(header: Sequence[str]) -> str:
    return f"header: {', '.join(header) or 'empty'}"


# --------------------------------------------------------------------------- kappa


def _register_kappa(sub: Any) -> None:
    p = sub.add_parser(
        "kappa",
        help="Cohen's or Fleiss' kappa with a CI from a long label CSV",
        description="Read a long CSV with columns item_id,rater,label (one row per rating) "
        "and print Cohen's kappa (2 raters, or --rater-a/--rater-b) or Fleiss' kappa (3+ "
        "raters) with its standard error and a confidence interval as JSON. Items lacking a "
        "rating are left out by the statistic (Cohen: items rated by both raters).",
    )
    p.add_argument("--labels", required=True, type=Path, help="long CSV: item_id,rater,label")
    p.add_argument("--rater-a", help="first rater of a Cohen pair (with --rater-b)")
    p.add_argument("--rater-b", help="second rater of a Cohen pair (with --rater-a)")
    p.add_argument(
        "--statistic",
        choices=("auto", "cohen", "fleiss"),
        default="auto",
        help="auto (default): Cohen for two raters, Fleiss for more",
    )
    p.add_argument(
        "--weights",
        choices=("linear", "quadratic"),
        help="weighted Cohen kappa (labels must be numbers)",
    )
    p.add_argument(
        "--method",
        choices=("analytic", "percentile", "bca"),
        default="bca",
        help="interval method (default bca: bootstrap, bias-corrected and accelerated)",
    )
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--compact", action="store_true", help="print one line")
    p.set_defaults(func=run_kappa)


def read_long_labels(path: Path) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """Items, raters (first-appearance order) and ``{(item, rater): label}`` of a long CSV.

    Raises ``EvalkitError`` naming file, line and field for a missing column, an empty field
    or a rater labelling the same item twice with different labels.
    """
    with _csv_rows(path) as reader:
        header = reader.fieldnames or []
        item_col = next((c for c in _ITEM_COLUMNS if c in header), None)
        missing = [c for c in ("rater", "label") if c not in header]
        if item_col is None or missing:
            need = ["item_id"] if item_col is None else []
            raise EvalkitError(
                f"{path}: line 1: missing column(s) {', '.join(need + missing)} "
                f"({_header_text(header)})"
            )
        items: dict[str, None] = {}
        raters: dict[str, None] = {}
        labels: dict[tuple[str, str], str] = {}
        for row in reader:
            line = reader.line_num
            values = {c: (row.get(c) or "").strip() for c in (item_col, "rater", "label")}
            for col, val in values.items():
                if not val and col != "label":
                    raise EvalkitError(f"{path}: line {line}: field {col!r} is empty")
            item, rater, label = values[item_col], values["rater"], values["label"]
            if not label:
                continue  # an empty label is a missing rating, not a category
            key = (item, rater)
            if key in labels and labels[key] != label:
                raise EvalkitError(
                    f"{path}: line {line}: field 'label': rater {rater!r} labelled item "
                    f"{item!r} twice ({labels[key]!r}, {label!r})"
                )
            labels[key] = label
            items.setdefault(item, None)
            raters.setdefault(rater, None)
    if not labels:
        raise EvalkitError(f"{path}: no ratings")
    return list(items), list(raters), labels


def _as_numbers(labels: dict[tuple[str, str], str], path: Path) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for key, lab in labels.items():
        try:
            x = float(lab)
        except ValueError:
            raise EvalkitError(
                f"{path}: field 'label': weighted kappa needs numeric labels, got {lab!r} "
                f"(item {key[0]!r}, rater {key[1]!r})"
            ) from None
        out[key] = int(x) if x.is_integer() else x
    return out


def run_kappa(args: argparse.Namespace) -> int:
    """``evalkit stats kappa``."""
    from evalkit.stats import cohen_kappa, fleiss_kappa  # deferred: loads scipy

    if (args.rater_a is None) != (args.rater_b is None):
        raise EvalkitError("give both --rater-a and --rater-b, or neither")
    items, raters, labels = read_long_labels(args.labels)
    values: dict[tuple[str, str], Any] = (
        _as_numbers(labels, args.labels) if args.weights else dict(labels)
    )
    if args.rater_a is not None:
        for r in (args.rater_a, args.rater_b):
            if r not in raters:
                raise EvalkitError(f"{args.labels}: no rater {r!r} (raters: {', '.join(raters)})")
        raters = [args.rater_a, args.rater_b]
    statistic = args.statistic
    if statistic == "auto":
        statistic = "cohen" if len(raters) == 2 else "fleiss"
    if statistic == "cohen" and len(raters) != 2:
        raise EvalkitError(
            f"Cohen's kappa needs exactly 2 raters, {args.labels} has {len(raters)}; "
            "pick a pair with --rater-a/--rater-b"
        )
    if args.weights and statistic != "cohen":
        raise EvalkitError("--weights applies to Cohen's kappa only")
    ratings = [[values.get((it, r)) for r in raters] for it in items]
    if statistic == "cohen":
        result = cohen_kappa(ratings, weights=args.weights)
    else:
        result = fleiss_kappa(ratings)
    low, high = result.confidence_interval(
        level=args.level, method=args.method, n_resamples=args.n_resamples, rng=args.seed
    )
    payload = {
        "file": str(args.labels),
        "statistic": result.name,
        "value": finite_float(result.statistic),
        "standard_error": finite_float(result.standard_error),
        "n_items": int(result.n),
        "raters": raters,
        "categories": [str(c) for c in result.categories],
        "confidence_interval": {
            "level": args.level,
            "method": args.method,
            "low": finite_float(low),
            "high": finite_float(high),
            "n_resamples": args.n_resamples if args.method != "analytic" else None,
            "seed": args.seed if args.method != "analytic" else None,
        },
        "degenerate": bool(getattr(result, "degenerate", False)),
    }
    return _emit(payload, args.compact)


# --------------------------------------------------------------------------- sample size


def _probabilities(text: str) -> float | list[float]:
    """``0.3`` (a binary prevalence) or ``0.2,0.3,0.5`` (category probabilities)."""
    try:
        parts = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a probability or comma-separated probabilities, got {text!r}"
        ) from None
    return parts[0] if len(parts) == 1 else parts


def _register_sample_size(sub: Any) -> None:
    p = sub.add_parser(
        "sample-size",
        help="items needed for a kappa CI width or a powered kappa test",
        description="Sample sizes for Cohen's kappa (two raters).",
    )
    p.set_defaults(func=lambda args: _usage(p))
    ss = p.add_subparsers(dest="sample_size_command", metavar="KIND")

    ci = ss.add_parser(
        "ci",
        help="items for a CI of kappa with a target half-width (or width)",
        description="Items needed so that the Wald CI of Cohen's kappa has the target "
        "half-width, from the Fleiss-Cohen-Everitt (1969) large-sample variance at the "
        "expected kappa and prevalence.",
    )
    ci.add_argument("--kappa", type=float, required=True, help="expected kappa")
    ci.add_argument(
        "--prevalence",
        type=_probabilities,
        required=True,
        help="positive rate (binary) or comma-separated category probabilities",
    )
    ci.add_argument(
        "--prevalence-b",
        type=float,
        help="second rater's positive rate when it differs (binary; e.g. judge vs gold)",
    )
    width = ci.add_mutually_exclusive_group(required=True)
    width.add_argument("--half-width", type=float, help="target half-width (kappa +- w)")
    width.add_argument("--width", type=float, help="target total width (upper - lower)")
    ci.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    ci.add_argument("--compact", action="store_true", help="print one line")
    ci.set_defaults(func=run_sample_size_ci)

    test = ss.add_parser(
        "test",
        help="items to test kappa against a null value (R irr N.cohen.kappa)",
        description="Items needed to reject H0: kappa = kappa_null when the true kappa is "
        "kappa_true. Binary: --rate1/--rate2 (Cantor 1996, R irr N.cohen.kappa). More "
        "categories with common marginals: --marginals (Flack et al. 1988, N2.cohen.kappa).",
    )
    test.add_argument("--rate1", type=float, help="rater 1's positive rate (binary)")
    test.add_argument("--rate2", type=float, help="rater 2's positive rate (binary)")
    test.add_argument(
        "--marginals",
        type=_probabilities,
        help="comma-separated category probabilities common to both raters (k >= 2)",
    )
    test.add_argument("--kappa-true", type=float, required=True, help="kappa under H1")
    test.add_argument("--kappa-null", type=float, required=True, help="kappa under H0")
    test.add_argument("--alpha", type=float, default=0.05, help="type I error (0.05)")
    test.add_argument("--power", type=float, default=0.8, help="power (0.8)")
    test.add_argument("--two-sided", action="store_true", help="two-sided test")
    test.add_argument("--compact", action="store_true", help="print one line")
    test.set_defaults(func=run_sample_size_test)


def run_sample_size_ci(args: argparse.Namespace) -> int:
    """``evalkit stats sample-size ci``."""
    from evalkit.stats.power import kappa_ci_plan  # deferred: loads scipy

    half = args.half_width if args.half_width is not None else args.width / 2.0
    plan = kappa_ci_plan(
        args.kappa, args.prevalence, half, args.level, prevalence_b=args.prevalence_b
    )
    return _emit(plan.to_dict(), args.compact)


def run_sample_size_test(args: argparse.Namespace) -> int:
    """``evalkit stats sample-size test``."""
    # deferred: loads scipy
    from evalkit.stats.power import kappa_test_sample_size, kappa_test_sample_size_multi

    binary = args.rate1 is not None or args.rate2 is not None
    if binary == (args.marginals is not None):
        raise EvalkitError("give either --rate1 and --rate2 (binary) or --marginals")
    common = {
        "kappa_true": args.kappa_true,
        "kappa_null": args.kappa_null,
        "alpha": args.alpha,
        "power": args.power,
        "two_sided": args.two_sided,
    }
    if binary:
        if args.rate1 is None or args.rate2 is None:
            raise EvalkitError("give both --rate1 and --rate2")
        n = kappa_test_sample_size(args.rate1, args.rate2, **common)
        payload = {"n": n, "rate1": args.rate1, "rate2": args.rate2, **common}
        payload["method"] = "Cantor (1996), as R irr N.cohen.kappa"
    else:
        marg = args.marginals if isinstance(args.marginals, list) else [args.marginals]
        n = kappa_test_sample_size_multi(marg, **common)
        payload = {"n": n, "marginals": marg, **common}
        payload["method"] = "Flack et al. (1988), as R irr N2.cohen.kappa"
    return _emit(payload, args.compact)


# --------------------------------------------------------------------------- thresholds


def _register_thresholds(sub: Any) -> None:
    p = sub.add_parser(
        "thresholds",
        help="fire rate of 'count >= t' for every t, with cluster-bootstrap CIs",
        description="Threshold study of a count column of a CSV (one row per item): for every "
        "threshold t the items and clusters that would fail, the fire rate with a "
        "cluster-bootstrap CI, the ceiling and floor checks, and the gaps in the observed "
        "values. An empty cell is an unknown count (excluded and counted, never 0).",
    )
    p.add_argument("--csv", required=True, type=Path, help="CSV with one row per item")
    p.add_argument("--count-column", required=True, help="column holding the count")
    p.add_argument("--cluster-column", help="column holding the cluster (e.g. session_id)")
    p.add_argument("--ceiling", type=float, default=0.10, help="fire-rate ceiling (0.10)")
    p.add_argument("--floor", type=float, default=0.0, help="dead-instrument floor (0)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    p.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (2000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--plot", type=Path, help="also write the plot to this PNG/SVG/PDF file")
    p.add_argument("--compact", action="store_true", help="print one line")
    p.set_defaults(func=run_thresholds)


def read_counts(
    path: Path, count_column: str, cluster_column: str | None
) -> tuple[list[float | None], list[str] | None]:
    """Counts (None = empty cell) and cluster labels of a CSV; errors name file, line, field."""
    counts: list[float | None] = []
    clusters: list[str] = []
    with _csv_rows(path) as reader:
        header = reader.fieldnames or []
        for col in (count_column, cluster_column):
            if col is not None and col not in header:
                raise EvalkitError(f"{path}: line 1: no column {col!r} ({_header_text(header)})")
        for row in reader:
            line = reader.line_num
            cell = (row.get(count_column) or "").strip()
            if cell == "" or cell.lower() in ("null", "none", "na", "nan"):
                counts.append(None)
            else:
                try:
                    x = float(cell)
                except ValueError:
                    raise EvalkitError(
                        f"{path}: line {line}: field {count_column!r}: not a number: {cell!r}"
                    ) from None
                if not math.isfinite(x) or x < 0:
                    raise EvalkitError(
                        f"{path}: line {line}: field {count_column!r}: a count must be a "
                        f"finite number >= 0, got {cell!r}"
                    )
                counts.append(x)
            if cluster_column is not None:
                label = (row.get(cluster_column) or "").strip()
                if not label:
                    raise EvalkitError(f"{path}: line {line}: field {cluster_column!r} is empty")
                clusters.append(label)
    return counts, (clusters if cluster_column is not None else None)


def run_thresholds(args: argparse.Namespace) -> int:
    """``evalkit stats thresholds``."""
    from evalkit.stats.thresholds import plot_threshold_study, threshold_study  # deferred: heavy

    counts, clusters = read_counts(args.csv, args.count_column, args.cluster_column)
    study = threshold_study(
        counts,
        clusters,
        ceiling=args.ceiling,
        floor=args.floor,
        level=args.level,
        n_resamples=args.n_resamples,
        rng=args.seed,
    )
    if args.plot is not None:
        fig = plot_threshold_study(study)
        fig.savefig(args.plot)
        print(f"evalkit stats thresholds: wrote {args.plot}", file=sys.stderr)
    payload = {"file": str(args.csv), "count_column": args.count_column, **study.to_json_dict()}
    payload["seed"] = args.seed
    return _emit(payload, args.compact)
