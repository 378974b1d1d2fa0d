"""``evalkit gold``: verify the frozen gold sets, or freeze a new version."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evalkit.cli.main import SUBCOMMANDS
from evalkit.gold.sets import freeze
from evalkit.prereg.gold_verify import verify_all


def register(subparsers: Any) -> None:
    """Add the ``gold`` subcommand and its ``verify`` and ``freeze``."""
    parser = subparsers.add_parser("gold", help=SUBCOMMANDS["gold"], description=__doc__)
    sub = parser.add_subparsers(dest="gold_command", metavar="ACTION")
    verify = sub.add_parser(
        "verify",
        help="verify every version of every set, its history, its rules and the lock (exit 1 "
        "on any change)",
    )
    verify.add_argument(
        "--root", default="gold", help="folder holding the gold sets (default gold)"
    )
    verify.add_argument("--json", action="store_true", help="one JSON object per set on stdout")
    verify.set_defaults(func=_verify)
    freeze = sub.add_parser("freeze", help="mint the next version of a set from a folder")
    freeze.add_argument("--name", required=True, help="set name, e.g. instruction-adherence")
    freeze.add_argument("--from", dest="source", required=True, help="folder with the files")
    freeze.add_argument(
        "--root", default="gold", help="folder holding the gold sets (default gold)"
    )
    freeze.add_argument(
        "--date", default=None, help="manifest date, YYYY-MM-DD (default: today, UTC)"
    )
    freeze.set_defaults(func=_freeze)
    parser.set_defaults(func=lambda args: (parser.print_help(sys.stderr), 1)[1])


def _verify(args: argparse.Namespace) -> int:
    results = verify_all(args.root)
    if not results:
        print(f"evalkit gold verify: no gold set version under {args.root}", file=sys.stderr)
        return 1
    for r in results:
        if args.json:
            print(json.dumps(r.to_dict(), sort_keys=True))
        elif r.ok:
            print(f"ok      {r.name} v{r.version}  {r.n_items} items  sha256 {r.sha256}")
        else:
            what = f"v{r.version}" if r.version is not None else r.path.name
            print(f"CHANGED {r.name} {what}: {r.message}")
    bad = [r for r in results if not r.ok]
    for r in bad:
        print(f"evalkit gold verify: {r.path}: {r.message}", file=sys.stderr)
    return 1 if bad else 0


def _freeze(args: argparse.Namespace) -> int:
    gs = freeze(args.source, args.root, args.name, date=args.date)
    balance = ", ".join(f"{k}={v}" for k, v in gs.class_balance.items())
    print(
        f"froze {gs.name} v{gs.version} at {gs.path}: {gs.n_items} items ({balance}), "
        f"sha256 {gs.sha256}"
    )
    return 0
