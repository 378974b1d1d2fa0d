"""Where evalkit may write on a user's word: the one check every output flag passes, and the write.

Every file an output flag names (``--out`` of ``report``, ``score --all``, ``verify``,
``judge``, ``calibrate``, ``judge run``; a study's folder) passes :func:`check_output` before a
byte is written; :func:`write_output` checks, then writes:

* **No link followed.** A target that is a symbolic link is refused: evalkit never writes
  through a link into a file it did not create. (Appends, :mod:`evalkit.files.append`, open
  with ``O_NOFOLLOW`` and refuse a file whose first line is not the writer's.)
* **No special file.** An existing directory, FIFO, device or socket is refused by name; the
  null device (``--out /dev/null``) alone is written to, straight, as the sink it is.
* **Never here.** A target equal to a file of ``never``, or below a folder of it, is refused
  naming why (compared by resolved path and by inode, so neither a link in a parent nor a hard
  link gets round it). The command line passes the repository's ``gold/``, ``calibrations/``
  and lock and the ledger and journal files of the metrics directory in play
  (:func:`evalkit.cli.common.never_write_here`).
* **Atomic.** Written into a new file beside the target, fsynced and renamed over it: a failed
  write leaves the old file as it was, and a hard link to the old file keeps the old bytes.

Standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from evalkit.files.errors import InputFileError

__all__ = [
    "NoWrite",
    "OutputRefusedError",
    "OutputWriteError",
    "check_output",
    "is_null_device",
    "write_output",
]


class OutputRefusedError(InputFileError):
    """An output path evalkit will not write (a link, a special file, a protected place)."""


class OutputWriteError(OSError):
    """Writing an output failed (a full disk, an I/O error): exit 2, not the user's input.

    The message names the file and says the old file, if any, is as it was.
    """

    def __init__(self, message: str, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, message, os.fspath(path))
        self.message = message

    def __str__(self) -> str:
        """The message (not OSError's ``[Errno n] ...`` form)."""
        return self.message


@dataclass(frozen=True)
class NoWrite:
    """A place no output flag writes: the file ``path`` or, with ``tree``, anything below it.

    ``why`` completes "...: <why>" in the refusal ("the pre-registration lock").
    """

    path: Path
    why: str
    tree: bool = False


def _real(path: Path) -> Path:
    """``path`` with its folders' links resolved (its own name kept: it is refused if a link)."""
    parent = path.parent if str(path.parent) else Path(".")
    return Path(os.path.realpath(parent)) / path.name


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _hit(real: Path, ident: tuple[int, int] | None, place: NoWrite) -> bool:
    where = Path(os.path.realpath(place.path))
    if real == where or (place.tree and where in real.parents):
        return True
    return ident is not None and not place.tree and _identity(where) == ident


def is_null_device(st: os.stat_result) -> bool:
    """Whether ``st`` is the null device's (``os.devnull``): the one special file written to."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and (st.st_dev, st.st_ino) == (null.st_dev, null.st_ino)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a FIFO, device or socket"


def check_output(path: str | os.PathLike[str], what: str, never: Iterable[NoWrite] = ()) -> Path:
    """``path`` as a :class:`~pathlib.Path`, once it is a place evalkit may write (module doc).

    Raises :class:`OutputRefusedError` (an ``EvalkitError``: exit 1) naming ``what``, the path
    and why; nothing is written or created.
    """
    target = Path(path)
    shown = f"{what} {os.fsdecode(target)!r}"
    try:
        st: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputRefusedError(f"{shown}: cannot be checked ({exc})", target, exc.errno) from exc
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise OutputRefusedError(
            f"{shown}: is a symbolic link; evalkit never writes through a link into a file it "
            "did not create (name the file itself); nothing was written",
            target,
            errno.ELOOP,
        )
    if st is not None and is_null_device(st):
        return target  # a sink, not a file: nothing lands anywhere (``--out /dev/null``)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputRefusedError(
            f"{shown}: is {_kind(st.st_mode)}, not a regular file; nothing was written",
            target,
            errno.EINVAL,
        )
    real = _real(target)
    ident = None if st is None else (st.st_dev, st.st_ino)
    for place in never:
        if _hit(real, ident, place):
            inside = "inside " if place.tree else ""
            raise OutputRefusedError(
                f"{shown}: is {inside}{place.why}, which no output flag writes; name another "
                "file; nothing was written",
                target,
                errno.EPERM,
            )
    return target


def write_output(
    path: str | os.PathLike[str],
    data: str | bytes | Callable[[BinaryIO], None],
    what: str,
    never: Iterable[NoWrite] = (),
) -> Path:
    """Check ``path`` (:func:`check_output`), then write ``data`` there atomically.

    ``data``: text (UTF-8), bytes, or a function writing to the open binary file (a parquet
    writer). Missing parent folders are created. On any failure the temporary file is removed
    and the old file, if any, is left as it was; an ``OSError`` becomes an
    :class:`OutputWriteError` naming ``what`` and the path.
    """
    target = check_output(path, what, never)
    try:
        if os.path.lexists(target) and is_null_device(os.stat(target)):
            _discard(data)
        else:
            _replace(target, data)
    except InputFileError:
        raise
    except OSError as exc:
        raise OutputWriteError(
            f"{what} {os.fsdecode(target)!r}: could not be written ({exc.strerror or exc}); "
            "nothing of it was written and the file, if there was one, is as it was",
            target,
            exc,
        ) from exc
    return target


def _discard(data: str | bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` to the null device: a writer function still runs (and may still fail)."""
    with open(os.devnull, "wb") as handle:
        if callable(data):
            data(handle)
        else:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)


def _replace(target: Path, data: str | bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` into a new file beside ``target``, synced, then rename it over ``target``."""
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            if callable(data):
                data(handle)
            else:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        # the old file's permissions, else the usual ones (mkstemp makes it private)
        os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode) if target.exists() else 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
