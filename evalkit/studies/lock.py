"""A study run under the pre-registration lock: checked before any kernel starts, stated on the page.

:func:`check_study` decides, before a kernel starts, under what a run stands:

* **pre-registered**: a lock file exists, none of its frozen inputs (rubric texts, gold set
  versions, decision rules) changed, the lock holds every entry its git history ever held
  (nothing was rewritten or dropped), the study has an entry, and every design parameter of
  this run has the locked value (whether it came from the notebook's default, ``-p`` or ``-f``);
* **deviation**: as above, but some design parameters differ, which is allowed only with a
  stated reason (``--deviation "why"``); each one is named with its locked and given value;
* **not pre-registered**: ``--no-lock`` was given; nothing is checked and the page says so.

Anything else refuses the run (``EvalkitError``, exit 1), naming the entry or the parameter.
Data inputs (``*_dir``, ``*_path``; several: ``*_dirs``, ``*_paths``) are never design:
:func:`input_hashes` records the sha256 of their content instead. Execution settings
(:data:`~evalkit.prereg.study_params.EXECUTION_PARAMETERS`, e.g. ``scheduler``) say where a run
computes, not what: they are neither design nor data, and are recorded as given.
:class:`LockStatus` goes into ``results.json`` and, as a Markdown banner (every untrusted piece
escaped), to the top of the page.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.escape import has_visible_character, markdown_code, markdown_text
from evalkit.files.hashing import (
    Link,
    file_digest,
    link_of,
    listing_name,
    sha256_hex,
    tree_digest,
)
from evalkit.files.hashing import listing_sha256 as set_sha256
from evalkit.files.input import decode_text, escape_surrogates
from evalkit.fleet.score import SCHEDULER_TRUST
from evalkit.prereg.history import (
    first_committed,
    lock_history,
    recorded_design_error,
    rewritten_entries,
    uncommitted_changes,
)
from evalkit.prereg.lock import (
    FROZEN_KINDS,
    check_lock,
    default_lock_path,
    latest_entries,
    parse_lock,
    read_lock_bytes,
)
from evalkit.prereg.study_params import (
    Parameter,
    canonical_json,
    design_of,
    is_design_parameter,
    is_execution_parameter,
    is_input_parameter,
)
from evalkit.provenance.repository import REPO_ROOT

__all__ = [
    "BY_HAND_NO_REASON",
    "Deviation",
    "LockStatus",
    "check_study",
    "content_sha256",
    "input_hashes",
]

_MAX_INPUT_FILES = 100_000


@dataclass(frozen=True)
class Deviation:
    """One design parameter whose value in this run differs from the locked one."""

    parameter: str
    locked: Any
    given: Any
    source: str  # "given" (-p / -f / API) or "notebook default"

    def to_json(self) -> dict[str, Any]:
        """The deviation for results.json (an absent value is null)."""
        return {
            "parameter": self.parameter,
            "locked": None if self.locked is _ABSENT else self.locked,
            "given": None if self.given is _ABSENT else self.given,
            "source": self.source,
        }

    def describe(self) -> str:
        """One clause naming the parameter, its locked and its given value."""
        return (
            f"parameter {self.parameter!r}: locked {_shown(self.locked)}, "
            f"this run {_shown(self.given)} ({self.source})"
        )


_ABSENT = object()
#: A deviation found by a notebook run by hand (no runner, so no ``--deviation`` reason).
BY_HAND_NO_REASON = (
    "**No reason was given:** this notebook ran by hand (papermill or JupyterLab), not through "
    "`evalkit study run --deviation`, so every figure below departs from the pre-registered "
    "design without a stated reason."
)


def _shown(value: Any) -> str:
    return "(absent)" if value is _ABSENT else escape_surrogates(canonical_json(value))


@dataclass(frozen=True)
class LockStatus:
    """Under what a study run stands; :meth:`to_json` is ``results.json``'s ``preregistration``."""

    status: str  # "pre-registered" | "deviation" | "not pre-registered"
    design_parameters: tuple[str, ...] = ()
    input_parameters: tuple[str, ...] = ()
    lock: str | None = None
    lock_sha256: str | None = None
    entry: Mapping[str, Any] | None = None
    original_locked_on: str | None = None
    locked_design: Mapping[str, Any] | None = None
    deviations: tuple[Deviation, ...] = ()
    deviation_reason: str | None = None
    committed: tuple[str, str] | None = None
    git_history: bool = False
    lock_created: str | None = None
    execution_parameters: tuple[str, ...] = ()
    scheduler: str = ""  # named with --scheduler only ("": computed in the kernel)
    uncommitted: tuple[str, ...] = ()  # how the lock differs from its last commit

    @property
    def amended(self) -> bool:
        return self.entry is not None and int(self.entry.get("version", 1)) > 1

    def to_json(self) -> dict[str, Any]:
        entry = None
        if self.entry is not None:
            keys = ("kind", "name", "path", "sha256", "version", "locked_on", "reason")
            entry = {k: self.entry.get(k) for k in keys if k in self.entry or k == "version"}
            entry["version"] = int(self.entry.get("version", 1))
        return {
            "status": self.status,
            "lock": self.lock,
            "lock_sha256": self.lock_sha256,
            "lock_created": self.lock_created,
            "entry": entry,
            "amended": self.amended,
            "original_locked_on": self.original_locked_on,
            "design_parameters": list(self.design_parameters),
            "input_parameters": list(self.input_parameters),
            **(
                {
                    "execution_parameters": list(self.execution_parameters),
                    "scheduler": self.scheduler or None,
                }
                if self.execution_parameters
                else {}
            ),
            "locked_design": None if self.locked_design is None else dict(self.locked_design),
            "deviations": [d.to_json() for d in self.deviations],
            "deviation_reason": self.deviation_reason,
            "first_committed": None
            if self.committed is None
            else {"commit": self.committed[0], "date": self.committed[1]},
            "uncommitted_lock_changes": list(self.uncommitted),
        }

    def banner(self) -> str:
        """The Markdown banner at the top of the study page (every untrusted piece escaped)."""
        if self.status == "not pre-registered":
            return (
                "> **Not pre-registered.** This run was started with `--no-lock`: its design "
                "was not checked against a pre-registration lock, so every figure on this page "
                "is exploratory." + self._execution_text()
            )
        e = self.entry or {}
        lines = []
        if self.deviations:
            lines += [
                f"> **Deviation from the pre-registration.** {len(self.deviations)} locked "
                "design parameter(s) differ in this run:",
                ">",
                *(
                    f"> - {markdown_code(d.parameter)}: locked {markdown_code(_shown(d.locked))}, "
                    f"this run {markdown_code(_shown(d.given))} ({markdown_text(d.source)})"
                    for d in self.deviations
                ),
                ">",
                f"> Reason given: {markdown_text(self.deviation_reason)}"
                if self.deviation_reason is not None
                else f"> {BY_HAND_NO_REASON}",
                ">",
            ]
        elif self.deviation_reason is not None:
            lines += [
                "> A deviation was declared (reason: "
                f"{markdown_text(self.deviation_reason)}), but every design parameter has its "
                "locked value.",
                ">",
            ]
        head = "Pre-registered" if not self.deviations else "Pre-registration"
        lines.append(
            f"> **{head}:** entry {markdown_code(e['name'])}, version "
            f"{int(e.get('version', 1))}, locked on {markdown_text(e.get('locked_on', '?'))} in "
            f"{markdown_code(self.lock or '?')} (sha256 "
            f"{markdown_code(str(self.lock_sha256)[:12])}); " + self._committed_text()
        )
        if self.amended:
            reason = e.get("reason")
            lines += [
                ">",
                f"> **The pre-registration was amended** on {markdown_text(e.get('locked_on'))} "
                f"(version {int(e.get('version', 1))}); the original was locked on "
                f"{markdown_text(self.original_locked_on or '?')}."
                + (f" Reason recorded: {markdown_text(reason)}" if reason else ""),
            ]
        if self.uncommitted:
            lines += [
                ">",
                "> **The lock has changes not committed to git**, so nothing but the file "
                "vouches for them: " + "; ".join(markdown_text(c) for c in self.uncommitted) + ".",
            ]
        design = ", ".join(markdown_code(p) for p in self.design_parameters) or "none"
        inputs = ", ".join(markdown_code(p) for p in self.input_parameters) or "none"
        lines += [
            ">",
            f"> Design parameters (frozen by the lock): {design}. Data inputs (free; the sha256 "
            f"of their content is in results.json): {inputs}." + self._execution_text(),
        ]
        return "\n".join(lines)

    def _execution_text(self) -> str:
        if not self.execution_parameters:
            return ""
        names = ", ".join(markdown_code(p) for p in self.execution_parameters)
        text = f" Execution settings (free; where it runs, never what it computes): {names}."
        if not self.scheduler:
            return text + " Computed in the kernel: no scheduler was named."
        return (
            f"{text} Computed on the Dask scheduler {markdown_code(self.scheduler)}, named on "
            f"the command line (--scheduler), which was trusted: {markdown_text(SCHEDULER_TRUST)}."
        )

    def _committed_text(self) -> str:
        if self.committed is not None:
            commit, date = self.committed
            return (
                f"this entry was first committed to git in {markdown_code(commit[:12])} on "
                f"{markdown_text(date)}."
            )
        if self.git_history:
            return "this entry is **not committed to git**: its date is only what the file says."
        return "no git history was available: the entry's date is only what the file says."


