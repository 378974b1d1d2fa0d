"""Frozen, content-hashed gold sets: load, verify, freeze.

A gold set lives in ``gold/<name>/v<N>/``: ``items.jsonl`` (one record slice per line: the
deterministic dimensions as the engine writes them, plus their facts), ``labels.jsonl``
(``item_id``, ``label``, ``rule``, ``rationale``), a data card, and ``MANIFEST.json`` (version,
date, the sha256 of every file and of the whole set, item count, class balance). A version
folder is never rewritten: :func:`freeze` mints the next version beside it.

Every load verifies the manifest first, then every file's bytes; any difference refuses the set
with an :class:`~evalkit.errors.EvalkitError` naming the file. The manifest protects itself with
a self-hash over its canonical JSON form, so a flipped byte in the manifest is caught too.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.hashing import listing_sha256, sha256_hex
from evalkit.files.hashing import sha256_file as _sha256_file
from evalkit.files.input import (
    JsonInputError,
    own_cap,
    parse_json,
    read_bytes,
    split_lines,
)
from evalkit.provenance.repository import REPO_ROOT
from evalkit.record.dimension import DimensionId

if TYPE_CHECKING:  # pandas loads only when a set is loaded
    import pandas as pd

__all__ = [
    "LABELS",
    "MANIFEST_NAME",
    "VERSION_DIR",
    "GoldSet",
    "freeze",
    "load",
    "resolve",
    "set_sha256",
    "sha256_file",
]

MANIFEST_NAME = "MANIFEST.json"
ITEMS_NAME = "items.jsonl"
LABELS_NAME = "labels.jsonl"
DATA_CARD_NAME = "DATA_CARD.md"
REQUIRED_FILES = (ITEMS_NAME, LABELS_NAME, DATA_CARD_NAME)
LABELS = ("pass", "fail", "cannot-determine")
RULES = (1, 2, 3, 4, 5, 6)
#: A version folder of a set: ``v<N>``, N >= 1 without leading zeros (the one pattern).
VERSION_DIR = re.compile(r"^v([1-9][0-9]*)$")
_MAX_MANIFEST_BYTES = 1 << 20


# --------------------------------------------------------------------------- hashing


def sha256_file(path: Path, what: str = "gold set file") -> str:
    """sha256 of a regular file (:func:`evalkit.files.hashing.sha256_file`), named as gold."""
    return _sha256_file(path, what)


#: The sha256 of a whole set: its files' listing (:func:`evalkit.files.hashing.listing_sha256`).
set_sha256 = listing_sha256


def _refuse_symlink(path: Path) -> None:
    """A frozen gold set holds its own bytes: a symlink (to a copy anywhere) is refused."""
    if path.is_symlink():
        raise EvalkitError(
            f"{path}: is a symlink; a frozen gold set holds its own files, never a link to "
            "bytes elsewhere"
        )


def _canonical_manifest(obj: Mapping[str, Any]) -> bytes:
    # Fixed layout, so that the bytes on disk can be compared with a re-serialization.
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _manifest_self_hash(obj: Mapping[str, Any]) -> str:
    body = {k: v for k, v in obj.items() if k != "manifest_sha256"}
    return sha256_hex(_canonical_manifest(body))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GoldSet:
    """A verified, frozen gold set version.

    ``items`` is a fresh copy of the item table on every access (one row per item: ``item_id``,
    ``label``, ``rule``, ``rationale``, ``rubric_version``, ``session_id``, ``family``,
    ``tags``, ``mutations``, ``kpis``, ``dimensions``, ``facts``), so the loaded set cannot be
    edited in place.
    """

    name: str
    version: int
    path: Path
    sha256: str
    manifest: Mapping[str, Any] = field(repr=False, compare=False)
    _items: pd.DataFrame = field(repr=False, compare=False)

    @property
    def items(self) -> pd.DataFrame:
        """The items table (a copy: the gold set itself never changes)."""
        return self._items.copy(deep=True)

    @property
    def tag(self) -> str:
        """``<name>-v<N>``, the form a minted calibration status uses."""
        return f"{self.name}-v{self.version}"

    @property
    def n_items(self) -> int:
        """How many items the set holds."""
        return len(self._items)

    @property
    def class_balance(self) -> dict[str, int]:
        """Items per gold label, every label listed (0 when absent)."""
        counts = self._items["label"].value_counts()
        return {label: int(counts.get(label, 0)) for label in LABELS}

    def __len__(self) -> int:
        """How many items the set holds."""
        return self.n_items


# --------------------------------------------------------------------------- reading


def _existing(path: str | os.PathLike[str]) -> Path:
    """``path`` as given, else relative to the repository root, else under ``<repo>/gold``."""
    if not isinstance(path, str | os.PathLike):
        raise EvalkitError(
            f"gold set argument 'path': must be a str or os.PathLike naming a gold set folder, "
            f"got {type(path).__name__} {path!r}"
        )
    p = Path(path)
    if p.exists() or p.is_absolute():
        return p
    for base in (REPO_ROOT, REPO_ROOT / "gold"):
        if (base / p).exists():
            return base / p
    return p


def _versions(set_dir: Path) -> list[tuple[int, Path]]:
    out = []
    for child in set_dir.iterdir() if set_dir.is_dir() else ():
        m = VERSION_DIR.match(child.name)
        if m and child.is_dir():
            out.append((int(m.group(1)), child))
    return sorted(out)


def resolve(path: str | os.PathLike[str]) -> Path:
    """The version folder ``path`` names: itself when it holds a manifest, else its newest ``vN``."""
    p = _existing(path)
    if not p.is_dir():
        raise EvalkitError(f"gold set {str(path)!r}: no such directory")
    if (p / MANIFEST_NAME).exists() or VERSION_DIR.match(p.name):
        return p
    versions = _versions(p)
    if not versions:
        raise EvalkitError(f"gold set {str(p)!r}: no version folder (v1, v2, ...) inside")
    return versions[-1][1]


def _read_manifest(vdir: Path) -> dict[str, Any]:
    mpath = vdir / MANIFEST_NAME
    if not mpath.exists() and not mpath.is_symlink():
        raise EvalkitError(f"{mpath}: manifest missing; a gold set without one cannot be verified")
    _refuse_symlink(mpath)
    raw = read_bytes(mpath, "gold set manifest", max_bytes=own_cap(_MAX_MANIFEST_BYTES))
    try:
        obj = parse_json(raw)
    except JsonInputError as exc:
        raise EvalkitError(f"{mpath}: bytes changed (not valid JSON: {exc})") from None
    if not isinstance(obj, dict):
        raise EvalkitError(f"{mpath}: bytes changed (not a JSON object)")
    if raw != _canonical_manifest(obj):
        raise EvalkitError(f"{mpath}: bytes changed (not the canonical form it was written in)")
    if obj.get("manifest_sha256") != _manifest_self_hash(obj):
        raise EvalkitError(f"{mpath}: bytes changed (its self-hash manifest_sha256 does not match)")
    files = obj.get("files")
    if not isinstance(files, dict) or not files:
        raise EvalkitError(f"{mpath}: field 'files' must map file names to sha256")
    if obj.get("set_sha256") != set_sha256(files):
        raise EvalkitError(f"{mpath}: field 'set_sha256' does not match its 'files'")
    return obj


def _check_files(vdir: Path, manifest: Mapping[str, Any]) -> None:
    files: Mapping[str, str] = manifest["files"]
    present = {p.name for p in vdir.iterdir()} - {MANIFEST_NAME}
    extras = sorted(present - set(files))
    if extras:
        raise EvalkitError(
            f"{vdir / extras[0]}: file is not in the manifest (a frozen set gained it)"
        )
    for name in sorted(files):
        fpath = vdir / name
        if not fpath.exists() and not fpath.is_symlink():
            raise EvalkitError(f"{fpath}: listed in the manifest but missing")
        _refuse_symlink(fpath)
        actual = sha256_file(fpath)
        if actual != files[name]:
            raise EvalkitError(
                f"{fpath}: bytes changed since the set was frozen (sha256 {actual[:12]}..., "
                f"manifest {str(files[name])[:12]}...); never edit a frozen gold set in place — "
                "mint a new version with `evalkit gold freeze`"
            )


def read_jsonl_objects(path: Path, what: str = "gold set file") -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file (blank lines skipped).

    Read through :mod:`evalkit.files.input`: a regular file only (a FIFO or device is refused,
    never waited on), bounded; invalid UTF-8, deep nesting, a line over the line cap or a line
    that is not a JSON object is an ``EvalkitError`` naming ``path:line``.
    """
    return [row for _, row in read_jsonl_numbered(path, what)]


