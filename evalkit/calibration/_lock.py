"""A calibration and the pre-registration lock: the check before a run, and whether it may mint.

Two questions, kept apart:

* **May it run?** Only under a lock (``prereg.default_lock_path(root)``) whose gold set and
  decision rule are unchanged (:func:`evalkit.prereg.lock.require_unchanged`), or with
  ``no_lock=True`` (``--no-lock``), which the result then states.
* **May it be minted?** Only when a certificate of it would verify: the gold version folder and
  the decision rule lie inside the repository ``root`` and the repository's own lock
  (``<root>/preregistration.lock.json``, never one named elsewhere) holds both with exactly
  their sha256. A calibration against anything else is computed and shown, never minted, and
  :class:`Preregistration` says why.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit import prereg
from evalkit.errors import EvalkitError
from evalkit.gold.sets import GoldSet
from evalkit.provenance.repository import repo_root

__all__ = [
    "NO_LOCK",
    "Preregistration",
    "check_preregistration",
    "gold_tag",
    "inside",
    "mint_check",
    "unlocked_rule",
]

#: What a result made with ``no_lock=True`` says about its pre-registration.
NO_LOCK = "none (--no-lock)"


@dataclass(frozen=True)
class Preregistration:
    """How a calibration stands with the lock: its statement, and whether it may be minted."""

    statement: str
    mintable: bool
    reason: str
    gold_path: str
    rule_path: str


def inside(path: Path, base: Path) -> str | None:
    """``path`` relative to the repository ``base`` (posix), or None outside ``base/gold``.

    None also when it leaves ``base/gold`` through a symlink.
    """
    try:
        resolved = path.resolve()
        resolved.relative_to((base / "gold").resolve())
    except (OSError, ValueError):
        return None
    return resolved.relative_to(base).as_posix()


def _entries(lock: Mapping[str, Any], kind: str, rel: str) -> list[Mapping[str, Any]]:
    return [
        e
        for e in lock.get("entries") or []
        if isinstance(e, Mapping) and e.get("kind") == kind and e.get("path") == rel
    ]


def _matches(lock: Mapping[str, Any], kind: str, rel: str, sha: str) -> str | None:
    """None when the lock holds ``kind`` at ``rel`` with ``sha``; else why not."""
    what = "gold set" if kind == "gold" else "decision rule"
    found = _entries(lock, kind, rel)
    if not found:
        return f"the {what} {rel} is not in the pre-registration lock"
    if all(e.get("sha256") != sha for e in found):
        locked = ", ".join(f"{str(e.get('sha256'))[:12]}..." for e in found)
        return (
            f"the {what} {rel} differs from the pre-registration lock (sha256 {sha[:12]}..., "
            f"locked {locked})"
        )
    return None


def mint_check(
    gold_rel: str | None, gold_sha: str, rule_rel: str | None, rule_sha: str, base: Path
) -> tuple[bool, str]:
    """May a calibration on this gold set and rule be minted in the repository ``base``?"""
    if gold_rel is None:
        return False, (
            f"the gold set lies outside the repository ({base / 'gold'}): a calibration against "
            "it can be computed and shown, never minted"
        )
    if rule_rel is None:
        return False, f"the decision rule lies outside the repository ({base / 'gold'})"
    lock = prereg.read_lock(base / prereg.LOCK_NAME)
    if lock is None:
        return False, f"the repository has no pre-registration lock ({prereg.LOCK_NAME})"
    for kind, rel, sha in (("gold", gold_rel, gold_sha), ("decision_rule", rule_rel, rule_sha)):
        why = _matches(lock, kind, rel, sha)
        if why is not None:
            return False, why + "; nothing unlocked is ever minted"
    return True, (
        f"the gold set {gold_rel} and the decision rule {rule_rel} match the repository's "
        "pre-registration lock"
    )


def check_preregistration(
    gs: GoldSet,
    rule: Mapping[str, Any],
    rule_file: Path,
    *,
    root: str | os.PathLike[str] | None,
    lock: str | os.PathLike[str] | None,
    no_lock: bool,
) -> Preregistration:
    """Refuse a run whose lock is missing or whose locked gold set or rule changed.

    Otherwise say how the run stands with the lock and whether its result may be minted.
    """
    base = repo_root(root)
    gold_rel, rule_rel = inside(gs.path, base), inside(rule_file, base)
    shown_gold = gold_rel or str(gs.path)
    shown_rule = rule_rel or str(rule_file)
    if no_lock:
        return Preregistration(
            NO_LOCK,
            False,
            "run with --no-lock: no pre-registration was checked, so it can never be registered",
            shown_gold,
            shown_rule,
        )
    lock_path = Path(lock) if lock is not None else prereg.default_lock_path(base)
    if prereg.read_lock(lock_path) is None:
        raise EvalkitError(
            f"no pre-registration lock at {lock_path}: a calibration runs against locked inputs "
            "(`evalkit preregister` writes the lock), or with --no-lock, which the result then "
            "states and which can never be registered"
        )
    if gold_rel is not None:
        name = gold_rel.removeprefix("gold/")
        prereg.require_unchanged("gold", [name], lock=lock_path, root=base)
    if rule_rel is not None:
        name = rule_rel.removeprefix("gold/")
        prereg.require_unchanged("decision_rule", [name], lock=lock_path, root=base)
    mintable, reason = mint_check(gold_rel, gs.sha256, rule_rel, str(rule["sha256"]), base)
    statement = f"checked against {lock_path.name}: "
    statement += (
        "the gold set and decision rule are locked and unchanged"
        if mintable
        else f"not minted ({reason})"
    )
    return Preregistration(statement, mintable, reason, shown_gold, shown_rule)


def gold_tag(gs: GoldSet, root: str | os.PathLike[str] | None = None) -> str:
    """How a result names its gold set: ``<set>-v<N>`` for a locked version of the repository.

    Any other version (a copy outside the repository's ``gold/``, or one its lock does not
    hold with that sha256) is ``<set>-v<N>@sha256:<first 12 hex>``, so its tag never collides
    with the locked set's.
    """
    base = repo_root(root)
    rel = inside(gs.path, base)
    lock = prereg.read_lock(base / prereg.LOCK_NAME) if rel is not None else None
    if rel is not None and lock is not None and _matches(lock, "gold", rel, gs.sha256) is None:
        return gs.tag
    return f"{gs.tag}@sha256:{gs.sha256[:12]}"


def unlocked_rule(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> str | None:
    """Why the decision rule file ``path`` is not a locked rule of the repository ``root``.

    It lies outside its ``gold/``, there is no lock, the lock does not hold it, or holds other
    bytes; None when it is locked exactly as it is.
    """
    from evalkit import prereg
    from evalkit.gold.sets import sha256_file

    base = repo_root(root)
    rel = inside(Path(path), base)
    if rel is None:
        return f"the decision rule {path} lies outside the repository's gold/ ({base / 'gold'})"
    lock = prereg.read_lock(base / prereg.LOCK_NAME)
    if lock is None:
        return f"the repository has no pre-registration lock ({prereg.LOCK_NAME})"
    return _matches(lock, "decision_rule", rel, sha256_file(Path(path), "decision rule"))
