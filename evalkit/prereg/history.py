"""The pre-registration lock's committed history: what makes a deleted or rewritten lock visible.

A lock file says what it likes about its own dates; the commits that hold it are harder to
rewrite. :func:`lock_history` reads every committed version of the lock. An entry is its whole
content (:func:`evalkit.prereg.lock.entry_key`), so every entry a commit held is compared with
the current lock: :func:`rewritten_entries` lists what a committed version held that the lock
no longer holds, unchanged (an honest lock only grows: an amendment adds a version and keeps
the old one; the one edit allowed is ``preregister`` recording the design of an entry locked
before designs were, :data:`~evalkit.prereg.lock.DESIGN_RECORD_FIELDS`, which adds fields and
changes none, and :func:`recorded_design_error` checks that what it added is the design of the
cell the entry's ``sha256`` names). :func:`uncommitted_changes` says how the lock differs from
its last commit, and :func:`first_committed` dates an entry by the oldest commit holding it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.hashing import sha256_hex
from evalkit.prereg.lock import DESIGN_RECORD_FIELDS, entry_id, entry_key, parse_lock
from evalkit.prereg.study_params import (
    Parameter,
    design_of,
    design_sha256,
    parameters_cell,
    parse_parameters,
)
from evalkit.provenance.git import file_history

__all__ = [
    "Committed",
    "first_committed",
    "holds",
    "lock_history",
    "recorded_design_error",
    "rewritten_entries",
    "uncommitted_changes",
]

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


def holds(entry: Mapping[str, Any], committed: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is the ``committed`` entry, unchanged.

    The same content, or that content with its design recorded: ``committed`` had none, and
    only :data:`~evalkit.prereg.lock.DESIGN_RECORD_FIELDS` were added.
    """
    if entry_key(entry) == entry_key(committed):
        return True
    if "design" in committed or "design" not in entry or entry_id(entry) != entry_id(committed):
        return False
    base = {k: v for k, v in entry.items() if k not in DESIGN_RECORD_FIELDS}
    return entry_key(base) == entry_key(committed)


def _differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k, _ABSENT) != b.get(k, _ABSENT))


_ABSENT = object()


def _by_id(entries: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, int], Mapping[str, Any]]:
    return {entry_id(e): e for e in entries}


def rewritten_entries(lock: Mapping[str, Any], history: list[Committed]) -> list[dict[str, Any]]:
    """Entries a committed version of the lock held that ``lock`` no longer holds unchanged.

    Each result names the entry (``kind``, ``name``, ``version``), the oldest commit (and
    date) holding it as it was, and ``changed``: the fields that differ now (None: the entry
    is gone).
    """
    now = _by_id(lock["entries"])
    gone: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for commit, date, old in history:  # newest first: the last write is the oldest commit
        for e in old["entries"]:
            current = now.get(entry_id(e))
            if current is not None and holds(current, e):
                continue
            gone[entry_key(e)] = {
                "kind": e["kind"],
                "name": e["name"],
                "version": entry_id(e)[2],
                "sha256": e["sha256"],
                "locked_on": e.get("locked_on"),
                "commit": commit,
                "committed_on": date,
                "changed": None if current is None else _differing(e, current),
            }
    return sorted(gone.values(), key=lambda g: (g["kind"], g["name"], g["version"]))


def first_committed(entry: Mapping[str, Any], history: list[Committed]) -> tuple[str, str] | None:
    """``(commit, date)`` of the oldest committed lock holding ``entry``; None if none does."""
    found = None
    for commit, date, old in history:
        committed = _by_id(old["entries"]).get(entry_id(entry))
        if committed is not None and holds(entry, committed):
            found = (commit, date)
    return found


def uncommitted_changes(lock: Mapping[str, Any], history: list[Committed]) -> list[str]:
    """How ``lock`` differs from the newest committed lock, one clause each.

    Empty when it does not, or when there is no committed lock to compare it with.
    """
    if not history:
        return []
    commit, _, last = history[0]
    before = _by_id(last["entries"])
    out = []
    for e in lock["entries"]:
        kind, name, version = entry_id(e)
        old = before.get(entry_id(e))
        if old is None:
            out.append(f"{kind} {name!r} version {version} was added")
        elif entry_key(old) != entry_key(e):
            out.append(f"{kind} {name!r} version {version}: {', '.join(_differing(old, e))}")
    now = _by_id(lock["entries"])
    out += [f"{k} {n!r} version {v} was removed" for (k, n, v) in before if (k, n, v) not in now]
    fields = [k for k in _differing(last, lock) if k != "entries"]
    if fields:
        out.append(f"the lock's own fields {', '.join(fields)}")
    return [f"{clause} (since commit {commit[:12]})" for clause in out]


def _committed_cell(sha256: str, notebook: Path) -> str | None:
    """The parameters cell whose sha256 is ``sha256`` in a committed version of ``notebook``."""
    for revision in file_history(notebook):
        if revision.content is None:
            continue
        try:
            nb = json.loads(revision.content)
            cell = parameters_cell(nb, notebook) if isinstance(nb, dict) else None
        except (EvalkitError, ValueError):
            continue
        if cell is not None and sha256_hex(cell.encode("utf-8")) == sha256:
            return cell
    return None


def recorded_design_error(
    entry: Mapping[str, Any],
    source_sha256: str,
    declared: Mapping[str, Parameter],
    notebook: Path,
) -> str | None:
    """Why a design recorded onto an older entry is not its locked cell's; None when it is.

    ``preregister`` records, once, the design of an entry locked before designs were recorded
    (its ``sha256`` is its parameters cell's): the defaults of that very cell, the current one
    (``source_sha256``, ``declared``) or a committed version of ``notebook``. A design that is
    not that cell's, or a cell found nowhere, is no pre-registration: the lock was edited.
    """
    if "design_recorded_on" not in entry or not isinstance(entry.get("design"), dict):
        return None
    if entry["sha256"] != source_sha256:
        cell = _committed_cell(entry["sha256"], notebook)
        if cell is None:
            return (
                "has a design recorded onto an entry that holds only its parameters cell's "
                "hash, and no version of the notebook (current or committed) has that cell"
            )
        declared = parse_parameters(cell, notebook)
    design = design_of({p.name: p.default for p in declared.values()}, declared)
    inputs = [p.name for p in declared.values() if p.is_input]
    differ = [
        field
        for field, ok in (
            ("design", entry["design"] == design),
            ("design_sha256", entry.get("design_sha256") == design_sha256(design)),
            ("inputs", list(entry.get("inputs", inputs)) == inputs),
        )
        if not ok
    ]
    if not differ:
        return None
    return (
        f"has a recorded {', '.join(differ)} that is not the locked parameters cell's (the cell "
        "its sha256 names): the lock was edited by hand"
    )
