"""The pre-registration lock: hashes of every frozen input, checked before a run starts.

``evalkit preregister`` writes ``preregistration.lock.json``. Each entry is
``{kind, name, path, sha256, locked_on}`` (plus ``version`` and kind-specific fields):

- each rubric text (``rubrics/*.md``; kind ``rubric``, name ``rubric-v2``),
- each gold set version (kind ``gold``, name ``<set>/v<N>``; the set sha256 over the bytes of
  every file in the version folder except the manifest, computed from disk),
- each calibration decision rule (kind ``decision_rule``, name ``<set>/DECISION_RULE.json``),
- each study's **design** (kind ``study``, path ``notebooks/<name>.ipynb#parameters``):
  ``design`` holds the values of the study's design parameters (every declared parameter
  except the data inputs ``*_dir``/``*_path``/``*_dirs``/``*_paths`` and the execution
  settings named in :data:`evalkit.prereg.study_params.EXECUTION_PARAMETERS`, such as
  ``scheduler``), ``inputs`` names the data inputs, and ``sha256`` is the sha256 of the
  design's canonical JSON. Adding a data input or an execution setting to a notebook leaves
  its design, hence its entry, unchanged: nothing is amended. Entries
  locked before the lock recorded designs keep their ``sha256`` (the hash of the whole
  parameters cell); ``evalkit preregister`` added their ``design`` only while that cell was
  still byte-identical to the locked one, so the recorded design is the locked design.

Frozen files are never re-locked: a changed rubric, gold version or decision rule refuses the
run and ``preregister`` alike (the seeds' rule: a changed check mints a new file, never an
edit). A study's design can be **amended**: ``preregister`` then mints a new entry for the
study (``version`` N+1, its own ``locked_on``, the old entry kept), so a page can say the
pre-registration was amended and when. Only the newest version of an entry is checked.

A lock is a file anyone can delete. Three things make a rewrite visible: ``preregister`` with no
lock file starts from the newest lock committed to git at that path (deleting the file does not
start afresh); an entry is identified by its whole content (:func:`entry_key`), and
:func:`evalkit.prereg.history.rewritten_entries` lists every entry the lock's git history holds
that the current lock no longer holds unchanged (checked by ``study run``); and the study page
lists how the lock differs from its last commit. A lock holding one ``(kind, name, version)``
twice is refused.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.escape import has_visible_character
from evalkit.files.input import decode_text, dumps, escape_surrogates, own_cap, read_bytes
from evalkit.files.output import write_output
from evalkit.gold.sets import MANIFEST_NAME, VERSION_DIR, set_sha256, sha256_hex
from evalkit.prereg.study_params import (
    canonical_json,
    design_of,
    design_sha256,
    json_document,
    parameters_cell,
    parse_parameters,
    read_notebook,
)
from evalkit.provenance.git import head_commit
from evalkit.provenance.repository import REPO_ROOT

__all__ = [
    "DESIGN_RECORD_FIELDS",
    "KINDS",
    "LOCK_ENV",
    "LOCK_NAME",
    "Change",
    "LockedInput",
    "check_lock",
    "collect_inputs",
    "default_lock_path",
    "entry_id",
    "entry_key",
    "entry_version",
    "latest_entries",
    "parse_lock",
    "read_lock",
    "read_lock_bytes",
    "require_unchanged",
    "write_lock",
]

LOCK_NAME = "preregistration.lock.json"
LOCK_ENV = "EVALKIT_PREREG_LOCK"
KINDS = ("rubric", "gold", "decision_rule", "study")
FROZEN_KINDS = ("rubric", "gold", "decision_rule")
_CELL = "#parameters"
_LOCK_MAX_BYTES = 64 << 20
_RESTORE_LOCK = "restore the lock file from version control (git checkout -- <lock>)"
_said: set[str] = set()  # stderr notes already printed in this process

_HOW_TO_FIX = {
    "rubric": (
        "restore the file from version control; a changed check mints a NEW rubric_version "
        "(a new rubrics/rubric-vN.md), it never edits a frozen one"
    ),
    "gold": (
        "restore the frozen folder from version control and mint a new version instead "
        "(`evalkit gold freeze --name <set> --from <dir>`)"
    ),
    "decision_rule": (
        "restore it; a new decision rule is a new file (e.g. DECISION_RULE-v2.json), locked with "
        "`evalkit preregister` before its first calibration run"
    ),
    "study": (
        "restore the design, run it as a stated deviation (`evalkit study run --deviation "
        '"why"`), or amend the pre-registration with `evalkit preregister` (a new version of '
        "the entry, dated, the old one kept)"
    ),
}


@dataclass(frozen=True)
class LockedInput:
    """One pre-registered input: its kind, name, repo-relative path and sha256.

    A study also carries its ``design`` (the values locked), its data ``inputs`` and the
    sha256 of its parameters cell's source (``source_sha256``).
    """

    kind: str
    name: str
    path: str
    sha256: str
    design: Mapping[str, Any] | None = field(default=None, compare=False)
    inputs: tuple[str, ...] = ()
    source_sha256: str | None = None


@dataclass(frozen=True)
class Change:
    """A locked input whose current sha256 differs (``current_sha256`` None: it is gone)."""

    kind: str
    name: str
    path: str
    locked_sha256: str
    current_sha256: str | None
    how_to_fix: str
    detail: str = ""  # e.g. which design parameters changed
    tampered: bool = False  # the lock contradicts itself: no run, no amendment can fix that

    def describe(self) -> str:
        """One sentence: what changed, from which hash to which, and how to fix it."""
        now = "missing" if self.current_sha256 is None else f"now {self.current_sha256[:12]}..."
        what = f" ({self.detail})" if self.detail else ""
        return (
            f"pre-registered {self.kind} {self.name!r} ({self.path}) changed since it was locked "
            f"(locked {self.locked_sha256[:12]}..., {now}){what}; {self.how_to_fix}"
        )


# --------------------------------------------------------------------------------------------
# what a lock covers


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _gold_version_sha(vdir: Path) -> str:
    files = {
        p.name: sha256_hex(read_bytes(p, "gold file"))
        for p in sorted(vdir.iterdir())
        if p.is_file() and p.name != MANIFEST_NAME
    }
    return set_sha256(files)


def _cell_source(path: Path) -> str | None:
    """Source of the notebook's parameters cell, or None (no notebook, no such cell)."""
    try:
        return parameters_cell(read_notebook(path), path)
    except (EvalkitError, OSError):
        return None


