r"""sha256, the one way evalkit hashes content: bytes, a regular file, a listing of files.

Every content claim (a gold set, a lock entry, a certificate, a study input, a rubric text)
is a sha256 computed here, so that anyone can recompute it offline with the recipes below:

- bytes: ``hashlib.sha256(data).hexdigest()``;
- a file: the same over its bytes, read in chunks; only a regular file is read (a FIFO, a
  device or a directory is refused by name, never waited on);
- a listing (a folder's files): the sha256 of the UTF-8 lines ``"<name>\t<sha256>\n"``, sorted
  by name (a gold set's ``set_sha256``, a study input folder's digest).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from evalkit.files.input import open_regular

__all__ = ["file_digest", "listing_sha256", "sha256_file", "sha256_hex"]

_CHUNK = 1 << 20


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def file_digest(path: str | os.PathLike[str], what: str = "file") -> tuple[str, int]:
    """The hex sha256 of a regular file and its size in bytes, streamed.

    ``what`` names the file in the error for anything but a regular file.
    """
    h, size = hashlib.sha256(), 0
    fd = open_regular(path, what)
    try:
        while chunk := os.read(fd, _CHUNK):
            h.update(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return h.hexdigest(), size


def sha256_file(path: str | os.PathLike[str], what: str = "file") -> str:
    """The hex sha256 of a regular file (:func:`file_digest` without the size)."""
    return file_digest(path, what)[0]


def listing_sha256(files: Mapping[str, str]) -> str:
    r"""The sha256 of ``{name: sha256}``: over ``"<name>\t<sha256>\n"`` lines sorted by name."""
    lines = "".join(f"{name}\t{files[name]}\n" for name in sorted(files))
    return sha256_hex(lines.encode("utf-8"))
