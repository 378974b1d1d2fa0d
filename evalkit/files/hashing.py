r"""sha256, the one way evalkit hashes content: bytes, a regular file, a listing of files.

Every content claim (a gold set, a lock entry, a certificate, a study input, a rubric text)
is a sha256 computed here, so that anyone can recompute it offline with the recipes below:

- bytes: ``hashlib.sha256(data).hexdigest()``;
- a file: the same over its bytes, read in chunks; only a regular file is read (a FIFO, a
  device or a directory is refused by name, never waited on);
- a listing (a folder's files): the sha256 of the UTF-8 lines ``"<name>\t<sha256>\n"``, sorted
  by name (a gold set's ``set_sha256``, a study input folder's digest);
- a tree (:func:`tree_digest`, a study's data folder): the listing of every file below it, by
  what is read: links are followed (to a file or a folder), each one recorded with its text and
  its target, so a target that changes changes the digest; a FIFO, a device, a dangling link or
  a loop is named by its error, never read or followed again.
"""

from __future__ import annotations

import errno
import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.input import escape_surrogates, open_regular

__all__ = [
    "HashAhead",
    "Link",
    "TreeDigest",
    "file_digest",
    "hash_range",
    "link_of",
    "listing_name",
    "listing_sha256",
    "sha256_file",
    "sha256_hex",
    "tree_digest",
]

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


class HashAhead:
    """The sha256 of a file's first ``end`` bytes, computed in a thread from when it is made.

    For a rerun that must check a large prefix before it goes on (a journal cursor's): the
    hash runs on another core while the ledger is read, since ``os.pread`` and ``hashlib``
    release the GIL. :meth:`result` hands the hash over only for the file as it was hashed
    (the same device, inode, size and modification time), else None and the caller hashes
    the file itself: a file written meanwhile is never vouched for by an older reading.
    """

    def __init__(self, path: str | os.PathLike[str], end: int) -> None:
        self.path, self.end = os.fspath(path), end
        self._done: tuple[tuple[int, ...], Any] | None = None
        self._thread = threading.Thread(target=self._run, name="evalkit-hash-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            fd = open_regular(self.path, "file")
        except OSError:
            return  # the caller's own reading names what is wrong with it
        try:
            before = os.fstat(fd)
            if before.st_size < self.end:
                return
            h = hash_range(fd, hashlib.sha256(), 0, self.end)
            self._done = (_identity(before), h)
        except OSError:
            return
        finally:
            os.close(fd)

    def result(self, now: os.stat_result) -> Any | None:
        """A copy of the hash object, if the file ``now`` describes is the one hashed; else None.

        Waits for the thread. ``now``: ``os.fstat`` of the caller's open file (or ``os.stat``).
        """
        self._thread.join()
        if self._done is None or self._done[0] != _identity(now):
            return None
        return self._done[1].copy()


def hash_range(fd: int, h: Any, start: int, stop: int) -> Any:
    """Feed bytes ``start``..``stop`` of the open file ``fd`` to the hash ``h``; return ``h``.

    Read a block at a time with ``pread``; ``OSError`` (EIO) when the file ends before ``stop``.
    """
    at = start
    while at < stop:
        chunk = os.pread(fd, min(_RANGE_BLOCK, stop - at), at)
        if not chunk:
            raise OSError(errno.EIO, "the file shrank while it was read")
        h.update(chunk)
        at += len(chunk)
    return h


_RANGE_BLOCK = 8 << 20


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def listing_sha256(files: Mapping[str, str]) -> str:
    r"""The sha256 of ``{name: sha256}``: over ``"<name>\t<sha256>\n"`` lines sorted by name."""
    lines = "".join(f"{name}\t{files[name]}\n" for name in sorted(files))
    return sha256_hex(lines.encode("utf-8"))


@dataclass(frozen=True)
class Link:
    """A symbolic link met on the way to what was read: where it is, its text, its target."""

    path: str
    text: str
    target: str

    def to_json(self) -> dict[str, str]:
        """``{path, link, target}``."""
        return {"path": self.path, "link": self.text, "target": self.target}


def link_of(path: str, shown: str | None = None) -> Link | None:
    """The :class:`Link` at ``path`` (``shown``: how to name it), or None when it is no link."""
    if not os.path.islink(path):
        return None
    return Link(
        escape_surrogates(shown if shown is not None else path),
        escape_surrogates(os.readlink(path)),
        escape_surrogates(os.path.realpath(path)),
    )


@dataclass(frozen=True)
class TreeDigest:
    """Every file below a folder, by content (:func:`tree_digest`).

    ``sha256`` over the listing of ``files`` of them (``bytes`` in all), the ``links`` followed
    on the way; ``error`` (and no ``sha256``) when there were too many.
    """

    sha256: str | None
    files: int = 0
    bytes: int = 0
    links: tuple[Link, ...] = ()
    error: str | None = None


def listing_name(rel: str) -> str:
    """``rel`` as a listing name: a tab or a newline in a name must not forge a line."""
    text = escape_surrogates(rel)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _tree(root: str) -> Iterator[tuple[str, str, str | None]]:
    """(relative path, full path, why it is not read) of everything below ``root``.

    Links to folders are followed, except into a folder already on the way down (a loop).
    """
    stack: list[tuple[str, str, frozenset[str]]] = [(root, "", frozenset({os.path.realpath(root)}))]
    while stack:
        here, prefix, above = stack.pop()
        try:
            names = sorted(os.listdir(here))
        except OSError as exc:
            yield prefix or ".", here, f"unreadable folder ({exc.strerror or exc})"
            continue
        for name in reversed(names):
            full = os.path.join(here, name)
            rel = f"{prefix}{name}"
            if os.path.isdir(full):
                real = os.path.realpath(full)
                if real in above:
                    yield rel, full, "a link back into a folder above it (a loop)"
                else:
                    stack.append((full, rel + "/", above | {real}))
                    if os.path.islink(full):
                        yield rel, full, None  # the link itself, recorded; its files follow
            else:
                yield rel, full, None


def tree_digest(root: str, what: str = "input", *, max_files: int = 100_000) -> TreeDigest:
    """The :class:`TreeDigest` of the folder ``root`` (module docstring: the recipe).

    A file that cannot be read (a FIFO, a device, a dangling link) is listed as
    ``unreadable:<sha256 of the reason>``; more than ``max_files`` files is an ``error``.
    """
    digests: dict[str, str] = {}
    links: list[Link] = []
    total = 0
    for rel, full, problem in _tree(root):
        link = link_of(full, rel)
        if link is not None:
            links.append(link)
        if problem is not None:
            digests[listing_name(rel)] = "unreadable:" + sha256_hex(problem.encode("utf-8"))
            continue
        if os.path.isdir(full):
            continue  # a followed link to a folder: its files are listed under it
        try:
            digests[listing_name(rel)], size = file_digest(full, what)
            total += size
        except (EvalkitError, OSError) as exc:  # a FIFO, a device: named, never read
            reason = str(exc).encode("utf-8", "replace")
            digests[listing_name(rel)] = "unreadable:" + sha256_hex(reason)
        if len(digests) > max_files:
            return TreeDigest(None, error=f"more than {max_files} files")
    links.sort(key=lambda item: item.path)
    return TreeDigest(listing_sha256(digests), len(digests), total, tuple(links))
