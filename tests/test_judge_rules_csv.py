"""``evalkit judge --rules``: the CSV of rule-judge labels survives a lone surrogate run id.

A session id may carry a lone surrogate (a ledger's ``"s\\udc80x"``), and the run id built
from it too. The CSV writer encoded it as UTF-8 and crashed (``UnicodeEncodeError``) both for a
file and for stdout; it now writes the run id escaped (``s\\udc80x``), as evalkit prints it
everywhere else, so the label file can be joined with the journal by that run id.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from record_factory import make_record

from evalkit.journal import reader as journal


def _evalkit(*argv: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        capture_output=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONIOENCODING": encoding},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_a_lone_surrogate_run_id_is_written_escaped(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "eval.jsonl"
    rec = journal.append(path, make_record(session_id="s\udc80x"))
    shown = rec["run_id"].replace("\udc80", "\\udc80")
    out = tmp_path / "labels.csv"
    proc = _evalkit(
        "judge", "--rules", "--journal", str(path), "--out", str(out), encoding=encoding
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in proc.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [r["item_id"] for r in rows] == [shown] and rows[0]["rater"] == "rule-judge"
    proc = _evalkit("judge", "--rules", "--journal", str(path), encoding=encoding)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert proc.stdout.decode("ascii").splitlines()[1].startswith(shown + ",rule-judge,")
