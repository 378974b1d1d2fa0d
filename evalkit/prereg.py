"""The pre-registration lock: hashes of every frozen input, checked before a run starts.

``evalkit preregister`` writes ``preregistration.lock.json`` with the sha256 of

- each rubric text (``rubrics/*.md``; kind ``rubric``, name ``rubric-v2``),
- each gold set version (kind ``gold``, name ``<set>/v<N>``; the set sha256 over the bytes of
  every file in the version folder except the manifest, computed from disk),
- each calibration decision rule (kind ``decision_rule``, name ``<set>/DECISION_RULE.json``),
- each study's parameters (kind ``study``: ``notebooks/<name>.params.yaml`` when it exists,
  else the source of the notebook cell tagged ``parameters``).

Calibration and study runs call :func:`require_unchanged` first. A locked input whose bytes
changed since refuses the run, naming what changed and how to mint a new version instead: the
seeds' rule is that a frozen check set is never edited in place. Re-running
``evalkit preregister`` adds new inputs but refuses to re-lock a changed one (that would
launder the edit). With no lock file at all, runs proceed and say so once on stderr.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.gold import MANIFEST_NAME, set_sha256, sha256_hex

__all__ = [
    "KINDS",
    "LOCK_ENV",
    "LOCK_NAME",
    "Change",
    "LockedInput",
    "check_lock",
    "collect_inputs",
    "default_lock_path",
    "read_lock",
    "require_unchanged",
    "write_lock",
]

LOCK_NAME = "preregistration.lock.json"
LOCK_ENV = "EVALKIT_PREREG_LOCK"
KINDS = ("rubric", "gold", "decision_rule", "study")
_REPO_ROOT = Path(__file__).resolve().parents[1]
_VERSION_DIR = re.compile(r"^v[1-9][0-9]*$")
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
        "restore the parameters; a changed design is a new study (a new parameter file or "
        "notebook), locked with `evalkit preregister` before its first run"
    ),
}


@dataclass(frozen=True)
class LockedInput:
    """One pre-registered input: its kind, name, repo-relative path and sha256."""

    kind: str
    name: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Change:
    """A locked input whose current sha256 differs (``current_sha256`` None: it is gone)."""

    kind: str
    name: str
    path: str
    locked_sha256: str
    current_sha256: str | None
    how_to_fix: str

    def describe(self) -> str:
        now = "missing" if self.current_sha256 is None else f"now {self.current_sha256[:12]}..."
        return (
            f"pre-registered {self.kind} {self.name!r} ({self.path}) changed since it was locked "
            f"(locked {self.locked_sha256[:12]}..., {now}); {self.how_to_fix}"
        )


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _gold_version_sha(vdir: Path) -> str:
    files = {
        p.name: sha256_hex(p.read_bytes())
        for p in sorted(vdir.iterdir())
        if p.is_file() and p.name != MANIFEST_NAME
    }
    return set_sha256(files)


def _notebook_parameters(path: Path) -> str | None:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    for cell in nb.get("cells", []):
        if "parameters" in (cell.get("metadata", {}).get("tags") or []):
            src = cell.get("source", "")
            return "".join(src) if isinstance(src, list) else str(src)
    return None


def collect_inputs(root: str | os.PathLike[str] | None = None) -> list[LockedInput]:
    """Every input a lock covers, with its current sha256, in a stable order."""
    base = Path(root) if root is not None else _REPO_ROOT
    out: list[LockedInput] = []
    for p in sorted((base / "rubrics").glob("*.md")):
        out.append(LockedInput("rubric", p.stem, _rel(p, base), sha256_hex(p.read_bytes())))
    gold = base / "gold"
    for set_dir in sorted(p for p in gold.iterdir() if p.is_dir()) if gold.is_dir() else ():
        for vdir in sorted(
            (p for p in set_dir.iterdir() if p.is_dir() and _VERSION_DIR.match(p.name)),
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
                    sha256_hex(rule.read_bytes()),
                )
            )
    nbdir = base / "notebooks"
    params = {p.name[: -len(".params.yaml")]: p for p in nbdir.glob("*.params.yaml")}
    for name, p in sorted(params.items()):
        out.append(LockedInput("study", name, _rel(p, base), sha256_hex(p.read_bytes())))
    for nb in sorted(nbdir.glob("*.ipynb")):
        if nb.stem in params:
            continue
        src = _notebook_parameters(nb)
        if src is not None:
            out.append(
                LockedInput(
                    "study",
                    nb.stem,
                    _rel(nb, base) + "#parameters",
                    sha256_hex(src.encode("utf-8")),
                )
            )
    return out


def default_lock_path(root: str | os.PathLike[str] | None = None) -> Path:
    """``$EVALKIT_PREREG_LOCK`` if set, else ``<root or repo>/preregistration.lock.json``."""
    env = os.environ.get(LOCK_ENV)
    if env:
        return Path(env)
    return (Path(root) if root is not None else _REPO_ROOT) / LOCK_NAME


def read_lock(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The lock as a dict, or None when there is no lock file."""
    p = Path(path) if path is not None else default_lock_path()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        lock = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalkitError(f"{p}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(lock, dict) or not isinstance(lock.get("entries"), list):
        raise EvalkitError(f"{p}: field 'entries' must be a list")
    return lock


def _current_sha(entry: dict[str, Any], base: Path) -> str | None:
    kind, rel = entry["kind"], str(entry["path"])
    if kind == "study" and rel.endswith("#parameters"):
        src = _notebook_parameters(base / rel[: -len("#parameters")])
        return None if src is None else sha256_hex(src.encode("utf-8"))
    p = base / rel
    if kind == "gold":
        return _gold_version_sha(p) if p.is_dir() else None
    return sha256_hex(p.read_bytes()) if p.is_file() else None


def check_lock(
    lock: str | os.PathLike[str] | dict[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[Change] | None:
    """Every locked input whose bytes changed since; None when there is no lock file."""
    base = Path(root) if root is not None else _REPO_ROOT
    data = (
        lock
        if isinstance(lock, dict)
        else read_lock(lock if lock is not None else default_lock_path(root))
    )
    if data is None:
        return None
    changes = []
    for entry in data["entries"]:
        current = _current_sha(entry, base)
        if current != entry.get("sha256"):
            changes.append(
                Change(
                    entry["kind"],
                    entry["name"],
                    entry["path"],
                    str(entry.get("sha256")),
                    current,
                    _HOW_TO_FIX.get(entry["kind"], "restore it and mint a new version"),
                )
            )
    return changes


def _note_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        print(f"evalkit: {message}", file=sys.stderr)


def require_unchanged(
    kind: str,
    names: Iterable[str] | None = None,
    *,
    lock: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> None:
    """Refuse to start (``EvalkitError``) when a locked input of ``kind`` changed since the lock.

    ``names`` limits the check to those inputs (e.g. ``["instruction-adherence/v1"]``); None
    checks every locked input of the kind. A named input the lock does not hold is not
    pre-registered: the run proceeds and says so once on stderr. No lock file: proceeds, once
    said on stderr.
    """
    if kind not in KINDS:
        raise EvalkitError(f"kind must be one of {KINDS}, got {kind!r}")
    lock_path = Path(lock) if lock is not None else default_lock_path(root)
    data = read_lock(lock_path)
    if data is None:
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


def write_lock(
    out: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    *,
    date: str | None = None,
    kinds: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Write (or extend) the lock. Refuses, naming them, when already-locked inputs changed.

    ``kinds`` limits which new inputs are added (default: all of :data:`KINDS`); entries
    already in the lock are always kept.
    """
    wanted_kinds = set(KINDS if kinds is None else kinds)
    if not wanted_kinds <= set(KINDS):
        raise EvalkitError(f"kinds must be among {KINDS}, got {sorted(wanted_kinds)}")
    path = Path(out) if out is not None else default_lock_path(root)
    today = date or _dt.datetime.now(_dt.UTC).date().isoformat()
    previous = read_lock(path)
    entries: list[dict[str, Any]] = []
    if previous is not None:
        changes = check_lock(previous, root) or []
        if changes:
            raise EvalkitError(
                "refusing to re-lock changed inputs: " + "; ".join(c.describe() for c in changes)
            )
        entries = list(previous["entries"])
    have = {(e["kind"], e["name"]) for e in entries}
    for inp in collect_inputs(root):
        if inp.kind in wanted_kinds and (inp.kind, inp.name) not in have:
            entries.append({**asdict(inp), "locked_on": today})
    lock = {
        "schema": 1,
        "created": previous.get("created", today) if previous else today,
        "updated": today,
        "rule": "pre-registered inputs are frozen: a change mints a new version, never an edit",
        "entries": entries,
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return lock
