"""Run judges over items, K times each, into a resumable run log (``evalkit judge run``).

How a run goes:

1. **Plan.** Every (item, repeat, judge) is a call. The existing run log (``--out``) is read
   first: a call it already answered (``ok`` or ``cannot-parse``) is skipped; an error outcome
   is not an answer and is called again. A log that answered a judge with other parameters
   (temperature, max_tokens, seed) or an item with other content is refused: its answers would
   be mixed with answers to another question.
2. **Call.** At most ``concurrency`` calls are in flight (asyncio; the SDKs' async clients).
   Calls go repeat by repeat, so a run stopped early has whole repeats first. Each call has a
   whole-call deadline (the judge's ``deadline``: ``--timeout``), however slowly a server
   sends; after ``max_consecutive_errors`` connection failures or timeouts in a row no new call
   starts and the run says why, naming the base URL (a dead server ends a run in seconds).
3. **Record.** One writer thread appends the finished lines to the log in batches, all or
   nothing, fsynced (:mod:`evalkit.files.append`), so the event loop never waits on the disk.
   A worker starts its next call only once its last line is fsynced, so a killed run loses at
   most the calls in flight (one per worker, ``concurrency`` in all). When the log cannot be
   written, no new call starts and the run ends with the I/O error; lines already written stay.
4. **Report.** A tqdm bar on stderr (calls done/total, errors, tokens) and a summary line;
   :attr:`RunSummary.unanswered` counts the (item, repeat, judge) left without an answer.

The whole run holds an exclusive lock on the run log (:func:`evalkit.judge.runlog.lock_runlog`),
taken before the log is read to plan, so a second run on the same log refuses instead of asking
the same calls again. Every line records the prompt template's sha256, so the judge's identity
(:mod:`evalkit.record.judging`) can be read back from the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from evalkit._version import __version__
from evalkit.errors import EvalkitError
from evalkit.files.append import LineAppender, encode_line
from evalkit.js.timestamps import format_iso
from evalkit.judge.clients import CallFailed, Completion
from evalkit.judge.items import ItemSource, JudgeItem
from evalkit.judge.prompt import (
    DEFAULT_INPUT_BUDGET,
    TokenBudgetExceeded,
    build_prompt,
    check_budget,
    new_nonce,
    prompt_template_sha256,
)
from evalkit.judge.redact import Redactor
from evalkit.judge.reply import CANNOT_PARSE, read_reply
from evalkit.judge.runlog import SCHEMA, RunLog
from evalkit.judge.specs import DEFAULT_MAX_CONSECUTIVE_ERRORS

__all__ = [
    "DEFAULT_MAX_CONSECUTIVE_ERRORS",
    "Call",
    "EventLoop",
    "JudgeHandle",
    "RunSummary",
    "check_limits",
    "check_resumable",
    "plan_calls",
    "run_calls",
]

_IDENTITY = ("temperature", "max_tokens", "seed")
_DEAD_SERVER_KINDS = frozenset({"connection", "timeout"})


class JudgeHandle(Protocol):
    """What the runner needs of a judge (a model client's judge, or a replay)."""

    name: str
    params_log: Mapping[str, Any]
    label_origin: str  # "model-api", "replay" or "rules"
    deadline: float | None  # seconds a whole call may take (None: no deadline of its own)

    def nonce(self, item_id: str, repeat: int) -> str | None:
        """The prompt nonce to use for (item, repeat); None: a fresh random one."""

    def origin(self, item_id: str, repeat: int) -> dict[str, Any] | None:
        """Where a replayed answer comes from (the run log's ``replay`` field), or None."""

    async def answer(self, item: JudgeItem, repeat: int, prompt: str) -> Completion:
        """The answer to ``prompt``; ``CallFailed`` when the call fails."""

    async def aclose(self) -> None:
        """Release what the judge holds (connections)."""


@dataclass(frozen=True)
class Call:
    """One call to make: an item, a repeat, a judge."""

    item: JudgeItem
    repeat: int
    judge: JudgeHandle


@dataclass
class RunSummary:
    """What a run did: calls made (``calls``), skipped as already answered, outcomes, tokens."""

    total: int = 0
    skipped: int = 0
    calls: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)
    input_tokens: int = 0
    output_tokens: int = 0
    wall_s: float = 0.0
    first_error: str | None = None  # "kind: message" of the first error written
    stopped: str | None = None  # why no new call started (a run of connection failures)

    def add(self, line: Mapping[str, Any]) -> None:
        """Count one written run-log ``line``: its outcome, error kind and tokens."""
        self.calls += 1
        self.outcomes[line["outcome"]] += 1
        if line["error"] is not None:
            self.error_kinds[line["error"]["kind"]] += 1
            if self.first_error is None:
                self.first_error = f"{line['error']['kind']}: {line['error']['message']}"
        self.input_tokens += line["input_tokens"] or 0
        self.output_tokens += line["output_tokens"] or 0

    def line(self) -> str:
        """The one-line summary printed at the end of a run."""
        errors = self.outcomes["error"]
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.error_kinds.items()))
        text = (
            f"{self.calls} call(s) in {self.wall_s:.1f} s: {self.outcomes['ok']} ok, "
            f"{self.outcomes['cannot-parse']} cannot-parse, {errors} error(s)"
            + (f" ({kinds})" if kinds else "")
            + f"; tokens in {self.input_tokens:,} / out {self.output_tokens:,}; "
            f"{self.skipped} already answered, skipped"
        )
        if self.calls < self.total - self.skipped:
            text += f"; {self.total - self.skipped - self.calls} call(s) not made"
        if self.stopped:
            text += f"; {self.stopped}"
        return text

    @property
    def unanswered(self) -> int:
        """(item, repeat, judge) of the run left without an answer: errors and calls not made."""
        return self.total - self.skipped - (self.calls - self.outcomes["error"])