def study_input(name: str, notebook: Path, rel: str) -> LockedInput:
    """The lockable design of the study notebook ``notebook`` (``rel``: its repo path)."""
    source = _cell_source(notebook)
    if source is None:
        raise EvalkitError(f"study {name!r}: {notebook} has no readable parameters cell")
    declared = parse_parameters(source, notebook)
    design = design_of({p.name: p.default for p in declared.values()}, declared)
    inputs = tuple(p.name for p in declared.values() if p.is_input)
    return LockedInput(
        "study",
        name,
        rel + _CELL,
        design_sha256(design),
        design,
        inputs,
        sha256_hex(source.encode("utf-8")),
    )


def collect_inputs(root: str | os.PathLike[str] | None = None) -> list[LockedInput]:
    """Every input a lock covers, with its current sha256, in a stable order."""
    base = Path(root) if root is not None else REPO_ROOT
    out: list[LockedInput] = []
    for p in sorted((base / "rubrics").glob("*.md")):
        out.append(
            LockedInput("rubric", p.stem, _rel(p, base), sha256_hex(read_bytes(p, "rubric")))
        )
    gold = base / "gold"
    for set_dir in sorted(p for p in gold.iterdir() if p.is_dir()) if gold.is_dir() else ():
        for vdir in sorted(
            (p for p in set_dir.iterdir() if p.is_dir() and VERSION_DIR.match(p.name)),
            key=lambda p: int(p.name[1:]),
        ):
            out.append(
                LockedInput(
                    "gold", f"{set_dir.name}/{vdir.name}", _rel(vdir, base), _gold_version_sha(vdir)
                )
            )
        for rule in sorted(set_dir.glob("DECISION_RULE*.json")):
            out.append(
                LockedInput(
                    "decision_rule",
                    f"{set_dir.name}/{rule.name}",
                    _rel(rule, base),
                    sha256_hex(read_bytes(rule, "decision rule")),
                )
            )
    for nb in sorted((base / "notebooks").glob("*.ipynb")):
        if _cell_source(nb) is not None:  # a notebook without a parameters cell is no study
            out.append(study_input(nb.stem, nb, _rel(nb, base)))
    return out


