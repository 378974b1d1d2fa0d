#!/usr/bin/env python3
"""Commit messages: a subject of at most 72 characters, a blank line, then a body.

The one check behind the ``commit-msg`` hook (``.githooks/commit-msg``, installed by
``make install``) and CI (``make test`` checks every commit after the one named in
``.ci/commits-checked-since``; history before it is left as it was written).

    commit_message.py --file MSGFILE        check one message (the hook)
    commit_message.py --since-file FILE     check the commits after FILE's commit (CI)

A commit that slipped through once it is shared history (rewriting merged history would cost
more than it fixes) is named in ``.ci/commit-message-exceptions`` beside FILE, one per line:
its full sha, then why it stands; each is printed as it is passed over.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

MAX_SUBJECT = 72


def problems(message: str, *, merge: bool = False) -> list[str]:
    """What is wrong with ``message`` (git's comment lines removed); empty when it is fine."""
    lines = [line.rstrip() for line in message.splitlines() if not line.startswith("#")]
    while lines and not lines[-1]:
        lines.pop()
    if not lines or not lines[0].strip():
        return ["the subject line is empty"]
    found = []
    if len(lines[0]) > MAX_SUBJECT:
        found.append(f"the subject has {len(lines[0])} characters (at most {MAX_SUBJECT})")
    if merge:
        return found  # a merge names its branch; its body is optional
    if len(lines) < 3 or lines[1] or not any(line.strip() for line in lines[2:]):
        found.append("no body: a blank line after the subject, then why the change was made")
    return found


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def exceptions(path: Path) -> dict[str, str]:
    """The commits passed over (full sha -> why), from ``path`` (none when it is absent)."""
    if not path.exists():
        return {}
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        sha, _, why = line.partition(" ")
        if len(sha) != 40 or not why.strip():
            raise SystemExit(f"{path}:{n}: a full 40-character sha, a space, then why it stands")
        out[sha] = why.strip()
    return out


def check_since(base: str, passed_over: dict[str, str] | None = None) -> int:
    """Check every commit after ``base`` on HEAD; 0 when all are fine, else 1."""
    present = subprocess.run(["git", "cat-file", "-e", f"{base}^{{commit}}"], capture_output=True)
    spec = f"{base}..HEAD" if present.returncode == 0 else "HEAD^!"
    if present.returncode != 0:  # a shallow clone: the base is not here, check what is
        print(f"commit messages: {base[:12]} is not in this clone; checking HEAD only")
    bad = 0
    for sha in _git("rev-list", spec).split():
        if sha in (passed_over or {}):
            print(f"commit {sha[:12]}: passed over ({(passed_over or {})[sha]})")
            continue
        parents = _git("rev-list", "--parents", "-n", "1", sha).split()[1:]
        found = problems(_git("log", "-1", "--format=%B", sha), merge=len(parents) > 1)
        for problem in found:
            subject = _git("log", "-1", "--format=%s", sha).strip()
            print(f"commit {sha[:12]} ({subject[:50]}...): {problem}", file=sys.stderr)
        bad += bool(found)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--file", help="a commit message file (the commit-msg hook's argument)")
    group.add_argument("--since-file", help="a file holding the last commit not checked")
    args = parser.parse_args(argv)
    if args.file is not None:
        found = problems(Path(args.file).read_text(encoding="utf-8", errors="replace"))
        for problem in found:
            print(f"commit message: {problem}", file=sys.stderr)
        return 1 if found else 0
    since = Path(args.since_file)
    passed_over = exceptions(since.with_name("commit-message-exceptions"))
    return check_since(since.read_text(encoding="utf-8").strip(), passed_over)


if __name__ == "__main__":
    sys.exit(main())