def read_jsonl_numbered(
    path: Path, what: str = "gold set file"
) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of :func:`read_jsonl_objects`, each with its line number."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for line in split_lines(read_bytes(path, what)):
        if line.data is None:
            raise EvalkitError(f"{path}:{line.number}: line of {line.length} bytes is too long")
        if not line.data.strip():
            continue
        try:
            row = parse_json(line.data)
        except JsonInputError as exc:
            raise EvalkitError(f"{path}:{line.number}: not valid JSON ({exc})") from None
        if not isinstance(row, dict):
            raise EvalkitError(f"{path}:{line.number}: a line must be a JSON object")
        rows.append((line.number, row))
    return rows


def _validate_content(
    items: list[dict[str, Any]], labels: list[dict[str, Any]], where: Path
) -> list[dict[str, Any]]:
    """Join items and labels; refuse duplicates, unlabeled items, bad labels or rules."""
    ipath, lpath = where / ITEMS_NAME, where / LABELS_NAME
    by_id: dict[str, dict[str, Any]] = {}
    for i, it in enumerate(items, 1):
        iid = it.get("item_id")
        if not isinstance(iid, str) or not iid:
            raise EvalkitError(f"{ipath}: item {i}: field 'item_id' must be a non-empty string")
        if iid in by_id:
            raise EvalkitError(f"{ipath}: item_id {iid!r} appears twice")
        if not isinstance(it.get("dimensions"), list):
            raise EvalkitError(f"{ipath}: item {iid!r}: field 'dimensions' must be a list")
        by_id[iid] = it
    seen: set[str] = set()
    rows = []
    for i, lab in enumerate(labels, 1):
        iid = lab.get("item_id")
        if iid not in by_id:
            raise EvalkitError(f"{lpath}: line {i}: item_id {iid!r} is not in {ITEMS_NAME}")
        if iid in seen:
            raise EvalkitError(f"{lpath}: item_id {iid!r} is labeled twice")
        seen.add(iid)
        if lab.get("label") not in LABELS:
            raise EvalkitError(f"{lpath}: item {iid!r}: field 'label' must be one of {LABELS}")
        if lab.get("rule") not in RULES:
            raise EvalkitError(f"{lpath}: item {iid!r}: field 'rule' must be one of 1..6")
        if not isinstance(lab.get("rationale"), str) or not lab["rationale"].strip():
            raise EvalkitError(
                f"{lpath}: item {iid!r}: field 'rationale' must be a non-empty string"
            )
        it = by_id[iid]
        rows.append(
            {
                "item_id": iid,
                "label": lab["label"],
                "rule": int(lab["rule"]),
                "rationale": lab["rationale"],
                "rubric_version": it.get("rubric_version"),
                "session_id": it.get("session_id"),
                "family": it.get("family"),
                "tags": list(it.get("tags") or []),
                "mutations": list(it.get("mutations") or []),
                "kpis": it.get("kpis"),
                "dimensions": it["dimensions"],
                "facts": it.get("facts"),
            }
        )
    unlabeled = sorted(set(by_id) - seen)
    if unlabeled:
        raise EvalkitError(f"{lpath}: {len(unlabeled)} item(s) carry no label: {unlabeled[:5]}")
    if not rows:
        raise EvalkitError(f"{ipath}: a gold set needs at least one item")
    return sorted(rows, key=lambda r: r["item_id"])


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    balance = {}
    for label in LABELS:
        k = sum(r["label"] == label for r in rows)
        balance[label] = {"n": k, "share": round(k / n, 4)}
    rules = {str(r): sum(row["rule"] == r for row in rows) for r in RULES}
    versions: dict[str, int] = {}
    for r in rows:
        versions[str(r["rubric_version"])] = versions.get(str(r["rubric_version"]), 0) + 1
    return {
        "item_count": n,
        "class_balance": balance,
        "rule_counts": rules,
        "rubric_versions": dict(sorted(versions.items())),
    }


