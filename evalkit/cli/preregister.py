"""``evalkit preregister``: lock the sha256 of every rubric, gold set, decision rule and study design.

The lock only grows. A new input is added; a study whose design changed gets a new version of
its entry (an amendment, dated, the old entry kept); a changed rubric, gold version or decision
rule is refused (a changed frozen file is a new file, never an edit). With no lock file but a
lock committed to git at that path, the committed entries are kept: deleting the lock does not
start a new pre-registration.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.cli.main import SUBCOMMANDS
from evalkit.files.input import escape_surrogates
from evalkit.prereg.lock import (
    check_lock,
    default_lock_path,
    entry_id,
    entry_version,
    read_lock,
    write_lock,
)


def register(subparsers: Any) -> None:
    """Add the ``preregister`` subcommand."""
    parser = subparsers.add_parser(
        "preregister",
        help=SUBCOMMANDS["preregister"],
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
        "--reason",
        metavar="WHY",
        help="why a study's design is amended (recorded in the new version of its entry)",
    )
    parser.add_argument(
        "--check", action="store_true", help="only check the lock; exit 1 naming what changed"
    )
    parser.set_defaults(func=_run)


def _what_happened(entry: dict[str, Any], before: dict[tuple[Any, ...], dict[str, Any]]) -> str:
    old = before.get(entry_id(entry))
    if old is None:
        version = entry_version(entry)
        return f"AMENDED v{version}" if version > 1 else "NEW"
    if "design" in entry and "design" not in old:
        return "design recorded"
    return "unchanged"


def _run(args: argparse.Namespace) -> int:
    path = args.out or default_lock_path(args.root)
    if args.check:
        changes = check_lock(path, args.root)
        if changes is None:
            print(f"evalkit preregister: no lock at {path}", file=sys.stderr)
            return 1
        for c in changes:
            print(f"CHANGED {escape_surrogates(c.describe())}")
        if not changes:
            print(f"ok: every input locked in {path} is unchanged")
        return 1 if changes else 0
    from evalkit.cli.common import output_path

    output_path(path, "--out", lock=False)  # a lock, never into gold/, calibrations/, a ledger
    previous = read_lock(path)
    before = {entry_id(e): e for e in (previous or {}).get("entries", [])}
    lock = write_lock(args.out, args.root, kinds=args.kind, reason=args.reason)
    for e in lock["entries"]:
        version = f"v{e.get('version', 1)}"
        print(
            f"{e['kind']:<14} {e['name']:<44} {version:<4} {e['sha256']}  "
            f"{_what_happened(e, before)}"
        )
    print(f"evalkit preregister: {len(lock['entries'])} input(s) locked in {path}", file=sys.stderr)
    return 0
