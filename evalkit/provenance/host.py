"""Where a record was written: the host, only ever as a hash.

SPEC section 2: never a clear hostname. Standard library only.
"""

from __future__ import annotations

import hashlib
import socket
from functools import lru_cache

__all__ = ["hostname_hash"]


@lru_cache(maxsize=1)
def hostname_hash() -> str | None:
    """First 16 hex of sha256(hostname), or None when the host has no name."""
    name = socket.gethostname()
    if not name:
        return None
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
