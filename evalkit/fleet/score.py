"""A fleet of metrics directories: score every ledger, one task per directory, on Dask.

:func:`score_fleet` runs :func:`evalkit.score_ledger` once per metrics directory and stacks the
tables with a ``metrics_dir`` column. ``client=None`` scores serially in this process (no Dask
needed); a ``dask.distributed.Client`` (or a scheduler address) runs one task per directory on
its workers: a :class:`~dask.distributed.LocalCluster` on a laptop, any scheduler on a cluster.
The task is the same in both cases, so serial and distributed results are identical.

What travels back from a worker is one Arrow IPC stream per directory (dictionary-encoded
columns, zstd-compressed buffers), never a pickled frame of Python objects: a 500-session
ledger's table is ~40 KB on the wire against ~900 KB as a pickled object-dtype DataFrame.
The client decodes it into exactly the frame ``score_ledger`` returns (object columns, ``None``
for a missing score, ints staying ints).

A directory that fails (missing, unreadable, no session to score, a worker lost while scoring
it) never stops the others: it is listed with its reason in :func:`fleet_summary`, and a
:class:`FleetFailureWarning` says how many failed. :func:`resolve_fleet` turns what a user
names (a list of paths, a glob, a file of paths) into the list of directories; the CLI uses it,
and :func:`run_fleet` to run :func:`evalkit.fleet.tasks.journal_directory` per directory for
``score --all --fleet --journal-each``. The tasks themselves are in :mod:`evalkit.fleet.tasks`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalkit.errors import EvalkitError
from evalkit.extras import MissingExtraError
from evalkit.fleet.paths import resolve_fleet

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.fleet.tasks import Scored
    from evalkit.rubrics import Rubric

__all__ = [
    "FLEET_EXTRA",
    "LOCAL_WORKER_CONFIG",
    "SCHEDULER_TRUST",
    "DirectoryOutcome",
    "FleetFailure",
    "FleetFailureWarning",
    "FleetSummary",
    "MissingExtraError",
    "fleet_client",
    "fleet_summary",
    "resolve_fleet",
    "run_fleet",
    "score_fleet",
]

#: What to install for the distributed path.
FLEET_EXTRA = "pip install 'evalkit[fleet]'"
#: The column :func:`score_fleet` adds to ``score_ledger``'s.
METRICS_DIR_COLUMN = "metrics_dir"
#: Dask settings of the local clusters :func:`fleet_client` starts. Scoring is pure-Python,
#: allocation-heavy work that holds the GIL: Dask's statistical profiler (a stack sample every
#: 10 ms), the 64 KiB glibc trim threshold its nannies set (memory returned to the OS at every
#: free) and the event loop's 20 ms tick and 100 ms memory poll (each wakes a thread that takes
#: the GIL from the task) made a task about a quarter slower than the same call in a plain
#: process (measured on the bench's 40 ledgers). The memory limit is still enforced, once a
#: second. A cluster you bring keeps its own configuration. (Dask's nannies also write their
#: spawn environment into the process that starts them: after a default cluster in the same
#: process, its workers, and so these, inherit the 64 KiB threshold.)
LOCAL_WORKER_CONFIG: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,  # None: not set
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


class FleetFailureWarning(UserWarning):
    """Some directories of a fleet failed; :func:`fleet_summary` lists them with reasons."""


FailureKind = Literal["input", "io", "internal", "lost"]


@dataclass(frozen=True)
class FleetFailure:
    """Why one directory gave no result.

    ``kind``: ``input`` (an :class:`~evalkit.errors.EvalkitError`: missing directory, no
    session, a bad file the message names), ``io`` (an ``OSError`` reading it), ``internal``
    (any other exception: a bug to report) or ``lost`` (the task never returned: its worker
    died or the cluster went away).
    """

    metrics_dir: str
    kind: FailureKind
    reason: str

    def __str__(self) -> str:
        """``<metrics_dir>: <reason>``."""
        return f"{self.metrics_dir}: {self.reason}"


@dataclass(frozen=True)
class DirectoryOutcome:
    """What one directory's task gave, or the :class:`FleetFailure` when it gave nothing.

    ``sessions`` and ``rows`` scored; ``skipped``: the session ids not scored (only
    whitespace) and ``notes`` where they are (``file:line: session_id: ...``);
    ``payload_bytes``: the size of the Arrow stream sent back; ``diagnostics``: the first
    lines or files the ledger reading skipped or doubted, of ``n_diagnostics``.
    """

    metrics_dir: str
    index: int
    sessions: int = 0
    rows: int = 0
    skipped: tuple[str, ...] = ()
    payload_bytes: int = 0
    failure: FleetFailure | None = None
    notes: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()
    n_diagnostics: int = 0

    @property
    def ok(self) -> bool:
        """Whether the directory was scored (no failure)."""
        return self.failure is None


@dataclass(frozen=True)
class FleetSummary:
    """Every directory's outcome, in fleet order; kept in ``frame.attrs["fleet"]``."""

    rubric_version: str
    outcomes: tuple[DirectoryOutcome, ...]

    @property
    def failures(self) -> tuple[FleetFailure, ...]:
        """The failures, in fleet order."""
        return tuple(o.failure for o in self.outcomes if o.failure is not None)

    @property
    def scored(self) -> tuple[str, ...]:
        """The directories scored, in fleet order."""
        return tuple(o.metrics_dir for o in self.outcomes if o.ok)

    @property
    def sessions(self) -> int:
        """Sessions scored, over the fleet."""
        return sum(o.sessions for o in self.outcomes)

    @property
    def skipped(self) -> dict[str, tuple[str, ...]]:
        """Session ids ``score_ledger`` refused (only whitespace), per directory that had any."""
        return {o.metrics_dir: o.skipped for o in self.outcomes if o.skipped}

    def text(self) -> str:
        """A few lines for a person: how many directories scored, and every failure."""
        n, failed = len(self.outcomes), self.failures
        head = (
            f"{self.rubric_version}: scored {n - len(failed)} of {n} metrics "
            f"director{'y' if n == 1 else 'ies'} ({self.sessions} sessions)"
        )
        if not failed:
            return head
        lines = [f"{head}; {len(failed)} failed:"]
        lines += [f"  [{f.kind}] {f}" for f in failed]
        return "\n".join(lines)

    def __deepcopy__(self, memo: dict[int, Any]) -> FleetSummary:
        """The summary itself: it is immutable."""
        # immutable: pandas deep-copies attrs on every operation, a copy would only cost time
        return self


