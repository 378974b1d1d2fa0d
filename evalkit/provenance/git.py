"""What git knows about the checkout: the commit, whether it is dirty, a file's committed history.

Used for provenance (a record names the commit of the engine that wrote it, a study's results
the commit they ran on; verify asks whether a record's commit is one this repository holds) and
for the
pre-registration lock, whose committed history is what makes a rewritten lock visible: a lock
file says what it likes about its own dates, a commit graph others hold is harder to rewrite.
Every call is bounded (timeout, size caps) and answers None / empty when git or the repository
is not there; nothing here raises for a missing git.

Standard library only.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evalkit.provenance.repository import REPO_ROOT

__all__ = [
    "Revision",
    "dirty_paths",
    "evalkit_commit",
    "file_history",
    "has_commit",
    "head_commit",
    "is_dirty",
    "run_git",
]

#: The directory holding the ``evalkit`` package: the repository root in a checkout.
#: A git object id: 40 hex (SHA-1 repositories) or 64 hex (SHA-256 repositories).
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

_TIMEOUT = 20
#: Most revisions of one file that :func:`file_history` reads.
MAX_REVISIONS = 500
#: Largest committed blob :func:`file_history` reads (bigger ones are listed without content).
MAX_BLOB_BYTES = 16 << 20


@dataclass(frozen=True)
class Revision:
    """One committed version of a file: commit, commit date (YYYY-MM-DD), content (or None)."""

    commit: str
    date: str
    content: bytes | None


def run_git(
    cwd: str | os.PathLike[str], *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes] | None:
    """``git -C cwd args...`` (bytes in and out), or None when git cannot be run at all."""
    try:
        return subprocess.run(
            ["git", "-C", os.fspath(cwd), *args],
            input=stdin,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def head_commit(cwd: str | os.PathLike[str]) -> str | None:
    """The commit checked out at ``cwd``, or None outside a repository.

    40 hex digits, or 64 in a SHA-256 repository.
    """
    res = run_git(cwd, "rev-parse", "HEAD")
    if res is None or res.returncode != 0:
        return None
    commit = res.stdout.decode("ascii", "replace").strip()
    return commit if _OBJECT_ID.fullmatch(commit) else None


def _is_checkout() -> bool:
    return (REPO_ROOT / ".git").exists()


@lru_cache(maxsize=1)
def evalkit_commit() -> str | None:
    """The commit of the evalkit checkout this package runs from.

    A record's ``provenance.engine_commit``; None for an installed copy or without git.
    """
    return head_commit(REPO_ROOT) if _is_checkout() else None


@lru_cache(maxsize=256)
def has_commit(sha: str) -> bool | None:
    """Whether the evalkit repository holds commit ``sha``.

    None when it cannot tell (not a checkout, no git). Cached: a journal names the same few
    commits many times.
    """
    if not _is_checkout():
        return None
    res = run_git(REPO_ROOT, "cat-file", "-e", f"{sha}^{{commit}}")
    return None if res is None else res.returncode == 0


def is_dirty(cwd: str | os.PathLike[str], *, decisive: Sequence[str] = ()) -> bool | None:
    """True when the work tree is not its commit (:func:`dirty_paths`); None without git."""
    found = dirty_paths(cwd, limit=1, decisive=decisive)
    return None if found is None else bool(found)


def dirty_paths(
    cwd: str | os.PathLike[str], *, limit: int = 100, decisive: Sequence[str] = ()
) -> list[str] | None:
    """What makes the work tree differ from its commit, at most ``limit``; None without git.

    As ``git status --porcelain`` lines: ``" M path"`` (changed), ``"?? path"`` (untracked, not
    ignored): an untracked ``calibrations/*.json`` decides what a page says is registered, so
    the commit alone does not name what ran. Below the ``decisive`` paths (folders or files
    whose content decides a result) an ignored file counts too (``"!! path"``: a
    ``.git/info/exclude`` hides no certificate); and a tracked file git is told not to look at
    (``update-index --assume-unchanged`` or ``--skip-worktree``), whose changes no status
    shows, is listed as ``"?h path"`` or ``"?S path"``.
    """
    res = run_git(cwd, "status", "--porcelain", "--untracked-files=all")
    if res is None or res.returncode != 0:
        return None
    lines = [line for line in res.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    if decisive:
        ignored = run_git(
            cwd, "status", "--porcelain", "--ignored=matching", "--untracked-files=all", "--",
            *decisive,
        )  # fmt: skip
        if ignored is None or ignored.returncode != 0:
            return None
        out = ignored.stdout.decode("utf-8", "replace").splitlines()
        lines += [line for line in out if line.startswith("!! ")]
    flagged = run_git(cwd, "ls-files", "-v")
    if flagged is None or flagged.returncode != 0:
        return None
    for line in flagged.stdout.decode("utf-8", "replace").splitlines():
        tag, _, path = line.partition(" ")
        if tag == "S" or (len(tag) == 1 and tag.islower()):
            lines.append(f"?{'S' if tag == 'S' else 'h'} {path}")
    return lines[:limit]


def _repo_path(path: Path) -> tuple[Path, str] | None:
    """(top-level directory, path relative to it) of ``path`` inside a work tree."""
    parent = path.parent if path.parent.is_dir() else None
    if parent is None:
        return None
    res = run_git(parent, "rev-parse", "--show-toplevel")
    if res is None or res.returncode != 0:
        return None
    top = Path(res.stdout.decode("utf-8", "surrogateescape").strip())
    try:
        rel = path.resolve().relative_to(top.resolve())
    except ValueError:
        return None
    return top, rel.as_posix()


def file_history(path: str | os.PathLike[str]) -> list[Revision]:
    """Every committed version of ``path`` reachable from HEAD, newest first.

    Empty when the file is not inside a git work tree or git is missing. At most
    :data:`MAX_REVISIONS` revisions are read; a commit that deleted the file is skipped.
    """
    found = _repo_path(Path(path))
    if found is None:
        return []
    top, rel = found
    log = run_git(top, "log", f"--max-count={MAX_REVISIONS}", "--format=%H %cs", "HEAD", "--", rel)
    if log is None or log.returncode != 0:
        return []
    commits = [
        tuple(line.split(" ", 1))
        for line in log.stdout.decode("ascii", "replace").splitlines()
        if line.strip()
    ]
    if not commits:
        return []
    request = "".join(f"{c[0]}:{rel}\n" for c in commits).encode("utf-8", "surrogateescape")
    batch = run_git(top, "cat-file", "--batch", stdin=request)
    if batch is None or batch.returncode != 0:
        return []
    return _parse_batch(batch.stdout, commits)


def _parse_batch(out: bytes, commits: list[tuple[str, ...]]) -> list[Revision]:
    revisions: list[Revision] = []
    pos = 0
    for commit, date in ((c[0], c[1] if len(c) > 1 else "") for c in commits):
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) >= 2 and header[-1] == b"missing":
            continue  # the commit deleted the file
        if len(header) != 3:
            break
        size = int(header[2])
        content = out[pos : pos + size] if size <= MAX_BLOB_BYTES else None
        pos += size + 1  # the blob and its trailing newline
        revisions.append(Revision(commit, date, content))
    return revisions