def check_resumable(log: RunLog, judges: Sequence[JudgeHandle], items: Sequence[JudgeItem]) -> None:
    """Refuse a log whose answers were given under other parameters or to other item content."""
    for judge in judges:
        first = log.first_of(judge.name)
        logged = first.data.get("params") if first is not None else None
        if first is None or not isinstance(logged, Mapping):
            continue
        for key in _IDENTITY:
            if logged.get(key) != judge.params_log.get(key):
                raise EvalkitError(
                    f"{log.path}: line {first.line} answered {judge.name} with {key}="
                    f"{logged.get(key)!r}, this run asks {key}={judge.params_log.get(key)!r}; "
                    "resume with the same parameters or write to another --out"
                )
    content = {item.item_id: item.sha256 for item in items}
    for entry in log.entries:
        expected = content.get(entry.item_id)
        if expected is not None and entry.answered and entry.data.get("item_sha256") != expected:
            raise EvalkitError(
                f"{log.path}: line {entry.line} answered item {entry.item_id!r} as it was "
                "before (another content sha256); the item changed: write to another --out"
            )


def plan_calls(
    source: ItemSource, judges: Sequence[JudgeHandle], repeats: int, log: RunLog
) -> tuple[list[Call], int]:
    """The calls still to make, repeat by repeat, and how many the log already answered."""
    names = [judge.name for judge in judges]
    if len(set(names)) != len(names):
        raise EvalkitError(f"the same judge is named twice: {', '.join(names)}")
    check_resumable(log, judges, source.items)
    answered = log.answered()
    calls: list[Call] = []
    skipped = 0
    for repeat in range(repeats):
        for item in source.items:
            for judge in judges:
                if (item.item_id, repeat, judge.name) in answered:
                    skipped += 1
                else:
                    calls.append(Call(item, repeat, judge))
    return calls, skipped


def _prompt(call: Call) -> tuple[str, str]:
    """The prompt of ``call`` and its nonce (a replay's logged nonce when it is usable)."""
    nonce = call.judge.nonce(call.item.item_id, call.repeat) or new_nonce()
    try:
        return build_prompt(call.item.record, call.item.facts, nonce), nonce
    except EvalkitError:  # a logged nonce the data happens to contain: use a fresh one
        nonce = new_nonce()
        return build_prompt(call.item.record, call.item.facts, nonce), nonce


async def _answer(call: Call, prompt: str) -> Completion:
    """The judge's answer within its whole-call deadline (``CallFailed`` ``timeout`` past it)."""
    deadline = call.judge.deadline
    if deadline is None:
        return await call.judge.answer(call.item, call.repeat, prompt)
    try:
        return await asyncio.wait_for(call.judge.answer(call.item, call.repeat, prompt), deadline)
    except TimeoutError:
        raise CallFailed(
            "timeout", f"no complete reply within the whole-call deadline of {deadline:g} s"
        ) from None


