"""Input files a user named that cannot be read: errors that are both ``EvalkitError`` and OSError.

A missing journal, a directory given where a file belongs or an unreadable file is the user's
to fix (exit 1 on the command line), yet callers that catch ``FileNotFoundError`` or
``IsADirectoryError`` must keep working. Each class here is therefore both an
:class:`~evalkit.errors.EvalkitError` and the matching :class:`OSError` subclass, carries
``errno`` and ``filename`` like the OSError it replaces, and its message names the file.

Other OSErrors (a full disk, an I/O error) are not the user's input and are left as they are.
Standard library only: record validation imports this through ``calibration_status``.
"""

from __future__ import annotations

import os
from typing import Any

from evalkit.errors import EvalkitError

__all__ = [
    "InputFileError",
    "InputIsADirectoryError",
    "InputNotADirectoryError",
    "InputNotFoundError",
    "InputPermissionError",
    "input_file_error",
]


class InputFileError(EvalkitError, OSError):
    """Base of the input-file errors (an ``EvalkitError`` and an ``OSError``).

    ``str()`` is the message, which names the file.
    """

    def __init__(self, message: str, path: Any = None, errno: int | None = None) -> None:
        super().__init__(message)
        # OSError's own __init__ would parse (errno, strerror, filename) from the args; here the
        # first argument is the whole message and the attributes are set explicitly.
        self.errno = errno
        self.filename = None if path is None else os.fsdecode(path)
        self.strerror = message

    def __str__(self) -> str:
        """The message (not OSError's ``[Errno n] ...`` form)."""
        return str(self.args[0]) if self.args else ""


class InputNotFoundError(InputFileError, FileNotFoundError):
    """The named file (or directory) does not exist."""


class InputIsADirectoryError(InputFileError, IsADirectoryError):
    """A directory was named where a file belongs."""


class InputNotADirectoryError(InputFileError, NotADirectoryError):
    """A path component that should be a directory is a file."""


class InputPermissionError(InputFileError, PermissionError):
    """The named file cannot be read or written with the current permissions."""


_BY_OS_CLASS: tuple[tuple[type[OSError], type[InputFileError], str], ...] = (
    (FileNotFoundError, InputNotFoundError, "no such file"),
    (IsADirectoryError, InputIsADirectoryError, "is a directory, not a file"),
    (NotADirectoryError, InputNotADirectoryError, "a part of the path is not a directory"),
    (PermissionError, InputPermissionError, "permission denied"),
)


def input_file_error(exc: OSError, what: str, path: Any, hint: str = "") -> OSError:
    """The ``Input*Error`` for ``exc`` naming ``what`` and ``path``; ``exc`` itself otherwise.

    Use as ``raise input_file_error(exc, "journal", path) from exc``. ``hint`` is appended to
    the message (e.g. which environment variable named the path).
    """
    for os_cls, cls, reason in _BY_OS_CLASS:
        if isinstance(exc, os_cls):
            shown = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else path
            message = f"{what} {str(shown)!r}: {reason}{hint}"
            return cls(message, shown, exc.errno)
    return exc