# -- Dask, optional --------------------------------------------------------------------------


def _distributed() -> Any:
    """``dask.distributed``, or :class:`MissingExtraError` saying what to install."""
    try:
        import dask.distributed as dd
    except ImportError as exc:
        raise MissingExtraError(
            f"running a fleet on Dask needs the 'fleet' extra: {FLEET_EXTRA} "
            "(without it, score_fleet(..., client=None) scores serially in this process)"
        ) from exc
    return dd


#: What a scheduler address means, said wherever one is taken (``--help``, the study page).
SCHEDULER_TRUST = (
    "a Dask scheduler runs code in the process that connects to it (its client unpickles "
    "what the scheduler sends): name only one you trust as you trust this machine's account"
)


#: The HTTP routes of a local cluster's scheduler and workers: a health check, nothing that
#: shows the tasks or the workers to whoever can reach the port (it is not behind TLS).
_HTTP_HEALTH_ONLY: dict[str, Any] = {
    "distributed.scheduler.http.routes": ["distributed.http.health"],
    "distributed.worker.http.routes": ["distributed.http.health"],
}


def _security() -> Any:
    """Mutual-TLS credentials made for one local cluster (:meth:`Security.temporary`).

    The key never touches the disk: only this process and the workers it spawns hold it, so no
    other local user can connect to the scheduler or its workers and have them run code.
    """
    try:
        from distributed.security import Security

        return Security.temporary()
    except ImportError as exc:  # Security.temporary needs cryptography
        raise MissingExtraError(
            f"a local Dask cluster needs TLS, and TLS needs the 'fleet' extra: {FLEET_EXTRA} "
            f"({exc})"
        ) from exc


