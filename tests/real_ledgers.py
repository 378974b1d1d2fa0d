"""The real ledgers of ``../shared/conformance/real/``, copied into a temp dir and journaled.

Each prefix there is one ledger, repeated once per session argument (``-sNN``) and once for
the cascade; the files are the same in every copy, so one copy (``<prefix>-cascade``) is read.
They are another project's data: copied at test time into a temp dir, never into the project.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import require_shared

#: prefix -> (sessions the canonical reading holds, events readable in events.jsonl)
REAL_LEDGERS: dict[str, tuple[int, int]] = {
    "ledger-2026-04-13": (10, 47),
    "golden": (7, 0),
    "invalid-golden": (11, 0),
    "sample": (4, 0),
    "happy": (1, 4),
}
#: One batch timestamp, so the journaled records (and every page over them) are reproducible.
TIMESTAMP = "2026-12-01T00:00:00.000Z"
_LEDGER_FILES = ("sessions.jsonl", "events.jsonl")


def copy_real_ledger(prefix: str, target: Path) -> Path:
    """``<prefix>-cascade``'s ledger files (no expected files, no journal) copied to ``target``."""
    source = require_shared("conformance", "real", f"{prefix}-cascade")
    target.mkdir(parents=True)
    for name in _LEDGER_FILES:
        if (source / name).exists():
            shutil.copyfile(source / name, target / name)
    return target


def journaled_real_ledger(
    prefix: str, target: Path, rubrics: tuple[str, ...] = ("rubric-v2",)
) -> Path:
    """The ledger copied to ``target`` with ``eval.jsonl`` written under each of ``rubrics``."""
    from evalkit.journal.batch import journal_ledger

    copy_real_ledger(prefix, target)
    for rubric in rubrics:
        journal_ledger(target, target / "eval.jsonl", rubric, timestamp=TIMESTAMP)
    return target