# --------------------------------------------------------------------------------------------
# the check


def _lock_shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except (ValueError, OSError):
        return f"(outside the repository) {escape_surrogates(path.name)}"


def _deviations(
    declared: Mapping[str, Parameter],
    merged: Mapping[str, Any],
    given: set[str],
    locked: Mapping[str, Any],
) -> tuple[Deviation, ...]:
    design = design_of(merged, declared)
    out = []
    for name in sorted(set(design) | set(locked)):
        a = locked.get(name, _ABSENT)
        b = design.get(name, _ABSENT)
        if a is _ABSENT or b is _ABSENT or canonical_json(a) != canonical_json(b):
            source = "given" if name in given else "notebook default"
            out.append(Deviation(name, a, b, source))
    return tuple(out)


def _refuse_changed(data: Mapping[str, Any], name: str, root: Path | None, shown: str) -> None:
    changes = [
        c
        for c in check_lock(dict(data), root) or []
        if c.kind in FROZEN_KINDS or (c.kind == "study" and c.name == name and c.tampered)
    ]
    if changes:
        raise EvalkitError(
            f"study {name!r}: a pre-registered input changed (lock {shown}): "
            + "; ".join(c.describe() for c in changes)
        )


def _locked_design(
    entry: Mapping[str, Any], declared: Mapping[str, Parameter], source_sha256: str, root: Path
) -> tuple[dict[str, Any] | None, str | None]:
    """The locked design, or (None, why) for an old entry whose cell changed."""
    if isinstance(entry.get("design"), dict):
        notebook = root / str(entry["path"]).split("#", 1)[0]
        forged = recorded_design_error(entry, source_sha256, declared, notebook)
        if forged is not None:
            raise EvalkitError(
                f"study {entry['name']!r}: the pre-registration lock entry version "
                f"{int(entry.get('version', 1))} {forged}. Restore the lock from git"
            )
        return dict(entry["design"]), None
    # an entry locked before designs were recorded: its sha256 is the parameters cell's
    if entry["sha256"] == source_sha256:
        return design_of({p.name: p.default for p in declared.values()}, declared), None
    return None, (
        "the lock entry (recorded before evalkit stored design values) holds only the hash of "
        "the parameters cell, and that cell changed since"
    )


