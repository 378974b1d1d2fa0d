"""Naming a fleet: the metrics directories a list, a glob or a file of paths names.

Standard library only, below everything that reads a fleet (:mod:`evalkit.fleet.score` scores one;
:mod:`evalkit.studies.lock` hashes one into a study's results).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence

from evalkit.errors import EvalkitError
from evalkit.files.input import read_text

__all__ = ["resolve_fleet"]

_GLOB_MAGIC = frozenset("*?[")


def _is_glob(text: str) -> bool:
    return any(ch in _GLOB_MAGIC for ch in text)


def _from_list_file(path: str) -> list[str]:
    """Directories named one per line in the file at ``path``.

    Blank lines and ``#`` comments are skipped; relative paths are taken from the file's own
    folder (so the file can travel with the directories).
    """
    base = os.path.dirname(os.path.abspath(path))
    out = []
    for number, line in enumerate(read_text(path, "fleet list").splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if "\x00" in entry:
            raise EvalkitError(f"fleet list {path!r}: line {number}: a NUL byte in the path")
        out.append(entry if os.path.isabs(entry) else os.path.join(base, entry))
    if not out:
        raise EvalkitError(f"fleet list {path!r}: names no directory (one path per line)")
    return out


def _from_glob(pattern: str) -> list[str]:
    matches = sorted(glob.glob(pattern, recursive=True))
    dirs = [m for m in matches if os.path.isdir(m)]
    if not dirs:
        others = f" ({len(matches)} match(es), none a directory)" if matches else ""
        raise EvalkitError(f"fleet glob {pattern!r} matched no directory{others}")
    return dirs


def _identity(path: str) -> tuple[object, ...]:
    """What makes two paths one directory: the same device and inode.

    So a link, a bind mount or a second spelling is the same directory; a path that is not
    there (it fails later, named) is compared by its real path.
    """
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def _check_unique(dirs: Sequence[str]) -> None:
    seen: dict[tuple[object, ...], int] = {}
    for i, d in enumerate(dirs):
        first = seen.setdefault(_identity(d), i)
        if first != i:
            same = (
                "twice"
                if os.path.normpath(dirs[first]) == os.path.normpath(d)
                else (
                    f"twice: {dirs[first]!r} (entry {first + 1}) is the same directory "
                    f"({os.path.realpath(d)!r})"
                )
            )
            raise EvalkitError(
                f"the fleet names {d!r} {same} (entries {first + 1} and {i + 1}): each "
                "metrics directory may appear once, or its sessions would be counted twice"
            )


def resolve_fleet(spec: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """The metrics directories ``spec`` names, in order, each once.

    ``spec`` is a list (any iterable) of paths; or a string with glob characters (``*?[``;
    ``**`` recurses), of which the matching directories count, sorted; or the path of a
    regular file listing one directory per line (blank lines and ``#`` comments skipped,
    relative paths from the file's folder); or the path of one directory. Paths are returned
    as given (not resolved), so the ``metrics_dir`` column reads as the user wrote them.
    Raises :class:`~evalkit.errors.EvalkitError` for an empty fleet, a duplicate (one directory
    under two names too: a link to it, another spelling, a bind mount; compared by device and
    inode), a glob that matches no directory or a path that is neither a file nor a directory.
    """
    if isinstance(spec, str | os.PathLike):
        text = os.fspath(spec)
        if not isinstance(text, str):
            raise EvalkitError("metrics_dirs: give paths as str or os.PathLike of str, not bytes")
        if os.path.isdir(text):
            dirs = [text]
        elif os.path.exists(text) or os.path.islink(text):
            dirs = _from_list_file(text)  # read_text refuses FIFOs, devices, dangling links
        elif isinstance(spec, str) and _is_glob(text):
            dirs = _from_glob(text)
        else:
            raise EvalkitError(
                f"metrics_dirs {text!r}: no such file or directory, and not a glob pattern "
                "(give a list of paths, a glob such as 'repos/*/metrics', or a file of paths)"
            )
    elif isinstance(spec, bytes | dict) or not isinstance(spec, Iterable):
        raise EvalkitError(
            "metrics_dirs must be a list of paths, a glob string or a file of paths, "
            f"got {type(spec).__name__}"
        )
    else:
        dirs = []
        for i, item in enumerate(spec):
            if not isinstance(item, str | os.PathLike) or not isinstance(os.fspath(item), str):
                raise EvalkitError(
                    f"metrics_dirs[{i}]: expected a path (str or os.PathLike), "
                    f"got {type(item).__name__}"
                )
            dirs.append(os.fspath(item))
        if not dirs:
            raise EvalkitError("metrics_dirs is empty: name at least one metrics directory")
    _check_unique(dirs)
    return dirs
