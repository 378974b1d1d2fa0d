"""The test process can connect to loopback only (the guard in conftest.py)."""

from __future__ import annotations

import socket

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