@dataclass(frozen=True)
class _Lock:
    """A lock file read for one run: where, its bytes' hash, content and committed history."""

    shown: str
    sha256: str
    data: Mapping[str, Any]
    history: list[Any]


def _read_checked_lock(name: str, path: Path, root: str | os.PathLike[str] | None) -> _Lock:
    """The lock, refusing a missing one, a changed frozen input and a rewritten history."""
    if not os.path.lexists(path):
        raise EvalkitError(
            f"study {name!r}: no pre-registration lock at {path}. Lock the design first "
            "(`evalkit preregister`), or run it explicitly as not pre-registered (--no-lock), "
            "which the page and results.json then state"
        )
    raw = read_lock_bytes(path)
    shown = _lock_shown(path)
    data = parse_lock(decode_text(raw, path, "pre-registration lock"), str(path))
    _refuse_changed(data, name, Path(root) if root is not None else None, shown)
    history = lock_history(path)
    rewritten = rewritten_entries(data, history)
    if rewritten:
        raise EvalkitError(
            f"study {name!r}: the pre-registration lock {shown} was rewritten: "
            + "; ".join(
                f"{g['kind']} {g['name']!r} version {g['version']} (locked on {g['locked_on']}, "
                f"committed in {g['commit'][:12]} on {g['committed_on']}) "
                + (
                    "is no longer in it"
                    if g["changed"] is None
                    else f"was edited since ({', '.join(g['changed'])} differ)"
                )
                for g in rewritten
            )
            + ". Restore it from git; a pre-registration is amended, never replaced"
        )
    return _Lock(shown, sha256_hex(raw), data, history)