def load(path: str | os.PathLike[str] = "gold/instruction-adherence") -> GoldSet:
    """Load and verify a gold set version (``.../vN``) or the newest version of a set folder.

    The manifest is verified first (canonical bytes and self-hash), then every file's sha256,
    then the content (every item labeled once, labels and rules valid, counts as the manifest
    states), then the decision rules the manifest binds (when they sit beside the version).
    Given a set folder, every version in it is verified (a frozen history is intact or the set
    is refused) and the newest is returned. Any difference raises :class:`EvalkitError` naming
    the file; so does a ``path`` that is not a str or os.PathLike (e.g. None), naming the
    argument.
    """
    vdir = resolve(path)
    if vdir.resolve() != _existing(path).resolve():  # a set folder: the whole history must hold
        for _, older in _versions(vdir.parent)[:-1]:
            _load_version(older)
    return _load_version(vdir)


def _check_decision_rules(vdir: Path, manifest: Mapping[str, Any]) -> None:
    bound = manifest.get("decision_rules") or {}
    if not isinstance(bound, dict):
        raise EvalkitError(f"{vdir / MANIFEST_NAME}: field 'decision_rules' must be an object")
    for name, digest in sorted(bound.items()):
        rule = vdir.parent / name
        if not rule.exists() and not rule.is_symlink():
            continue  # a lone version copy; verify_all requires the set's rules
        _refuse_symlink(rule)
        if sha256_file(rule, "decision rule") != digest:
            raise EvalkitError(
                f"{rule}: bytes changed since {vdir.name} was frozen with it; a pre-registered "
                "decision rule is never edited — write a new rule file and mint a new version"
            )