@contextlib.contextmanager
def fleet_client(
    scheduler: str | None = None, *, workers: int | None = None, threads_per_worker: int = 1
) -> Iterator[Any]:
    """A ``dask.distributed.Client``, closed on exit.

    Connected to ``scheduler`` (an address such as ``tcp://scheduler:8786``: see
    :data:`SCHEDULER_TRUST`), or to a new local cluster of ``workers`` processes (default: one
    per CPU) on loopback, tuned by :data:`LOCAL_WORKER_CONFIG`. A local cluster speaks mutual
    TLS with credentials made for it (:func:`_security`): only this client and its own workers
    can connect; no dashboard is started, and its HTTP ports (loopback) answer a health check
    only. Raises :class:`MissingExtraError` without
    Dask (or without cryptography, for a local cluster).
    """
    dd = _distributed()
    if scheduler is not None and workers is not None:
        raise EvalkitError("give a scheduler address or a number of local workers, not both")
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or workers < 1
    ):
        raise EvalkitError(f"workers must be a positive int, got {workers!r}")
    if scheduler is not None:
        with dd.Client(scheduler) as client:
            yield client
        return
    import dask

    security = _security()
    with (
        # read when the nannies spawn their workers, and by the scheduler's HTTP server
        dask.config.set({**LOCAL_WORKER_CONFIG, **_HTTP_HEALTH_ONLY}),
        dd.LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=security,
            dashboard_address=None,  # no dashboard...
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # ...and HTTP on loopback
        ) as cluster,
        dd.Client(cluster, security=security) as client,
    ):
        yield client


# -- running one function per directory ------------------------------------------------------


@dataclass(frozen=True)
class _Result:
    """A task's answer: its value, or the failure caught on the worker.

    The failure is text, so an exception that cannot be pickled never costs the result.
    """

    index: int
    metrics_dir: str
    value: Any = None
    failure: FleetFailure | None = None


def _guarded(fn: Callable[[str], Any], index: int, metrics_dir: str) -> _Result:
    try:
        return _Result(index, metrics_dir, value=fn(metrics_dir))
    except EvalkitError as exc:  # the user's to fix: the message names the file
        return _Result(index, metrics_dir, failure=FleetFailure(metrics_dir, "input", str(exc)))
    except OSError as exc:
        return _Result(index, metrics_dir, failure=FleetFailure(metrics_dir, "io", str(exc)))
    except Exception as exc:
        reason = f"internal error {type(exc).__name__}: {exc}"
        return _Result(index, metrics_dir, failure=FleetFailure(metrics_dir, "internal", reason))


def _serial(fn: Callable[[str], Any], dirs: Sequence[str]) -> Iterator[_Result]:
    for i, d in enumerate(dirs):
        yield _guarded(fn, i, d)


def _on_dask(client: Any, fn: Callable[[str], Any], dirs: Sequence[str]) -> Iterator[_Result]:
    """One task per directory, answers in completion order.

    A task that never returns is a ``lost`` failure. Remaining tasks are cancelled if the
    caller stops early.
    """
    import uuid

    dd = _distributed()
    token = uuid.uuid4().hex[:12]
    futures = client.map(
        _guarded,
        [fn] * len(dirs),
        list(range(len(dirs))),
        list(dirs),
        key=[f"evalkit-fleet-{token}-{i}" for i in range(len(dirs))],
        pure=False,
    )
    where = {f.key: i for i, f in enumerate(futures)}
    try:
        for future in dd.as_completed(futures):
            i = where[future.key]
            try:
                result = future.result()
            except Exception as exc:  # KilledWorker, CancelledError, a lost connection
                reason = f"task lost ({type(exc).__name__}: {exc})"
                result = _Result(i, dirs[i], failure=FleetFailure(dirs[i], "lost", reason))
            future.release()  # the worker may drop it now: memory stays bounded
            yield result
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)