def _refuse_deviations(name: str, entry: Mapping[str, Any], shown: str, devs: Any) -> None:
    label = f"{name} version {int(entry.get('version', 1))}, locked on {entry.get('locked_on')}"
    raise EvalkitError(
        f"study {name!r}: the run differs from the pre-registered design ({label}; lock "
        f"{shown}): "
        + "; ".join(d.describe() for d in devs)
        + '. Run it as a stated deviation with --deviation "why" (the page and '
        "results.json then show it), restore the locked values, or amend the "
        "pre-registration with `evalkit preregister` (a new, dated version)"
    )


def check_study(
    name: str,
    declared: Mapping[str, Parameter],
    merged: Mapping[str, Any],
    given: set[str],
    source_sha256: str,
    *,
    deviation: str | None = None,
    no_lock: bool = False,
    lock: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    by_hand: bool = False,
) -> LockStatus:
    """Under what this run stands, or ``EvalkitError`` when it may not run (see module doc).

    ``merged`` are the values the run uses, ``given`` the names the caller set, and
    ``source_sha256`` the sha256 of the notebook's parameters cell. ``by_hand``: a notebook
    checking itself (:mod:`evalkit.studies.by_hand`) reports a deviation without a reason
    instead of refusing it (it is already running).
    """
    design_names = tuple(p for p in declared if is_design_parameter(p))
    input_names = tuple(p for p in declared if is_input_parameter(p))
    execution_names = tuple(p for p in declared if is_execution_parameter(p))
    if deviation is not None and not has_visible_character(deviation):
        raise EvalkitError(
            "--deviation needs a reason a reader can see (a letter, digit or mark; not only "
            "spaces or zero-width characters): say why the design deviates"
        )
    if no_lock:
        if deviation is not None:
            raise EvalkitError(
                "--deviation states a deviation from a pre-registration; with --no-lock there "
                "is none (the page already says the run is not pre-registered)"
            )
        return LockStatus(
            "not pre-registered",
            design_names,
            input_names,
            execution_parameters=execution_names,
            scheduler=str(merged.get("scheduler") or ""),
        )
    path = Path(lock) if lock is not None else default_lock_path(root)
    read = _read_checked_lock(name, path, root)
    entries = [e for e in read.data["entries"] if e["kind"] == "study" and e["name"] == name]
    entry = latest_entries(entries).get(("study", name))
    if entry is None:
        raise EvalkitError(
            f"study {name!r} is not in the pre-registration lock {read.shown}: lock its design "
            "with `evalkit preregister` before its first run, or run it as not pre-registered "
            "(--no-lock)"
        )
    project = Path(root) if root is not None else REPO_ROOT
    locked, why = _locked_design(entry, declared, source_sha256, project)
    if locked is None:
        devs: tuple[Deviation, ...] = (
            Deviation("(parameters cell)", entry["sha256"], source_sha256, why or ""),
        )
    else:
        devs = _deviations(declared, merged, given, locked)
    if devs and deviation is None and not by_hand:
        _refuse_deviations(name, entry, read.shown, devs)
    first = min(entries, key=lambda e: int(e.get("version", 1)))
    return LockStatus(
        "deviation" if devs else "pre-registered",
        design_parameters=design_names,
        input_parameters=input_names,
        lock=read.shown,
        lock_sha256=read.sha256,
        entry=entry,
        original_locked_on=first.get("locked_on"),
        locked_design=locked,
        deviations=devs,
        deviation_reason=deviation,
        committed=first_committed(entry, read.history),
        git_history=bool(read.history),
        lock_created=read.data.get("created"),
        execution_parameters=execution_names,
        scheduler=str(merged.get("scheduler") or ""),
        uncommitted=tuple(uncommitted_changes(read.data, read.history)),
    )


# --------------------------------------------------------------------------------------------
# data inputs


def _linked(path: str, record: dict[str, Any], links: tuple[Link, ...] = ()) -> dict[str, Any]:
    """``record`` with the links followed to read ``path``: itself, and any below it."""
    found = [link for link in (link_of(path), *links) if link is not None]
    return {**record, "links": [link.to_json() for link in found]} if found else record


def _dir_sha256(root: str) -> dict[str, Any]:
    tree = tree_digest(root, "study input", max_files=_MAX_INPUT_FILES)
    if tree.error is not None:
        return {"kind": "directory", "error": tree.error}
    return _linked(root, {"kind": "directory", "sha256": tree.sha256, "files": tree.files,
                          "bytes": tree.bytes}, tree.links)  # fmt: skip


