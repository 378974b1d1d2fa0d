"""Issue 24, finding 16 (all but the certificate warnings): errors that say where and why.

``facts RUN`` on a line whose seal fails said "no record with run_id"; a full disk during
``calibrate --register`` named no path; the label readers disagreed on numbering (0-based
"row 0" against "line 2") and on unknown outcomes (one refused them, one read them as a call
that gave no label). Now a line holding the run id is named with why it is no record, a
failed write names its file, and every label reader numbers a file's lines from 1 (the header)
and refuses an outcome other than ``ok``, ``cannot-parse`` or ``error``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import require_shared
from record_factory import TIMESTAMP

import evalkit
from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal


@pytest.fixture
def changed(tmp_path: Path) -> tuple[Path, str]:
    """A journal whose one record was edited after it was written (its seal no longer holds)."""
    metrics = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), metrics)
    rec = journal.append(
        metrics / "eval.jsonl", evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    )
    rec["dimensions"][0]["status"] = "pass" if rec["dimensions"][0]["status"] != "pass" else "fail"
    (metrics / "eval.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return metrics, str(rec["run_id"])


def test_a_run_id_on_a_changed_line_is_named_with_why_it_is_no_record(
    changed: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics, run_id = changed
    said = f"line 1 holds run id {run_id!r} but is not a valid record: "
    assert main(["facts", run_id, "--metrics-dir", str(metrics)]) == 1
    err = capsys.readouterr().err
    assert said in err and "changed after it was written" in err
    argv = ["judge", "run", "--journal", str(metrics / "eval.jsonl"), "--run-id", run_id]
    assert main([*argv, "--judge", "replay:x.jsonl", "--out", str(tmp_path / "log.jsonl")]) == 1
    assert said in capsys.readouterr().err
    assert main(["facts", "no-such-run", "--metrics-dir", str(metrics)]) == 1
    assert "no valid record with run id 'no-such-run'" in capsys.readouterr().err


def test_every_label_reader_numbers_lines_alike_and_refuses_an_unknown_outcome(
    tmp_path: Path,
) -> None:
    from evalkit.calibration.labels import read_labels
    from evalkit.files.labels import read_item_labels

    path = tmp_path / "labels.csv"
    path.write_text(
        "item_id,judge,repeat,label,outcome\n\nia-001,j,0,pass,ok\nia-001,j,1,,banana\n",
        encoding="utf-8",
    )
    for read in (read_item_labels, read_labels):
        with pytest.raises(EvalkitError, match=r"labels\.csv'?: line 4: .*'banana'"):
            read(path)
    path.write_text("item_id,judge,repeat,label,outcome\nia-001,j,0,pass,ok\n"
                    "ia-001,j,0,fail,ok\n", encoding="utf-8")  # fmt: skip
    for read in (read_item_labels, read_labels):
        with pytest.raises(EvalkitError, match=r"labels\.csv'?: line 3: .*repeat 0"):
            read(path)


_FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, resource.RLIM_INFINITY))
    from evalkit.cli.main import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.slow
def test_a_full_disk_during_register_names_the_certificate_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Through the real kernel: RLIMIT_FSIZE stops the certificate's write (EFBIG), as a full
    disk does, in a copy of the repository (its own calibrations/)."""
    from repo_layout import SET, clean_env, make_repo

    repo = make_repo(tmp_path / "repo", package=True)
    argv = ["calibrate", "--rule-judge", "--gold", f"gold/{SET}/v2", "--register",
            "--n-resamples", "200"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, *argv], cwd=repo, capture_output=True, text=True,
        timeout=600, check=False,
        env=clean_env(PYTHONPATH=str(repo), PYTHONDONTWRITEBYTECODE="1"),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "calibration certificate '" in done.stderr and "could not be written" in done.stderr
    assert str(repo / "calibrations") in done.stderr or "calibrations/" in done.stderr
    left = sorted(p.name for p in (repo / "calibrations").iterdir())
    assert [n for n in left if n.endswith((".json", ".tmp"))] == [], left
    assert os.path.isdir(repo / "calibrations")
