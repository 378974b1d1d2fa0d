"""The run log's writer thread when a waiter is cancelled (Ctrl-C during ``judge run``).

The process-level check is ``test_judge_processes.py::test_ctrl_c_...``; it met this race only
now and then. Here the race is pinned: the writer is held on the file's lock while a queued
line's future is cancelled, as asyncio does to every waiter on KeyboardInterrupt.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from evalkit.files.append import LineAppender
from evalkit.judge.runner import RunSummary, _LogWriter


class _Bar:  # tqdm's two calls the writer makes; what it shows is not under test
    def update(self, n: int) -> None:
        pass

    def set_postfix(self, **_: Any) -> None:
        pass


def _line(n: int) -> dict[str, Any]:
    return {"n": n, "outcome": "ok", "error": None, "input_tokens": 3, "output_tokens": 1}


def test_a_cancelled_waiter_still_gets_its_line_written_and_the_writer_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashes: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    path = tmp_path / "run.jsonl"
    path.touch()
    hold = os.open(path, os.O_RDWR)
    fcntl.flock(hold, fcntl.LOCK_EX)  # the writer's append waits on this lock
    summary = RunSummary()
    with LineAppender(path, "run log") as appender:
        writer = _LogWriter(appender, summary, _Bar())
        first = writer.put(_line(1))
        deadline = time.monotonic() + 5
        while not first.running() and time.monotonic() < deadline:
            time.sleep(0.005)  # until the writer has taken the first line alone
        second: Future[None] = writer.put(_line(2))
        third = writer.put(_line(3))
        assert second.cancel()  # what asyncio.wrap_future's waiter does on Ctrl-C
        fcntl.flock(hold, fcntl.LOCK_UN)
        os.close(hold)
        writer.close()
    assert crashes == []
    assert first.result(timeout=0) is None and third.result(timeout=0) is None
    assert second.cancelled()
    assert path.read_text().count("\n") == 3 and summary.calls == 3  # the call was made: kept