def _load_version(vdir: Path) -> GoldSet:
    import pandas as pd  # deferred: heavy, and only loading a set's items needs it

    manifest = _read_manifest(vdir)
    _check_files(vdir, manifest)
    _check_decision_rules(vdir, manifest)
    for name in (ITEMS_NAME, LABELS_NAME):
        if name not in manifest["files"]:
            raise EvalkitError(f"{vdir / MANIFEST_NAME}: the set has no {name}")
    rows = _validate_content(
        read_jsonl_objects(vdir / ITEMS_NAME), read_jsonl_objects(vdir / LABELS_NAME), vdir
    )
    summary = _summary(rows)
    for key in ("item_count", "class_balance"):
        if manifest.get(key) != summary[key]:
            raise EvalkitError(f"{vdir / MANIFEST_NAME}: field {key!r} does not match the items")
    m = VERSION_DIR.match(vdir.name)
    version = int(manifest.get("version", 0))
    if m is None or int(m.group(1)) != version:
        raise EvalkitError(f"{vdir / MANIFEST_NAME}: version {version} but folder {vdir.name!r}")
    return GoldSet(
        name=str(manifest.get("name") or vdir.parent.name),
        version=version,
        path=vdir,
        sha256=str(manifest["set_sha256"]),
        manifest=MappingProxyType(manifest),
        _items=pd.DataFrame(rows),
    )


