"""The dependency lock: exact versions with hashes, what a study records of it, and staleness.

``requirements.lock`` (repository root) pins every package of the core and of every extra for
CPython 3.11 on Linux x86_64, each with the sha256 of the files pip may install; ``make
install`` installs exactly it (``pip install --require-hashes``) and ``make lock`` regenerates
it from ``pyproject.toml`` (``uv pip compile --generate-hashes``). A study's ``results.json``
records the lock's sha256 and the packages of the running environment that differ from it, so
"the same lock" is a claim a reader can check rather than assume.

Run ``python -m evalkit.provenance.lockfile [PYPROJECT [LOCK]]`` to check that the lock still satisfies
every requirement of ``pyproject.toml`` (exit 1 naming the ones it does not).
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from evalkit.files.hashing import sha256_file
from evalkit.provenance.repository import REPO_ROOT

__all__ = [
    "LOCK_NAME",
    "environment_mismatches",
    "lock_path",
    "lock_sha256",
    "read_pins",
    "unsatisfied_requirements",
]

#: The lock's file name, at the repository root.
LOCK_NAME = "requirements.lock"
# `name==version` at the start of a line; hashes and comments follow on continuation lines
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", re.MULTILINE)


def _norm(name: str) -> str:
    """A distribution name as PEP 503 normalizes it (``PyYAML`` -> ``pyyaml``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_path() -> Path:
    """Where the lock of this checkout lies (absent in an installed wheel)."""
    return REPO_ROOT / LOCK_NAME


def lock_sha256(path: Path | None = None) -> str | None:
    """sha256 of the lock's bytes, or None when there is no lock file (e.g. an installed wheel)."""
    target = lock_path() if path is None else path
    try:
        return sha256_file(target, "dependency lock")
    except FileNotFoundError:
        return None


def read_pins(text: str) -> dict[str, str]:
    """Normalized distribution name -> pinned version, for every ``name==version`` line."""
    return {_norm(m.group(1)): m.group(2) for m in _PIN.finditer(text)}


def environment_mismatches(path: Path | None = None) -> list[str] | None:
    """Pinned packages the running environment does not hold at the pinned version.

    ``None`` without a lock file; ``[]`` when every pin is installed as locked; otherwise one
    line per difference (``numpy: locked 2.4.6, installed 2.4.5`` or ``..., not installed``).
    """
    target = lock_path() if path is None else path
    try:
        pins = read_pins(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    out = []
    for name, version in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            out.append(f"{name}: locked {version}, not installed")
            continue
        if installed != version:
            out.append(f"{name}: locked {version}, installed {installed}")
    return out


def _requirements(pyproject: Mapping[str, Any]) -> list[str]:
    project = pyproject["project"]
    reqs = list(project.get("dependencies", []))
    reqs += pyproject.get("build-system", {}).get("requires", [])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return reqs


def unsatisfied_requirements(pyproject_path: Path, lock: Path) -> list[str]:
    """Requirements of ``pyproject_path`` (core, every extra, the build system) the lock misses.

    A requirement is satisfied when the lock pins its distribution at a version its specifier
    allows; requirements on evalkit itself (``evalkit[studies]`` in an extra) are skipped.
    """
    from packaging.requirements import Requirement  # a dependency of statsmodels

    pyproject = tomllib.loads(pyproject_path.read_text(encoding="utf-8"))
    name = _norm(pyproject["project"]["name"])
    pins = read_pins(lock.read_text(encoding="utf-8"))
    missing = []
    for text in _requirements(pyproject):
        req = Requirement(text)
        dist = _norm(req.name)
        if dist == name:
            continue
        pinned = pins.get(dist)
        if pinned is None:
            missing.append(f"{text} (not in the lock)")
        elif not req.specifier.contains(pinned, prereleases=True):
            missing.append(f"{text} (the lock pins {pinned})")
    return missing


def main(argv: Sequence[str] | None = None) -> int:
    """Check the lock against pyproject.toml; 0 when it satisfies every requirement, else 1."""
    args = list(sys.argv[1:] if argv is None else argv)
    pyproject = Path(args[0] if args else "pyproject.toml")
    lock = Path(args[1] if len(args) > 1 else LOCK_NAME)
    missing = unsatisfied_requirements(pyproject, lock)
    if missing:
        print(f"{lock} does not satisfy {pyproject}; run `make lock`:", file=sys.stderr)
        for line in missing:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