def _as_client(client: Any) -> tuple[Any, bool]:
    """A ``Client`` from a client, a cluster or a scheduler address; True when made here.

    A client made here is closed after the run; a cluster given is never closed (its owner
    closes it).
    """
    dd = _distributed()
    if isinstance(client, str):
        return dd.Client(client), True
    if isinstance(client, dd.Client):
        return client, False
    if isinstance(getattr(client, "scheduler_address", None), str):
        # a cluster object (LocalCluster, dask-jobqueue, Kubernetes, gateway): connect to it
        return dd.Client(client), True
    raise EvalkitError(
        "client must be None (serial), a dask.distributed.Client, a cluster (LocalCluster, "
        f"...) or a scheduler address, got {type(client).__name__}"
    )


def run_fleet(
    metrics_dirs: Any,
    fn: Callable[[str], Any],
    *,
    client: Any = None,
    on_result: Callable[[int, str, Any, FleetFailure | None], None] | None = None,
) -> list[tuple[Any, FleetFailure | None]]:
    """``fn(metrics_dir)`` for every directory of ``metrics_dirs``, serially or on Dask.

    ``metrics_dirs`` as :func:`resolve_fleet` takes it. Serially in this process
    (``client=None``) or one Dask task each; returns ``(value, failure)`` per directory, in
    fleet order.

    ``fn`` must be picklable (a module-level function or a ``functools.partial`` of one) and
    return little: its value travels back from the worker. An exception in ``fn`` becomes the
    directory's :class:`FleetFailure` and the others go on. ``on_result(index, metrics_dir,
    value, failure)`` is called as each directory finishes (completion order).
    """
    dirs = resolve_fleet(metrics_dirs)
    out: list[tuple[Any, FleetFailure | None]] = [(None, None)] * len(dirs)
    if client is None:
        results = _serial(fn, dirs)
        owned = None
    else:
        dask_client, made = _as_client(client)
        owned = dask_client if made else None
        results = _on_dask(dask_client, fn, dirs)
    try:
        for r in results:
            out[r.index] = (r.value, r.failure)
            if on_result is not None:
                on_result(r.index, r.metrics_dir, r.value, r.failure)
    finally:
        if owned is not None:
            owned.close()
    return out


# -- scoring ---------------------------------------------------------------------------------


def _progress_bar(progress: Any, total: int, label: str) -> Any:
    if progress is not True:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=f"score_fleet ({label})", unit="dir", file=sys.stderr)


