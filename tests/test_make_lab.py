"""``make lab`` starts JupyterLab as whoever runs it (root in a container too), on 127.0.0.1 only.

The real target runs (``make -o .venv/.installed lab``: the environment these tests run in is
already installed, so the install step is not redone) on a free port, with Jupyter's state in a
temporary folder. The test waits for the server to answer on loopback, reads the kernel's
socket table to see what address it listens on, and stops the process group it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO_ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp{,6} write them) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if int(hex_port, 16) == port and state == "0A":  # 0A: LISTEN
                found.add(address)
    return found


def _group_commands(group: int) -> list[list[str]]:
    """The command lines of the processes in process group ``group`` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group:  # after "pid (comm)": state, ppid, pgrp
                raw = (stat.parent / "cmdline").read_bytes()
                out.append([a.decode() for a in raw.split(b"\0") if a])
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
    return out


@pytest.mark.slow
def test_make_lab_serves_on_loopback_as_any_user(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    args = "--no-browser --ServerApp.port_retries=0 --ServerApp.token=evalkit-test"
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        ["make", "-s", "-o", ".venv/.installed", "lab", f"LAB_PORT={port}", f"LAB_ARGS={args}"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stopped as one below
    )
    try:
        deadline = time.monotonic() + 180
        answer = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2) as got:
                    answer = json.loads(got.read())
                break
            except OSError:
                time.sleep(0.5)
        output = (tmp_path / "lab.log").read_text()
        assert answer is not None, f"JupyterLab did not answer (exit {proc.poll()}):\n{output}"
        assert "version" in answer
        # bound to 127.0.0.1 alone: not 0.0.0.0, not ::, not ::1
        assert _listening(port) == {"0100007F"}, _listening(port)
        # the server make started passes --allow-root exactly when the user is root
        lab = [c for c in _group_commands(proc.pid) if "--ServerApp.ip=127.0.0.1" in c]
        assert lab, _group_commands(proc.pid)
        assert all(("--allow-root" in c) == (os.geteuid() == 0) for c in lab), lab
    finally:
        # a make that already ended (its group gone) must not hide the assertion that failed
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()
