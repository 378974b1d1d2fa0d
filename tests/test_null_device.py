"""``--out /dev/null`` is the one special file an output flag writes to: a sink, nothing lands.

Every other device, a FIFO, a directory or a link stays refused (tests/test_write_places.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.files.output import OutputRefusedError, check_output, write_output
from evalkit.scoring.engine import SAMPLE_METRICS_DIR

TIMESTAMP = "2026-11-30T12:00:00.000Z"


def test_score_all_writes_its_table_into_the_null_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "eval.jsonl"
    argv = ["score", "--all", "--metrics-dir", str(SAMPLE_METRICS_DIR), "--no-progress"]
    argv += ["--journal", str(journal), "--timestamp", TIMESTAMP, "--out", os.devnull]
    assert main(argv) == 0, capsys.readouterr().err
    assert journal.stat().st_size > 0  # the records went where they belong
    assert os.path.exists(os.devnull) and not Path(os.devnull).is_file()  # /dev/null untouched


def test_a_writer_into_the_null_device_still_runs_and_may_still_fail() -> None:
    ran: list[int] = []
    write_output(os.devnull, lambda handle: ran.append(handle.write(b"x")), "--out")
    assert ran == [1]

    def failing(handle: object) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="could not be written"):
        write_output(os.devnull, failing, "--out")


def test_another_device_and_a_fifo_stay_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputRefusedError, match="FIFO, device or socket"):
        check_output("/dev/zero", "--out")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputRefusedError, match="FIFO, device or socket"):
        check_output(fifo, "--out")
    link = tmp_path / "null-link"
    link.symlink_to(os.devnull)
    with pytest.raises(OutputRefusedError, match="symbolic link"):
        check_output(link, "--out")
