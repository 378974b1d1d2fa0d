"""Which files belong to a metrics directory's ledger, and what state ``sessions.jsonl`` is in.

:func:`ledger_role` keeps a journal from ever being one of the ledger's files (records appended
into ``sessions.jsonl`` would break every later score and verify): it compares resolved paths
(symlinks followed) and inodes (hard links), never names alone, and knows the files the ledger
may still grow (the ring slots, archive names of the exact shape). :func:`describe_sessions_file`
says where ``sessions.jsonl`` is and why it holds no session, for an error message.
"""

from __future__ import annotations

import contextlib
import os

from evalkit.ledger.nothing_to_score import describe_sessions
from evalkit.ledger.reader import ARCHIVE_DIR_NAME, ARCHIVE_NAME_RE, LEGACY_RING_MAX, read_jsonl

__all__ = ["describe_sessions_file", "ledger_paths", "ledger_role"]


def ledger_paths(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(role, path) of every file that is or could become part of the ledger of ``root``."""
    root = os.fspath(root)
    events = os.path.join(root, "events.jsonl")
    paths = [("sessions.jsonl", os.path.join(root, "sessions.jsonl")), ("events.jsonl", events)]
    paths += [(f"events.jsonl.{i}", f"{events}.{i}") for i in range(1, LEGACY_RING_MAX + 1)]
    archive_dir = os.path.join(root, ARCHIVE_DIR_NAME)
    with contextlib.suppress(OSError):
        paths += [
            (f"archive {n}", os.path.join(archive_dir, n))
            for n in os.listdir(archive_dir)
            if ARCHIVE_NAME_RE.match(n)
        ]
    return paths


def ledger_role(metrics_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """Which file of the ledger of ``metrics_dir`` ``path`` is, else ``None``.

    The answer names it (``"sessions.jsonl"``, an archive, ...). Compared by resolved path
    (symlinks followed) and by inode (hard links), never by name alone. A journal must never
    be one of them.
    """
    root = os.fspath(metrics_dir)
    target = os.path.realpath(path)
    try:
        st = os.stat(path)
        ident: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        ident = None
    archive_dir = os.path.realpath(os.path.join(root, ARCHIVE_DIR_NAME))
    if os.path.dirname(target) == archive_dir and ARCHIVE_NAME_RE.match(os.path.basename(target)):
        return f"archive {os.path.basename(target)}"
    for role, candidate in ledger_paths(root):
        if os.path.realpath(candidate) == target:
            return role
        if ident is not None:
            with contextlib.suppress(OSError):
                st = os.stat(candidate)
                if (st.st_dev, st.st_ino) == ident:
                    return role
    return None


def describe_sessions_file(metrics_dir: str | os.PathLike[str]) -> str:
    """What ``sessions.jsonl`` of ``metrics_dir`` is, for an error that found no session in it.

    Its path and its state (:func:`evalkit.ledger.nothing_to_score.describe_sessions`), read now:
    for an error raised where the ledger as read is not at hand.
    """
    return describe_sessions(read_jsonl(os.path.join(os.fspath(metrics_dir), "sessions.jsonl")))