async def _one(call: Call, source: Mapping[str, Any], redact: Redactor, budget: int) -> dict:
    """Make one call and return its run-log line (never raises for a failed call)."""
    prompt, nonce = _prompt(call)
    completion: Completion | None = None
    error: CallFailed | None = None
    started = time.perf_counter()
    try:
        check_budget(prompt, budget)
        completion = await _answer(call, prompt)
    except TokenBudgetExceeded as exc:
        error = CallFailed("over-budget", str(exc))
    except CallFailed as exc:
        error = exc
    except Exception as exc:  # a bug must not kill the run: recorded, never a label
        error = CallFailed("internal-error", redact(f"{type(exc).__name__}: {exc}"))
    latency = time.perf_counter() - started
    if completion is not None:
        reply: str | None = redact(completion.text)
    else:  # an over-long reply is kept, cut to its cap; any other error has none
        reply = redact(error.reply) if error is not None and error.reply is not None else None
    reading = (
        read_reply(
            reply, item_id=call.item.item_id, rubric_version=call.item.rubric_version, nonce=nonce
        )
        if completion is not None and reply is not None
        else None
    )
    return {
        "schema": SCHEMA,
        "item_id": call.item.item_id,
        "repeat": call.repeat,
        "judge": call.judge.name,
        "params": dict(call.judge.params_log),
        "item_sha256": call.item.sha256,
        "source": dict(source),
        "model": redact(completion.model) if completion and completion.model else None,
        "url": completion.url if completion is not None else None,
        "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
        "prompt_template_sha256": prompt_template_sha256(),
        "nonce": nonce,
        "outcome": reading.outcome if reading is not None else "error",
        # the label, or "cannot-parse" (SPEC section 7); null for an error
        "status": (reading.status or CANNOT_PARSE) if reading is not None else None,
        "reason": reading.reason if reading is not None else None,
        "reply": reply,
        "error": None
        if error is None
        else {
            "kind": error.kind,
            "message": redact(error.message),
            "http_status": error.http_status,
        },
        "input_tokens": completion.input_tokens if completion else None,
        "output_tokens": completion.output_tokens if completion else None,
        "latency_s": round(latency, 6),
        "timestamp": format_iso(time.time() * 1000),
        "evalkit_version": __version__,
        "replay": call.judge.origin(call.item.item_id, call.repeat),
    }


_STOP = object()


class _LogWriter:
    """The one writer of the run log: a thread appending queued lines in batches.

    :meth:`put` returns a future that completes once the line is fsynced (or fails with the
    write error), so a worker starts its next call only after its last line is durable: at any
    moment at most one call per worker is not yet in the log.
    """

    def __init__(
        self,
        appender: LineAppender,
        summary: RunSummary,
        bar: Any,
        on_line: Callable[[dict[str, Any], str], None] | None = None,
    ) -> None:
        self._appender = appender
        self._summary = summary
        self._bar = bar
        self._on_line = on_line
        self._queue: queue.Queue[Any] = queue.Queue()
        self.failed: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="runlog-writer", daemon=True)
        self._thread.start()

    def put(self, line: dict[str, Any]) -> Future[None]:
        written: Future[None] = Future()
        self._queue.put((encode_line(line), line, written))
        return written

    def _write(self, lines: list[tuple[str, dict[str, Any], Future[None]]]) -> None:
        # A waiter cancelled by Ctrl-C cancels its future; the line is written all the same (the
        # call was made), but only the futures still waited on are told, and once RUNNING a
        # future can no longer be cancelled under us.
        waited = [written.set_running_or_notify_cancel() for _, _, written in lines]
        if self.failed is None:
            try:
                self._appender.append([text for text, _, _ in lines])
            except BaseException as exc:  # reported by close(); no new call starts
                self.failed = exc
        if self.failed is not None:
            for (_, _, written), told in zip(lines, waited, strict=True):
                if told:
                    written.set_exception(self.failed)
            return
        for (text, line, written), told in zip(lines, waited, strict=True):
            self._summary.add(line)
            if self._on_line is not None:  # the line's sha256: what a record cites it by
                self._on_line(line, hashlib.sha256(text.encode("utf-8")).hexdigest())
            if told:
                written.set_result(None)
        self._bar.update(len(lines))
        self._bar.set_postfix(
            errors=self._summary.outcomes["error"],
            tokens=self._summary.input_tokens + self._summary.output_tokens,
            refresh=False,
        )

    def _loop(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in batch)
            lines = [item for item in batch if item is not _STOP]
            if lines:
                self._write(lines)

    def close(self) -> None:
        """Write what is queued, stop the thread; re-raise a write failure."""
        self._queue.put(_STOP)
        self._thread.join()
        if self.failed is not None:
            raise self.failed