# --------------------------------------------------------------------------------------------
# reading and checking


def default_lock_path(root: str | os.PathLike[str] | None = None) -> Path:
    """``$EVALKIT_PREREG_LOCK`` if set, else ``<root or repo>/preregistration.lock.json``."""
    env = os.environ.get(LOCK_ENV)
    if env:
        return Path(env)
    return (Path(root) if root is not None else REPO_ROOT) / LOCK_NAME


_ENTRY_FIELDS = ("kind", "name", "path", "sha256")
#: What ``preregister`` adds, once, to an entry locked before designs were recorded (its cell
#: unchanged since); any other change to a committed entry is a rewrite.
DESIGN_RECORD_FIELDS = (
    "design",
    "design_sha256",
    "inputs",
    "design_recorded_on",
    "design_recorded_at_commit",
)


def parse_lock(text: str | bytes, shown: str) -> dict[str, Any]:
    """A lock's JSON text, checked: entries are objects with string kind/name/path/sha256.

    Each ``(kind, name, version)`` appears once; a duplicate is refused, naming both.
    """
    lock = json_document(text, shown, "entries")
    seen: dict[tuple[str, str, int], int] = {}
    for i, entry in enumerate(lock["entries"]):
        if not isinstance(entry, dict):
            raise EvalkitError(f"{shown}: entries[{i}] must be an object")
        for key in _ENTRY_FIELDS:
            if not isinstance(entry.get(key), str):
                raise EvalkitError(f"{shown}: entries[{i}].{key} must be a string")
        version = entry.get("version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise EvalkitError(f"{shown}: entries[{i}].version must be a positive integer")
        if "design" in entry and not isinstance(entry["design"], dict):
            raise EvalkitError(f"{shown}: entries[{i}].design must be an object")
        first = seen.setdefault(entry_id(entry), i)
        if first != i:
            kind, name, version = entry_id(entry)
            raise EvalkitError(
                f"{shown}: entries[{first}] and entries[{i}] are both {kind} {name!r} version "
                f"{version}: a lock holds each version once (the lock was edited by hand; "
                f"{_RESTORE_LOCK})"
            )
    return lock


def read_lock(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The lock as a dict, or None when there is no lock file.

    Read as a regular file only (a FIFO or device is refused, never a hang), bounded, strict
    JSON; a malformed lock or entry is an ``EvalkitError`` naming the file and the entry.
    """
    p = Path(path) if path is not None else default_lock_path()
    if not os.path.lexists(p):
        return None
    return parse_lock(decode_text(read_lock_bytes(p), p, "pre-registration lock"), str(p))


# One reading per command: a study run or a calibration checks the lock several times (its own
# entry, the gold set's, the decision rule's). The bytes of the last file read are kept with
# its identity (real path, device, inode, size, modification time in ns); the same file,
# unchanged, is not read again, and any change to it is a new reading.
_LAST_READ: dict[tuple[str, int, int, int, int], bytes] = {}


def read_lock_bytes(path: str | os.PathLike[str]) -> bytes:
    """The lock file's bytes, of which its sha256 is taken: a regular file, capped, lines too."""
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None  # read_bytes says what is wrong with it
    if key is not None and key in _LAST_READ:
        return _LAST_READ[key]
    data = read_bytes(
        path, "pre-registration lock", max_bytes=own_cap(_LOCK_MAX_BYTES), line_cap=True
    )
    if key is not None:
        _LAST_READ.clear()
        _LAST_READ[key] = data
    return data


def entry_version(entry: Mapping[str, Any]) -> int:
    """An entry's version (entries written before versions existed are version 1)."""
    return int(entry.get("version", 1))


def entry_id(entry: Mapping[str, Any]) -> tuple[str, str, int]:
    """Which entry it is: ``(kind, name, version)``; a lock holds each once."""
    return (entry["kind"], entry["name"], entry_version(entry))


def entry_key(entry: Mapping[str, Any]) -> tuple[str, str, int, str]:
    """What identifies an entry for good: its id and the sha256 of its whole content.

    The content is the entry's canonical JSON (sorted keys, compact): an edit of any field
    (``design`` with a recomputed ``design_sha256`` too) is another entry.
    """
    return (*entry_id(entry), sha256_hex(canonical_json(dict(entry)).encode("utf-8")))


def latest_entries(entries: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The newest version of each ``(kind, name)``; older versions are history."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for e in entries:
        key = (e["kind"], e["name"])
        if key not in out or entry_version(e) > entry_version(out[key]):
            out[key] = dict(e)
    return out


def _design_diff(locked: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    parts = []
    for name in sorted(set(locked) | set(current)):
        a = canonical_json(locked[name]) if name in locked else "(absent)"
        b = canonical_json(current[name]) if name in current else "(absent)"
        if a != b:
            parts.append(f"{name}: locked {a}, now {b}")
    return "; ".join(parts)


def _study_change(entry: Mapping[str, Any], base: Path) -> Change | None:
    """A study entry's change: its design (or, for an entry without one, its cell source)."""
    rel = str(entry["path"])
    nb = base / rel.removesuffix(_CELL)
    design = entry.get("design")
    fix = _HOW_TO_FIX["study"]
    if design is None:  # written before designs were recorded: the whole cell was locked
        if rel.endswith(_CELL):
            src = _cell_source(nb)
            current = None if src is None else sha256_hex(src.encode("utf-8"))
        else:  # a parameters file locked by an earlier evalkit
            current = _current_sha(entry, base)
        if current == entry["sha256"]:
            return None
        return Change("study", entry["name"], rel, entry["sha256"], current, fix)
    locked = design_sha256(design)
    declared = entry.get("design_sha256") or (
        entry["sha256"] if entry.get("sha256_of") == "design" else locked
    )
    if declared != locked:
        return Change(
            "study", entry["name"], rel, str(declared), locked, _RESTORE_LOCK,
            "the entry's sha256 does not match its own design: the lock was edited by hand",
            tampered=True,
        )  # fmt: skip
    try:
        now = study_input(entry["name"], nb, rel)
    except EvalkitError:
        return Change("study", entry["name"], rel, locked, None, fix)
    if now.sha256 == locked:
        return None
    detail = _design_diff(design, now.design or {})
    return Change("study", entry["name"], rel, locked, now.sha256, fix, detail)


def _current_sha(entry: Mapping[str, Any], base: Path) -> str | None:
    kind, p = entry["kind"], base / str(entry["path"])
    try:
        if kind == "gold":
            return _gold_version_sha(p) if p.is_dir() else None
        return sha256_hex(read_bytes(p, kind)) if os.path.lexists(p) else None
    except OSError:  # unreadable (a FIFO, a loop): not the locked bytes
        return None


def check_lock(
    lock: str | os.PathLike[str] | dict[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[Change] | None:
    """Every locked input (newest version of each) whose content changed; None: no lock file."""
    base = Path(root) if root is not None else REPO_ROOT
    data = (
        lock
        if isinstance(lock, dict)
        else read_lock(lock if lock is not None else default_lock_path(root))
    )
    if data is None:
        return None
    changes = []
    for entry in latest_entries(data["entries"]).values():
        if entry["kind"] == "study":
            change = _study_change(entry, base)
            if change is not None:
                changes.append(change)
            continue
        current = _current_sha(entry, base)
        if current != entry["sha256"]:
            changes.append(
                Change(
                    entry["kind"],
                    entry["name"],
                    entry["path"],
                    str(entry["sha256"]),
                    current,
                    _HOW_TO_FIX.get(entry["kind"], "restore it and mint a new version"),
                )
            )
    return changes


def _note_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        print(f"evalkit: {escape_surrogates(message)}", file=sys.stderr)


def require_unchanged(
    kind: str,
    names: Iterable[str] | None = None,
    *,
    lock: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    require_lock: bool = False,
) -> None:
    """Refuse to start (``EvalkitError``) when a locked input of ``kind`` changed since the lock.

    ``names`` limits the check to those inputs (e.g. ``["instruction-adherence/v1"]``); None
    checks every locked input of the kind. A named input the lock does not hold is not
    pre-registered: the run proceeds and says so once on stderr. No lock file: proceeds, once
    said on stderr, unless ``require_lock`` (then an ``EvalkitError`` naming the path).
    """
    if kind not in KINDS:
        raise EvalkitError(f"kind must be one of {KINDS}, got {kind!r}")
    lock_path = Path(lock) if lock is not None else default_lock_path(root)
    data = read_lock(lock_path)
    if data is None:
        if require_lock:
            raise EvalkitError(
                f"no pre-registration lock at {lock_path}: run `evalkit preregister` first, or "
                "run explicitly without one (--no-lock), which the results then state"
            )
        _note_once(f"no pre-registration lock ({lock_path}); inputs are not checked against one")
        return
    wanted = None if names is None else set(names)
    locked = {e["name"] for e in data["entries"] if e.get("kind") == kind}
    for name in sorted((wanted or set()) - locked):
        _note_once(f"{kind} {name!r} is not in the pre-registration lock {lock_path}")
    changes = [
        c
        for c in check_lock(data, root) or []
        if c.kind == kind and (wanted is None or c.name in wanted)
    ]
    if changes:
        raise EvalkitError("; ".join(c.describe() for c in changes))


# --------------------------------------------------------------------------------------------
# writing


def _today(date: str | None) -> str:
    if date is None:
        return _dt.datetime.now(_dt.UTC).date().isoformat()
    try:
        return _dt.date.fromisoformat(date).isoformat()
    except (TypeError, ValueError):
        raise EvalkitError(f"date must be YYYY-MM-DD, got {date!r}") from None


def _study_entry(inp: LockedInput, version: int, today: str, commit: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": "study",
        "name": inp.name,
        "path": inp.path,
        "sha256": inp.sha256,
        "sha256_of": "design",
        "locked_on": today,
        "version": version,
        "design": dict(inp.design or {}),
        "inputs": list(inp.inputs),
    }
    if commit:
        entry["locked_at_commit"] = commit
    return entry


def _starting_lock(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The lock to extend: the file, else the newest lock committed at that path."""
    previous = read_lock(path)
    if previous is not None:
        return previous, None
    # deferred: prereg_history imports this module (entry_key, parse_lock), a real cycle
    from evalkit.prereg.history import lock_history

    history = lock_history(path)
    if not history:
        return None, None
    commit, date, committed = history[0]
    _note_once(
        f"no lock file at {path}, but git holds one (commit {commit[:12]}, {date}): its "
        "entries are kept; deleting a lock does not start a new pre-registration"
    )
    return committed, commit


def _extend_study(
    entries: list[dict[str, Any]],
    latest: Mapping[str, Any],
    inp: LockedInput,
    today: str,
    commit: str | None,
    reason: str | None,
) -> None:
    """Record the design of a study already in the lock, or mint its next version."""
    if "design" not in latest:
        if latest["sha256"] == inp.source_sha256:  # the locked cell, byte for byte
            i = next(i for i, e in enumerate(entries) if entry_key(e) == entry_key(latest))
            entries[i] = {
                **entries[i],
                "design": dict(inp.design or {}),
                "design_sha256": inp.sha256,
                "inputs": list(inp.inputs),
                "design_recorded_on": today,
                **({"design_recorded_at_commit": commit} if commit else {}),
            }
            return
    elif inp.sha256 == (latest.get("design_sha256") or latest["sha256"]):
        return
    new = _study_entry(inp, entry_version(latest) + 1, today, commit)
    new["amends_version"] = entry_version(latest)
    if reason:
        new["reason"] = reason
    entries.append(new)


def write_lock(
    out: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    *,
    date: str | None = None,
    kinds: Iterable[str] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Write (or extend) the lock; never rewrites an entry's hash.

    New inputs are added (version 1). A study whose design changed gets a new version (an
    amendment, ``reason`` recorded when given); its old entries stay. A changed frozen input
    (rubric, gold version, decision rule) refuses, naming it. ``kinds`` limits which inputs
    are added or amended (default: all of :data:`KINDS`); entries already in the lock are kept.
    """
    if reason is not None and not has_visible_character(reason):
        raise EvalkitError(
            "--reason needs a reason a reader can see (a letter, digit or mark; not only spaces "
            "or zero-width characters), or leave it out"
        )
    wanted_kinds = set(KINDS if kinds is None else kinds)
    if not wanted_kinds <= set(KINDS):
        raise EvalkitError(f"kinds must be among {KINDS}, got {sorted(wanted_kinds)}")
    path = Path(out) if out is not None else default_lock_path(root)
    today = _today(date)
    base = Path(root) if root is not None else REPO_ROOT
    commit = head_commit(base)
    previous, seeded_from = _starting_lock(path)
    entries: list[dict[str, Any]] = []
    if previous is not None:
        frozen = [
            c for c in check_lock(previous, root) or [] if c.kind in FROZEN_KINDS or c.tampered
        ]
        if frozen:
            raise EvalkitError(
                "refusing to re-lock changed inputs: " + "; ".join(c.describe() for c in frozen)
            )
        entries = [dict(e) for e in previous["entries"]]
    for inp in collect_inputs(root):
        if inp.kind not in wanted_kinds:
            continue
        latest = latest_entries(entries).get((inp.kind, inp.name))
        if latest is None and inp.kind == "study":
            entries.append(_study_entry(inp, 1, today, commit))
        elif latest is None:
            entries.append(
                {"kind": inp.kind, "name": inp.name, "path": inp.path, "sha256": inp.sha256,
                 "locked_on": today}
            )  # fmt: skip
        elif inp.kind == "study":
            _extend_study(entries, latest, inp, today, commit, reason)
    lock: dict[str, Any] = {
        "schema": 1,
        "created": previous.get("created", today) if previous else today,
        "updated": today,
        "rule": "pre-registered inputs are frozen: a change mints a new version, never an edit",
        "entries": entries,
    }
    for key in ("created_commit",):
        if previous and key in previous:
            lock[key] = previous[key]
    if previous is None and commit:
        lock["created_commit"] = commit
    if seeded_from:
        lock["restored_from_commit"] = seeded_from
    # a new file renamed into place, never through a link (a planted .tmp link is no way in)
    write_output(path, dumps(lock, indent=2, sort_keys=True) + "\n", "pre-registration lock")
    return lock
