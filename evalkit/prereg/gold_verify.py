"""Verifying the gold folder as a whole: every version, its history, its rules and the lock.

:func:`verify_all` (also ``evalkit.gold.sets.verify_all``, behind ``evalkit gold verify``) checks
what one version's :func:`evalkit.gold.sets.load` cannot see: a version deleted from a set's
history, a decision rule deleted or replaced by a symlink, a version folder that is a symlink,
and what the repository's pre-registration lock holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit import prereg
from evalkit.errors import EvalkitError
from evalkit.gold.sets import (
    VERSION_DIR,
    _existing,
    _load_version,
    _refuse_symlink,
    _versions,
    sha256_file,
)

__all__ = ["VerifyResult", "verify_all"]


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of verifying one gold set version (``ok`` False names the problem)."""

    name: str
    version: int | None
    path: Path
    ok: bool
    sha256: str | None
    n_items: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON-simple values."""
        return {
            "name": self.name,
            "version": self.version,
            "path": str(self.path),
            "ok": self.ok,
            "sha256": self.sha256,
            "n_items": self.n_items,
            "message": self.message,
        }


def verify_all(root: str | os.PathLike[str] = "gold") -> list[VerifyResult]:
    """Verify every version of every gold set under ``root`` (never raises for a bad set).

    Besides every version's own bytes (:func:`load`): a version folder or decision rule that is
    a symlink is refused; a set's versions run v1..vN with no gap (a frozen version is never
    deleted); every decision rule a version's manifest binds is present beside it; and when
    the repository that holds ``root`` has a pre-registration lock
    (``<root>/../preregistration.lock.json``), every gold version and decision rule it holds
    under ``root`` is present and hashes as locked. Each problem is one failed result.
    """
    base = _existing(root)
    if not base.is_dir():
        raise EvalkitError(f"gold root {str(root)!r}: no such directory")
    results: list[VerifyResult] = []
    for set_dir in sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink()):
        results += _verify_set(set_dir)
    return results + _verify_against_lock(base, results)


def _failed(name: str, version: int | None, path: Path, message: str) -> VerifyResult:
    return VerifyResult(name, version, path, False, None, None, message)


def _verify_set(set_dir: Path) -> list[VerifyResult]:
    versions = _versions(set_dir)
    present = {v for v, _ in versions}
    results = [
        _failed(
            set_dir.name,
            v,
            set_dir / f"v{v}",
            f"{set_dir / f'v{v}'}: missing; versions are minted v1, v2, ... and a frozen "
            "version is never deleted",
        )
        for v in range(1, max(present, default=0) + 1)
        if v not in present
    ]
    for version, vdir in versions:
        try:
            _refuse_symlink(vdir)
            gs = _load_version(vdir)
            _require_bound_rules(vdir, gs.manifest)
        except EvalkitError as exc:
            results.append(_failed(set_dir.name, version, vdir, str(exc)))
        else:
            results.append(
                VerifyResult(gs.name, gs.version, vdir, True, gs.sha256, gs.n_items, "ok")
            )
    for rule in sorted(set_dir.glob("DECISION_RULE*.json")):
        try:
            _refuse_symlink(rule)
        except EvalkitError as exc:
            results.append(_failed(set_dir.name, None, rule, str(exc)))
    return sorted(results, key=lambda r: (r.version is None, r.version or 0))


def _require_bound_rules(vdir: Path, manifest: Mapping[str, Any]) -> None:
    """Every decision rule ``vdir`` was frozen with is still beside it."""
    for name, digest in sorted((manifest.get("decision_rules") or {}).items()):
        rule = vdir.parent / name
        if not rule.exists() and not rule.is_symlink():
            raise EvalkitError(
                f"{rule}: missing, but {vdir.name} was frozen with it (sha256 "
                f"{str(digest)[:12]}...); a pre-registered decision rule is never deleted"
            )


def _verify_against_lock(base: Path, results: list[VerifyResult]) -> list[VerifyResult]:
    """Gold versions and decision rules the repository's lock holds under ``base``.

    Each is present and hashes as locked (a version's set sha256, a rule's file sha256).
    """
    repo = base.parent
    lock_path = repo / prereg.LOCK_NAME
    try:
        lock = prereg.read_lock(lock_path)
    except EvalkitError as exc:
        return [_failed(base.name, None, lock_path, str(exc))]
    if lock is None:
        return []
    locked: dict[tuple[str, str], set[str]] = {}
    for e in lock["entries"]:
        if isinstance(e, dict) and e.get("kind") in ("gold", "decision_rule"):
            locked.setdefault((e["kind"], str(e.get("path"))), set()).add(str(e.get("sha256")))
    reported = {r.path for r in results if not r.ok}
    shas = {r.path: r.sha256 for r in results if r.ok}
    out = []
    for (kind, rel), digests in sorted(locked.items()):
        p = repo / rel
        if p in reported or not p.resolve().is_relative_to(base.resolve()):
            continue
        m = VERSION_DIR.match(p.name)
        where = (p.parent.name, int(m.group(1)) if kind == "gold" and m else None)
        if not p.exists() and not p.is_symlink():
            message = "missing, but the pre-registration lock holds it; never deleted"
        else:
            now = shas.get(p) if kind == "gold" else sha256_file(p, "decision rule")
            if now is None or now in digests:
                continue
            message = f"sha256 {now[:12]}... differs from the pre-registration lock"
        out.append(_failed(*where, p, f"{p}: {message} ({lock_path.name})"))
    return out