def score_fleet(
    metrics_dirs: Any,
    rubric: str | Rubric = "rubric-v2",
    *,
    client: Any = None,
    progress: bool | Callable[[DirectoryOutcome, int, int], None] = False,
) -> pd.DataFrame:
    """Score every session of every metrics directory: ``score_ledger`` per directory, stacked.

    Returns the ``score_ledger`` columns plus ``metrics_dir`` (as :func:`resolve_fleet` names
    it), directories in fleet order, each directory's rows in ``score_ledger``'s order;
    ``frame.attrs["fleet"]`` is the :class:`FleetSummary` (every directory's outcome, failures
    with their reasons, skipped ids), ``attrs["rubric_version"]`` the rubric.

    ``metrics_dirs``: paths, a glob, a list file or one directory (:func:`resolve_fleet`).
    ``client``: ``None`` scores serially here and needs no Dask; a ``dask.distributed``
    client, cluster or scheduler address runs one task per directory (``evalkit[fleet]``).
    A directory that fails has no rows; the others finish and a :class:`FleetFailureWarning`
    counts the failures. ``progress``: a tqdm bar (True) or ``progress(outcome, done, total)``.
    An unknown rubric raises before any work. Deployments, data locality, memory and the
    trust a scheduler implies: docs/FLEET.md.
    """
    from functools import partial

    from evalkit.extras import require
    from evalkit.fleet.tasks import score_directory
    from evalkit.rubrics import get_rubric

    rub = get_rubric(rubric)  # an unknown rubric fails here, not once per directory
    # tables travel as Arrow streams, also serially: without pyarrow every task would fail
    require(
        "pyarrow", purpose="score_fleet (each directory's table is an Arrow stream)", extra="fleet"
    )
    dirs = resolve_fleet(metrics_dirs)
    collect = _Collector(len(dirs), progress, rub.version)
    task = partial(score_directory, rubric=rub.version if isinstance(rubric, str) else rub)
    try:
        run_fleet(dirs, task, client=client, on_result=collect)
    finally:
        collect.close()
    summary = FleetSummary(rub.version, tuple(o for o in collect.outcomes if o is not None))
    return _assemble(dirs, collect.payloads, summary)


class _Collector:
    """Keeps each directory's outcome and payload as it arrives, and reports progress."""

    def __init__(self, total: int, progress: Any, rubric_version: str) -> None:
        self.outcomes: list[DirectoryOutcome | None] = [None] * total
        self.payloads: list[bytes | None] = [None] * total
        self.done = 0
        self.progress = progress
        self.bar = _progress_bar(progress, total, rubric_version)

    def __call__(self, i: int, d: str, value: Scored | None, failure: FleetFailure | None) -> None:
        """Keep what directory ``d`` (fleet index ``i``) gave, and report progress."""
        self.done += 1
        if value is None:
            outcome = DirectoryOutcome(d, i, failure=failure)
        else:
            outcome = DirectoryOutcome(
                d,
                i,
                value.sessions,
                value.rows,
                value.skipped,
                len(value.payload),
                notes=value.notes,
                diagnostics=value.diagnostics,
                n_diagnostics=value.n_diagnostics,
            )
            self.payloads[i] = value.payload
        self.outcomes[i] = outcome
        if self.bar is not None:
            self.bar.update(1)
            failed = sum(1 for o in self.outcomes if o is not None and not o.ok)
            self.bar.set_postfix_str(f"{failed} failed" if failed else "")
        elif callable(self.progress):
            self.progress(outcome, self.done, len(self.outcomes))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _assemble(dirs: Sequence[str], payloads: Sequence[Any], summary: FleetSummary) -> pd.DataFrame:
    from evalkit.fleet.arrow import decode_ledger_tables

    frame = decode_ledger_tables(
        [(d, p) for d, p in zip(dirs, payloads, strict=True) if p is not None],
        METRICS_DIR_COLUMN,
    )
    frame.attrs["rubric_version"] = summary.rubric_version
    frame.attrs["fleet"] = summary
    failed = summary.failures
    if failed:
        shown = "; ".join(str(f) for f in failed[:3])
        more = f"; and {len(failed) - 3} more" if len(failed) > 3 else ""
        warnings.warn(
            FleetFailureWarning(
                f"score_fleet: {len(failed)} of {len(dirs)} metrics directories failed "
                f"(fleet_summary(frame) lists them): {shown}{more}"
            ),
            stacklevel=3,
        )
    return frame


def fleet_summary(frame: pd.DataFrame) -> FleetSummary:
    """The :class:`FleetSummary` of a :func:`score_fleet` frame (kept in its ``attrs``)."""
    summary = frame.attrs.get("fleet")
    if not isinstance(summary, FleetSummary):
        raise EvalkitError("this frame carries no fleet summary (it did not come from score_fleet)")
    return summary