@dataclass
class _Breaker:
    """Stops a run after ``limit`` connection failures or timeouts in a row."""

    limit: int
    run: int = 0
    last: Mapping[str, Any] | None = None
    tripped: str | None = None

    def see(self, line: Mapping[str, Any], judge: JudgeHandle) -> None:
        error = line.get("error")
        if error is None or error.get("kind") not in _DEAD_SERVER_KINDS:
            self.run = 0
            return
        self.run += 1
        if self.run >= self.limit and self.tripped is None:
            where = judge.params_log.get("base_url") or "the SDK's default endpoint"
            self.tripped = (
                f"stopped: {self.run} connection failures or timeouts in a row against {where} "
                f"(--max-consecutive-errors {self.limit}); the last: {error.get('kind')}: "
                f"{error.get('message')}"
            )


async def _execute(
    calls: Sequence[Call],
    concurrency: int,
    writer: _LogWriter,
    source: Mapping[str, Any],
    redact: Redactor,
    budget: int,
    breaker: _Breaker,
) -> None:
    pending = iter(calls)

    async def worker() -> None:
        for call in pending:  # the iterator is shared: each call is taken once
            if writer.failed is not None or breaker.tripped is not None:
                return
            line = await _one(call, source, redact, budget)
            breaker.see(line, call.judge)
            written = writer.put(line)
            try:
                await asyncio.wrap_future(written)  # the next call only once this line is durable
            except Exception:  # the log cannot be written: close() reports it
                return

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(calls))))))


async def _close_judges(judges: Sequence[JudgeHandle]) -> None:
    for judge in {id(j): j for j in judges}.values():
        await judge.aclose()


_T = TypeVar("_T")


class EventLoop:
    """One event loop in a thread of its own, for judges used across many batches.

    An SDK client's connections belong to the loop they were opened on, so a judge that
    answers batch after batch (records judged as they are written) keeps one loop for its
    life; :meth:`run` runs a coroutine on it and waits for its result.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coroutine`` on the loop; its result (or its exception)."""
        return self.submit(coroutine).result()

    def submit(self, coroutine: Coroutine[Any, Any, _T]) -> Future[_T]:
        """Start ``coroutine`` on the loop; the future of its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def call(self, function: Callable[..., Any], *args: Any) -> None:
        """Call ``function(*args)`` on the loop's thread, soon (from any thread)."""
        self._loop.call_soon_threadsafe(function, *args)

    def close(self) -> None:
        """Stop the loop and its thread."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


def check_limits(concurrency: int, max_consecutive_errors: int) -> None:
    """Refuse a concurrency or a consecutive-failure limit below 1."""
    if concurrency < 1:
        raise EvalkitError(f"concurrency must be >= 1, got {concurrency}")
    if max_consecutive_errors < 1:
        raise EvalkitError(f"max_consecutive_errors must be >= 1, got {max_consecutive_errors}")


def run_calls(
    calls: Sequence[Call],
    *,
    source: ItemSource,
    appender: LineAppender,
    summary: RunSummary,
    concurrency: int = 4,
    redact: Redactor | None = None,
    budget: int = DEFAULT_INPUT_BUDGET,
    progress: bool = True,
    max_consecutive_errors: int = DEFAULT_MAX_CONSECUTIVE_ERRORS,
    loop: EventLoop | None = None,
    on_line: Callable[[dict[str, Any], str], None] | None = None,
) -> RunSummary:
    """Make ``calls`` with at most ``concurrency`` in flight, appending each line to the log.

    ``summary`` (with ``total``/``skipped`` set by the caller) is filled in and returned. Raises
    the log's ``OSError`` when the log cannot be written (lines already written stay).
    ``loop``: run on this loop and leave the judges open (the caller closes them); else the
    run has a loop of its own and closes the judges at its end. ``on_line(line, sha256)`` is
    told every line once it is durable.
    """
    from tqdm import tqdm

    check_limits(concurrency, max_consecutive_errors)
    started = time.perf_counter()
    bar = tqdm(
        total=len(calls), unit="call", file=sys.stderr, disable=not progress, dynamic_ncols=True
    )
    writer = _LogWriter(appender, summary, bar, on_line)
    breaker = _Breaker(max_consecutive_errors)
    work = _execute(
        calls, concurrency, writer, source.describe(), redact or Redactor(), budget, breaker
    )
    try:
        if loop is not None:
            loop.run(work)
        else:
            asyncio.run(_then_close(work, [c.judge for c in calls]))
    finally:
        try:
            writer.close()
        finally:
            bar.close()
            summary.wall_s += time.perf_counter() - started
            summary.stopped = summary.stopped or breaker.tripped
    return summary


async def _then_close(work: Coroutine[Any, Any, None], judges: Sequence[JudgeHandle]) -> None:
    try:
        await work
    finally:
        await _close_judges(judges)
