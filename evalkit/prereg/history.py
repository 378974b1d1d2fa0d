"""The pre-registration lock's committed history: what makes a deleted or rewritten lock visible.

A lock file says what it likes about its own dates; the commits that hold it are harder to
rewrite. :func:`lock_history` reads every committed version of the lock, :func:`rewritten_entries`
lists what a committed version held that the current lock no longer holds (an honest lock only
grows: an amendment adds a version and keeps the old one), and :func:`first_committed` dates an
entry by the oldest commit holding it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.prereg.lock import entry_key, parse_lock
from evalkit.provenance.git import file_history

__all__ = ["Committed", "first_committed", "lock_history", "rewritten_entries"]

#: ``(commit, commit date, lock)`` of one committed version of the lock.
Committed = tuple[str, str, dict[str, Any]]


def lock_history(path: str | os.PathLike[str]) -> list[Committed]:
    """``(commit, date, lock)`` for every committed version of the lock file, newest first.

    Empty outside a git checkout. A committed version that does not parse is skipped.
    """
    out = []
    for rev in file_history(path):
        if rev.content is None:
            continue
        try:
            out.append((rev.commit, rev.date, parse_lock(rev.content, f"{path}@{rev.commit}")))
        except EvalkitError:
            continue
    return out


def rewritten_entries(lock: Mapping[str, Any], history: list[Committed]) -> list[dict[str, Any]]:
    """Entries a committed version of the lock held that ``lock`` no longer holds.

    An entry is its ``(kind, name, version, sha256)``; an amendment adds a version and keeps
    the old one, so nothing honest ever drops from the lock. Each result names the entry and
    the oldest commit (and date) that holds it.
    """
    now = {entry_key(e) for e in lock["entries"]}
    gone: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for commit, date, old in history:  # newest first: the last write is the oldest commit
        for e in old["entries"]:
            k = entry_key(e)
            if k not in now:
                gone[k] = {
                    "kind": k[0],
                    "name": k[1],
                    "version": k[2],
                    "sha256": k[3],
                    "locked_on": e.get("locked_on"),
                    "commit": commit,
                    "committed_on": date,
                }
    return sorted(gone.values(), key=lambda g: (g["kind"], g["name"], g["version"]))


def first_committed(entry: Mapping[str, Any], history: list[Committed]) -> tuple[str, str] | None:
    """``(commit, date)`` of the oldest committed lock holding ``entry``; None if none does."""
    want, found = entry_key(entry), None
    for commit, date, old in history:
        if any(entry_key(e) == want for e in old["entries"]):
            found = (commit, date)
    return found