def _glob_sha256(pattern: str) -> dict[str, Any]:
    """The files a glob pattern matches (an input such as ``runs/*.jsonl``), each hashed by
    content (links followed and recorded), keyed by the path as matched."""
    digests: dict[str, str] = {}
    links = []
    total = 0
    for match in sorted(glob.glob(pattern)):
        if not os.path.isfile(match):
            continue
        digests[listing_name(match)], size = file_digest(match, "study input")
        links.append(link_of(match))
        total += size
        if len(digests) > _MAX_INPUT_FILES:
            return {"kind": "glob", "error": f"more than {_MAX_INPUT_FILES} files"}
    record = {"kind": "glob", "sha256": set_sha256(digests), "files": sorted(digests),
              "bytes": total}  # fmt: skip
    return _linked(pattern, record, tuple(link for link in links if link is not None))


def _path_sha256(path: str) -> dict[str, Any]:
    """The content record of one path: a file, a directory, or a glob of files."""
    if glob.has_magic(path) and not os.path.lexists(path):  # several files, one pattern
        return {"path": path, **_glob_sha256(path)}
    if os.path.isdir(path):
        return {"path": path, **_dir_sha256(path)}
    digest, size = file_digest(path, "study input")
    return _linked(path, {"path": path, "kind": "file", "sha256": digest, "bytes": size})


def content_sha256(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The content record of one data input (a file, a directory, a glob), as results.json's
    ``inputs`` holds it: a study's data card shows the same sha256."""
    return _path_sha256(os.fspath(path))


def _resolved(name: str, value: Any) -> list[str]:
    """The paths a plural input names, in order: a ``*_dirs`` value as
    :func:`evalkit.fleet.score.resolve_fleet` reads it (what the study reads); a ``*_paths`` value
    as a list of paths, or a glob's matches (sorted), or one path."""
    if name.endswith("_dirs"):
        from evalkit.fleet.paths import resolve_fleet

        return resolve_fleet(value)
    if isinstance(value, str):
        return sorted(glob.glob(value, recursive=True)) if glob.has_magic(value) else [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EvalkitError(f"{name}: expected a list of paths or a glob string")
    return list(value)


def _several_sha256(name: str, value: Any) -> dict[str, Any]:
    """Each path of a plural input hashed as a single input is, and one sha256 over all of
    them (``"<path>\\t<sha256>\\n"`` lines, in order as resolved)."""
    items, digests = [], {}
    for path in _resolved(name, value):
        try:
            item = _path_sha256(path)
        except (EvalkitError, OSError) as exc:
            item = {"path": path, "error": escape_surrogates(str(exc))}
        items.append(item)
        digests[listing_name(path)] = str(
            item.get("sha256") or "error:" + sha256_hex(str(item.get("error")).encode())
        )
    return {"path": value, "kind": "several", "count": len(items),
            "sha256": set_sha256(digests), "items": items}  # fmt: skip


def input_hashes(declared: Mapping[str, Parameter], merged: Mapping[str, Any]) -> dict[str, Any]:
    """Per data-input parameter: the path given and the sha256 of its content.

    A file hashes its bytes; a glob pattern that is not itself a path hashes the files it
    matches as a directory does; a directory hashes ``"<relative path>\\t<sha256>\\n"`` lines over
    every file below it (:func:`evalkit.files.hashing.tree_digest`: by what is read, links to
    files and folders followed, a FIFO or device named and never opened). Every link followed
    is recorded under ``links`` (its path, text and target). A plural input (``*_dirs``, ``*_paths``: a list of paths or a glob) is
    resolved to its paths (a ``*_dirs`` glob or list file as :func:`evalkit.fleet.score.resolve_fleet`
    reads it), each hashed as above (``items``), with one ``sha256`` over them all. An empty
    value means the notebook's default data (see its page).
    """
    out: dict[str, Any] = {}
    for name in declared:
        if not is_input_parameter(name):
            continue
        value = merged.get(name)
        if not value:
            out[name] = {"path": value, "content": "the notebook's default data"}
            continue
        plural = name.endswith(("_dirs", "_paths"))
        try:
            out[name] = _several_sha256(name, value) if plural else _path_sha256(str(value))
        except (EvalkitError, OSError) as exc:
            out[name] = {"path": value, "error": escape_surrogates(str(exc))}
    return out
