"""Where a run came from: git, the host (only as a hash), the dependency lock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.provenance.git import (
        Revision,
        dirty_paths,
        evalkit_commit,
        file_history,
        has_commit,
        head_commit,
        is_dirty,
        run_git,
    )
    from evalkit.provenance.host import (
        hostname_hash,
    )
    from evalkit.provenance.lockfile import (
        LOCK_NAME,
        environment_mismatches,
        lock_path,
        lock_sha256,
        read_pins,
        unsatisfied_requirements,
    )
    from evalkit.provenance.repository import (
        PACKAGE_DIR,
        REPO_ROOT,
        repo_root,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "Revision": "evalkit.provenance.git",
    "evalkit_commit": "evalkit.provenance.git",
    "file_history": "evalkit.provenance.git",
    "has_commit": "evalkit.provenance.git",
    "head_commit": "evalkit.provenance.git",
    "dirty_paths": "evalkit.provenance.git",
    "is_dirty": "evalkit.provenance.git",
    "run_git": "evalkit.provenance.git",
    "hostname_hash": "evalkit.provenance.host",
    "LOCK_NAME": "evalkit.provenance.lockfile",
    "environment_mismatches": "evalkit.provenance.lockfile",
    "lock_path": "evalkit.provenance.lockfile",
    "lock_sha256": "evalkit.provenance.lockfile",
    "read_pins": "evalkit.provenance.lockfile",
    "unsatisfied_requirements": "evalkit.provenance.lockfile",
    "PACKAGE_DIR": "evalkit.provenance.repository",
    "REPO_ROOT": "evalkit.provenance.repository",
    "repo_root": "evalkit.provenance.repository",
}

__all__ = [
    "LOCK_NAME",
    "PACKAGE_DIR",
    "REPO_ROOT",
    "Revision",
    "dirty_paths",
    "environment_mismatches",
    "evalkit_commit",
    "file_history",
    "has_commit",
    "head_commit",
    "hostname_hash",
    "is_dirty",
    "lock_path",
    "lock_sha256",
    "read_pins",
    "repo_root",
    "run_git",
    "unsatisfied_requirements",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