# --------------------------------------------------------------------------- freezing


def _check_date(date: object) -> None:
    """A manifest date is a real calendar date written ``YYYY-MM-DD``; anything else is refused."""
    ok = isinstance(date, str) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", date) is not None
    if ok:
        try:
            _dt.date.fromisoformat(str(date))
        except ValueError:
            ok = False
    if not ok:
        raise EvalkitError(
            f"date {date!r}: not a calendar date written YYYY-MM-DD (e.g. 2026-12-01)"
        )


def freeze(
    source_dir: str | os.PathLike[str],
    root: str | os.PathLike[str] = "gold",
    name: str = DimensionId.INSTRUCTION_ADHERENCE.value,  # a set is named by what it labels
    *,
    date: str | None = None,
) -> GoldSet:
    """Mint the next version ``root/name/v<N+1>`` from the files in ``source_dir``.

    ``source_dir`` holds ``items.jsonl``, ``labels.jsonl`` and ``DATA_CARD.md`` (and optionally
    other plain files; a ``MANIFEST.json`` there is ignored and rewritten). The content is
    validated, the files are copied, the manifest is written, and the new folder appears
    atomically; an existing version is never touched. Refuses content identical to the newest
    version. Returns the newly frozen, verified set.
    """
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
        raise EvalkitError(f"gold set name {name!r}: use lower-case letters, digits, '.', '_', '-'")
    if date is not None:
        _check_date(date)
    src = Path(source_dir)
    if not src.is_dir():
        raise EvalkitError(f"{src}: source directory not found")
    files = sorted(p for p in src.iterdir() if p.name != MANIFEST_NAME)
    for p in files:
        if not p.is_file():
            raise EvalkitError(f"{p}: a gold set holds plain files only")
    for req in REQUIRED_FILES:
        if not (src / req).is_file():
            raise EvalkitError(f"{src / req}: required file missing")
    rows = _validate_content(
        read_jsonl_objects(src / ITEMS_NAME), read_jsonl_objects(src / LABELS_NAME), src
    )
    hashes = {p.name: sha256_file(p) for p in files}
    digest = set_sha256(hashes)

    base = _existing(root)
    set_dir = base / name
    set_dir.mkdir(parents=True, exist_ok=True)
    existing = _versions(set_dir)
    if existing:
        newest = existing[-1][1]
        try:
            prev = _read_manifest(newest)
        except EvalkitError:
            prev = {}
        if prev.get("set_sha256") == digest:
            raise EvalkitError(
                f"{src}: identical to {newest} (set sha256 {digest[:12]}...); nothing to freeze"
            )
    version = (existing[-1][0] + 1) if existing else 1
    manifest: dict[str, Any] = {
        "name": name,
        "version": version,
        "date": date or _dt.datetime.now(_dt.UTC).date().isoformat(),
        "files": hashes,
        "set_sha256": digest,
        **_summary(rows),
        # the pre-registered decision rules in force when this version was frozen
        "decision_rules": {
            p.name: sha256_file(p) for p in sorted(set_dir.glob("DECISION_RULE*.json"))
        },
        "note": "frozen: never edit in place; `evalkit gold freeze` mints the next version",
    }
    manifest["manifest_sha256"] = _manifest_self_hash(manifest)

    return load(_write_version(set_dir, version, files, manifest))


def _write_version(
    set_dir: Path, version: int, files: list[Path], manifest: Mapping[str, Any]
) -> Path:
    """Copy ``files`` and the manifest into ``set_dir/v<version>``, which appears atomically."""
    staging = set_dir / f".staging-v{version}-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        for p in files:
            shutil.copyfile(p, staging / p.name)
        (staging / MANIFEST_NAME).write_bytes(_canonical_manifest(manifest))
        target = set_dir / f"v{version}"
        if target.exists():  # a concurrent freeze won the race: never overwrite it
            raise EvalkitError(f"{target}: already exists; an existing version is never rewritten")
        os.rename(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target
