"""Calls made as they are handed in: the runner's calls for a judge answering batch after batch.

``score --journal --judge`` judges records while they are written, a batch at a time. Run
batch by batch through :func:`evalkit.judge.runner.run_calls`, the workers would drain at the
end of each batch and wait while its records are journaled. A :class:`CallStream` keeps
``concurrency`` workers for the judge's whole life instead: a batch handed in while another is
in flight queues behind it, so at most ``concurrency`` calls are in flight in all and none
waits on journaling. What a call does and writes is the runner's: the same call, the same
writer (each line fsynced before its worker's next call) and one consecutive-failure breaker
across batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from evalkit.files.append import LineAppender
from evalkit.judge.prompt import DEFAULT_INPUT_BUDGET
from evalkit.judge.redact import Redactor
from evalkit.judge.runner import (
    Call,
    EventLoop,
    RunSummary,
    _Breaker,
    _LogWriter,
    _one,
    check_limits,
)
from evalkit.judge.specs import DEFAULT_MAX_CONSECUTIVE_ERRORS

__all__ = ["CallStream"]

_Queued = tuple[Call, Mapping[str, Any], "_Batch"]


class _Batch:
    """The calls of one :meth:`CallStream.submit`; its future completes when the last ends."""

    def __init__(self, calls: int, done: Future[None]) -> None:
        self.left = calls
        self.done = done

    def end_one(self, failed: BaseException | None) -> bool:
        """One call ended (made or not); True when it was the batch's last."""
        self.left -= 1
        if self.left:
            return False
        if failed is not None:
            self.done.set_exception(failed)
        else:
            self.done.set_result(None)
        return True


class CallStream:
    """``concurrency`` workers on ``loop`` making the calls handed in (module docstring).

    ``summary`` is filled in as lines are written: ``wall_s`` runs from the first call handed
    in to the last call ended, ``stopped`` says why no new call starts. :meth:`close` ends it.
    """

    def __init__(
        self,
        loop: EventLoop,
        appender: LineAppender,
        summary: RunSummary,
        *,
        concurrency: int = 4,
        redact: Redactor | None = None,
        budget: int = DEFAULT_INPUT_BUDGET,
        progress: bool = False,
        max_consecutive_errors: int = DEFAULT_MAX_CONSECUTIVE_ERRORS,
        on_line: Callable[[dict[str, Any], str], None] | None = None,
    ) -> None:
        from tqdm import tqdm

        check_limits(concurrency, max_consecutive_errors)
        self._loop = loop
        self._summary = summary
        self._redact = redact or Redactor()
        self._budget = budget
        self._concurrency = concurrency
        self._bar = tqdm(
            total=0, unit="call", file=sys.stderr, disable=not progress, dynamic_ncols=True
        )
        self._writer = _LogWriter(appender, summary, self._bar, on_line)
        self._breaker = _Breaker(max_consecutive_errors)
        self._queue: asyncio.Queue[_Queued | None] = asyncio.Queue()  # bound to the loop on use
        self._workers: Future[Any] | None = None
        self._started = 0.0  # when the first call was handed in
        self._wall_before = summary.wall_s
        self._stopping = False

    def submit(self, calls: Sequence[Call], source: Mapping[str, Any]) -> Future[None]:
        """Queue ``calls`` (of one item source); the future completes once each has ended.

        A call ends written to the log, or not made because the stream stopped (the breaker
        tripped, the log could not be written: then the future raises that write error).
        """
        done: Future[None] = Future()
        if not calls:
            done.set_result(None)
            return done
        if self._workers is None:
            self._started = time.perf_counter()
            self._workers = self._loop.submit(self._serve())
        self._bar.total += len(calls)
        self._bar.refresh()
        batch = _Batch(len(calls), done)
        self._loop.call(self._enqueue, [(call, source, batch) for call in calls])
        return done

    def close(self, *, wait: bool = True) -> None:
        """End the workers and the writer; re-raise a write failure (``wait``).

        ``wait=False`` (leaving on an exception): no queued call starts and nothing is waited
        for: the calls in flight end with the loop, as in an interrupted run.
        """
        self._stopping = True
        try:
            if self._workers is not None:
                self._loop.call(self._enqueue, [None] * self._concurrency)
                if wait:
                    self._workers.result()
            if wait:
                self._writer.close()
            else:  # a write failure: the exception already on its way is the one to report
                with contextlib.suppress(BaseException):
                    self._writer.close()
        finally:
            self._bar.close()

    # ------------------------------------------------------------------ on the loop

    def _enqueue(self, items: list[_Queued | None]) -> None:
        for item in items:
            self._queue.put_nowait(item)

    async def _serve(self) -> None:
        await asyncio.gather(*(self._work() for _ in range(self._concurrency)))

    async def _work(self) -> None:
        while (queued := await self._queue.get()) is not None:
            call, source, batch = queued
            if not self._stopping and self._writer.failed is None and not self._breaker.tripped:
                line = await _one(call, source, self._redact, self._budget)
                self._breaker.see(line, call.judge)
                if self._breaker.tripped:
                    self._summary.stopped = self._summary.stopped or self._breaker.tripped
                # the next call only once this line is durable; a log that cannot be written:
                # the batch's future raises it
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(self._writer.put(line))
            if batch.end_one(self._writer.failed):
                self._summary.wall_s = self._wall_before + time.perf_counter() - self._started
