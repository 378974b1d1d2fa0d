"""The pre-registration lock is read once per command, and a changed lock is read anew."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import EvalkitError
from evalkit.prereg import lock as prereg_lock
from evalkit.provenance.repository import REPO_ROOT

OPENS: list[str] = []
WATCHED: list[str] = []  # the one path counted, while a test watches it (else nothing is kept)


def _count_opens(event: str, args: tuple[Any, ...]) -> None:
    if not WATCHED or event != "open" or not args:
        return
    if isinstance(args[0], str | bytes | os.PathLike) and os.fsdecode(args[0]) in WATCHED:
        OPENS.append(os.fsdecode(args[0]))


sys.addaudithook(_count_opens)  # a hook stays for the process: it records only when watching


def _opens_of(path: Path) -> int:
    return OPENS.count(str(path))


def test_the_repository_lock_is_opened_once_for_many_reads(tmp_path: Path) -> None:
    path = tmp_path / prereg_lock.LOCK_NAME  # a copy: no earlier test has read this file
    shutil.copyfile(REPO_ROOT / prereg_lock.LOCK_NAME, path)
    WATCHED[:] = [str(path)]
    try:
        first = prereg_lock.read_lock(path)
        for _ in range(5):  # as a study run's checks read it: its entry, the gold set, the rule
            assert prereg_lock.read_lock(path) == first
    finally:
        WATCHED.clear()
    assert _opens_of(path) == 1


def test_a_lock_changed_between_reads_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / prereg_lock.LOCK_NAME
    entry = {"kind": "study", "name": "x", "path": "notebooks/x.ipynb", "sha256": "0" * 64}
    path.write_text(json.dumps({"entries": [entry]}), encoding="utf-8")
    assert prereg_lock.read_lock(path)["entries"][0]["name"] == "x"
    # the same size, written in place: the inode stays, the modification time moves on
    stamp = path.stat().st_mtime_ns
    path.write_text(json.dumps({"entries": [{**entry, "name": "y"}]}), encoding="utf-8")
    os.utime(path, ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert prereg_lock.read_lock(path)["entries"][0]["name"] == "y"


def test_a_lock_replaced_by_another_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / prereg_lock.LOCK_NAME
    entry = {"kind": "study", "name": "x", "path": "notebooks/x.ipynb", "sha256": "0" * 64}
    path.write_text(json.dumps({"entries": [entry]}), encoding="utf-8")
    assert prereg_lock.read_lock(path)["entries"][0]["name"] == "x"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"entries": [{**entry, "name": "z"}]}), encoding="utf-8")
    os.replace(other, path)  # preregister's way: a new file renamed over the lock
    assert prereg_lock.read_lock(path)["entries"][0]["name"] == "z"


def test_an_unreadable_lock_is_refused_every_time(tmp_path: Path) -> None:
    path = tmp_path / prereg_lock.LOCK_NAME
    os.mkfifo(path)
    for _ in range(2):  # a refusal is never remembered as a reading
        with pytest.raises(EvalkitError, match="pre-registration lock"):
            prereg_lock.read_lock(path)
