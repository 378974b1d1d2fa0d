"""``evalkit preregister``: lock the sha256 of every rubric, gold set, decision rule and study."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "preregister",
        help="write the pre-registration lock (rubrics, gold sets, decision rules, studies)",
        description=__doc__,
    )
    parser.add_argument(
        "--out",
        default=None,
        help="lock file (default: preregistration.lock.json at the repo root)",
    )
    parser.add_argument("--root", default=None, help="repository root holding the inputs")
    parser.add_argument(
        "--kind",
        action="append",
        choices=("rubric", "gold", "decision_rule", "study"),
        help="lock only new inputs of this kind (repeatable; default: all kinds)",
    )
    parser.add_argument(
        "--check", action="store_true", help="only check the lock; exit 1 naming what changed"
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from evalkit.prereg import check_lock, default_lock_path, write_lock

    if args.check:
        path = args.out or default_lock_path(args.root)
        changes = check_lock(path, args.root)
        if changes is None:
            print(f"evalkit preregister: no lock at {path}", file=sys.stderr)
            return 1
        for c in changes:
            print(f"CHANGED {c.describe()}")
        if not changes:
            print(f"ok: every input locked in {path} is unchanged")
        return 1 if changes else 0
    lock = write_lock(args.out, args.root, kinds=args.kind)
    path = args.out or default_lock_path(args.root)
    for e in lock["entries"]:
        print(f"{e['kind']:<14} {e['name']:<44} {e['sha256']}")
    print(f"evalkit preregister: {len(lock['entries'])} input(s) locked in {path}", file=sys.stderr)
    return 0
