"""The test process can connect to loopback only (the guard in conftest.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OUTSIDE_LOOPBACK


def test_a_connection_beyond_loopback_is_refused_before_it_leaves() -> None:
    before = list(OUTSIDE_LOOPBACK)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        with pytest.raises(ConnectionRefusedError, match="only connect to loopback"):
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): never routed
    assert OUTSIDE_LOOPBACK[len(before) :] == ["('192.0.2.1', 9)"]
    OUTSIDE_LOOPBACK[:] = before  # this attempt was the test's own: not a failure of the run


def test_loopback_connections_pass_the_guard() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.slow
def test_a_swallowed_attempt_fails_the_run_serial_and_under_xdist(
    tmp_path: Path, workers: list[str]
) -> None:
    # The guard's last line of defence: a test that catches the refusal still fails the run,
    # also when the attempt happens in an xdist worker (whose own exit status is not the run's).
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_swallow.py").write_text(
        "import socket\n\n"
        "def test_swallowed():\n"
        "    try:\n"
        "        socket.create_connection(('192.0.2.1', 9), timeout=1)\n"
        "    except OSError:\n"
        "        pass\n\n"
        "def test_other():\n"
        "    pass\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "2 passed" in run.stdout, run.stdout
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    assert "192.0.2.1" in run.stdout + run.stderr
