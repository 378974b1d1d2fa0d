"""Shared test fixtures.

The conformance vectors live outside the repository, in ``../shared`` (CI lays it there too).
Elsewhere a missing ``../shared`` skips the tests that need it, saying why; with ``CI=true`` it
fails the run, because a conformance suite that silently did not run proves nothing.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = Path(os.environ.get("EVALKIT_SHARED", REPO_ROOT.parent / "shared"))
IN_CI = os.environ.get("CI", "").lower() == "true"


# ----------------------------------------------------------------------- loopback only
# No test reaches beyond this machine: every connect() of the test process (the SDKs, Dask's
# clients, the browser driver) is checked by an audit hook, and one to any address but
# loopback is refused before a packet leaves and recorded, and the session fails on it.
OUTSIDE_LOOPBACK: list[str] = []


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # a Unix socket path: local by definition
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a name: connect() would resolve it elsewhere


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect":
        return
    sock, address = args
    if getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(
        address
    ):
        OUTSIDE_LOOPBACK.append(repr(address))
        raise ConnectionRefusedError(f"tests may only connect to loopback, not {address!r}")


sys.addaudithook(_loopback_only)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when any test tried to connect beyond loopback.

    Under pytest-xdist a worker hands its list to the controller (``workeroutput``), which
    fails the whole run: a worker's own exit status would be lost.
    """
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["outside_loopback"] = list(OUTSIDE_LOOPBACK)
        return
    if OUTSIDE_LOOPBACK:
        print(f"\nconnections attempted beyond loopback: {OUTSIDE_LOOPBACK}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """Collect a finished xdist worker's loopback violations (see pytest_sessionfinish)."""
    OUTSIDE_LOOPBACK.extend(getattr(node, "workeroutput", {}).get("outside_loopback", []))


# ------------------------------------------------------------- the heaviest files first
# `--dist loadfile` hands whole files to the workers in collection order, so a long file
# collected late runs alone at the end while the other workers idle (measured: 65 s of a
# 400 s run). The files measured longest (seconds on one worker, `-n 4` on a quiet 2-core
# machine, 2026-12-02: 122 88 87 74 72 71 59 53 51 46 45 38 38 37 36 34 31 30 30) go first;
# every other file keeps its place. A stale list only orders less well: nothing else rests on it.
SLOWEST_FILES = (
    "test_judge_records.py",
    "test_page_text.py",
    "test_judge_bounds.py",
    "test_calibration_runlog.py",
    "test_ledger_fast_path.py",
    "test_judge_processes.py",
    "test_judge_run.py",
    "test_real_ledger_studies.py",
    "test_prevalence_study_coverage.py",
    "test_prevalence_coverage.py",
    "test_studies.py",
    "test_calibration_cli_trust.py",
    "test_fleet_studies.py",
    "test_explorer.py",
    "test_prevalence_study_page.py",
    "test_packaging.py",
    "test_event_index.py",
    "test_judge_clients.py",
    "test_page_injection.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (see above); a stable sort keeps each file together."""
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def require_shared(*parts: str) -> Path:
    """Return ``SHARED_DIR/parts``; fail under CI, skip elsewhere, when it is missing."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        message = f"{path} is missing (the conformance vectors live in ../shared)"
        if IN_CI:
            pytest.fail(message + "; CI=true, so this is a failure, not a skip")
        pytest.skip(message)
    return path


def conformance_cases() -> list[str]:
    """``corpus/case`` of every conformance case (``["missing"]`` without ``../shared``, so a
    parametrized test still runs and ``require_shared`` says why it cannot)."""
    folder = SHARED_DIR / "conformance"
    if not folder.is_dir():
        return ["missing"]
    return [
        f"{p.parent.name}/{p.name}"
        for p in sorted(folder.glob("*/*"))
        if (p / "args.json").exists()
    ]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return require_shared()


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    return require_shared("conformance")


@pytest.fixture
def no_lock_or_registry_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset the variables that would point lock and certificate checks elsewhere, so only
    the repository a test names (a temporary copy) counts; use with ``pytestmark``."""
    monkeypatch.delenv("EVALKIT_PREREG_LOCK", raising=False)
    monkeypatch.delenv("EVALKIT_CALIBRATION_REGISTRY", raising=False)


@pytest.fixture
def kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every attempt to start a notebook; none may happen when a run is refused."""
    import papermill

    calls: list[Any] = []

    def record(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(papermill, "execute_notebook", record)
    return calls
