"""Running a reader on hostile input in a child process: a hang is a timeout, not a stuck suite.

A reader fed a FIFO or ``/dev/zero`` could block forever or read until memory runs out; run in
the parent, that would hang the test run (or the machine). :func:`in_child` runs the call in a
forked child under an address-space limit and a timeout, and reports what happened.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Address space the child may map beyond what it inherits: an unbounded read fails fast
#: instead of eating the host.
CHILD_MEMORY = 1 << 30


@dataclass(frozen=True)
class Outcome:
    """``kind`` is ``returned``, ``raised`` (``error`` = exception type, ``message``, whether
    it is an ``EvalkitError``), ``timeout`` or ``died`` (the child exited without a word)."""

    kind: str
    value: Any = None
    error: str = ""
    message: str = ""
    evalkit_error: bool = False
    traceback: str = ""


def _mapped_now() -> int:
    """Bytes of address space this process maps now (Linux: /proc/self/statm), else 0."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * resource.getpagesize()
    except OSError:
        return 0


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    # relative to what the fork inherits: a parent that used pyarrow maps ~1 GiB of reserved
    # allocator space already, and an absolute cap would fail the child's first import
    limit = _mapped_now() + CHILD_MEMORY
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from evalkit.errors import EvalkitError

    try:
        value = fn(*args)
        conn.send(Outcome("returned", value=value))
    except BaseException as exc:  # everything, to report it
        conn.send(
            Outcome(
                "raised",
                error=type(exc).__name__,
                message=str(exc),
                evalkit_error=isinstance(exc, EvalkitError),
                traceback=traceback.format_exc(),
            )
        )
    finally:
        conn.close()


def in_child(fn: Callable[..., Any], *args: Any, timeout: float = 30.0) -> Outcome:
    """Run ``fn(*args)`` in a forked child with a memory limit; its outcome (picklable value)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args))
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                return parent.recv()
            except EOFError:
                return Outcome("died")
        return Outcome("timeout")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()


def main_in_child(argv: list[str], timeout: float = 30.0, stdin: bytes | None = None) -> Outcome:
    """``evalkit.cli.main.main(argv)`` in a child; ``value`` is ``(exit code, stdout, stderr)``."""
    return in_child(_run_main, argv, stdin, timeout=timeout)


def _run_main(argv: list[str], stdin: bytes | None) -> tuple[int, str, str]:
    import contextlib
    import io
    import sys

    from evalkit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def fifo(path: os.PathLike[str] | str) -> str:
    """Make a named pipe at ``path`` (nobody ever writes to it) and return its path."""
    os.mkfifo(path)
    return os.fspath(path)
