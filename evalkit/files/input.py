r"""Reading files a user names, safely: regular files only, bounded, never a hang or a traceback.

Every reader of untrusted input (ledger sources, journals, label files, parameter files, record
files, certificates, the pre-registration lock) goes through this module, so one set of rules
holds everywhere:

* **Regular files only.** A FIFO, a character or block device, a socket or a directory is
  refused with an :class:`~evalkit.files.errors.InputFileError` that names the path and what it
  is. The file is opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor,
  so neither opening a FIFO nor a race between a check and the open can block. A symlink loop
  or a dangling symlink is named as such (it is unreadable, never "absent").
* **Bounded.** At most ``max_bytes`` of a file are read (default
  :data:`DEFAULT_MAX_FILE_BYTES`, 1 GiB); a larger file is refused, naming the cap, before
  more than the cap is held in memory. A single line longer than ``max_line_bytes`` (default
  :data:`DEFAULT_MAX_LINE_BYTES`, 64 MiB) is reported by :func:`split_lines` instead of
  being parsed. Both caps are overridable per call and, for a whole process, by the
  environment variables :data:`MAX_FILE_BYTES_ENV` and :data:`MAX_LINE_BYTES_ENV` (sizes are
  operational limits, never part of what a record or a calibration claims).
* **Text and JSON.** :func:`read_text` decodes UTF-8 strictly and names the line and byte of
  the first invalid sequence; :func:`parse_json` turns deep nesting, bad constants and other
  decoder failures into a :class:`JsonInputError` with a reason.
* **Nesting.** :func:`parse_json` takes an optional ``max_depth``: a document of evalkit's own
  shapes (a record is four levels deep) that nests deeper is refused as a reason before any
  recursive code (``repr``, ``copy.deepcopy``, ``json.dumps``) can meet it.
* **Streams.** :func:`read_stream` reads standard input (``-``) under the same byte cap.
* **Output.** :func:`dumps` writes JSON as UTF-8 with lone surrogates (legal in a JavaScript
  string, not encodable as UTF-8) escaped as ``\udXXX``, so writing never crashes and a
  JavaScript ``JSON.parse`` reads the same string back. :func:`clip` shortens untrusted text
  quoted in a message.

Standard library only (and orjson, the ``[fast]`` extra, when it is installed): the scoring core
and record validation import this.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.errors import InputFileError, input_file_error

#: orjson when the ``[fast]`` extra is installed, else None: the one place evalkit asks. Each
#: user says where its output is the same as ``json``'s and falls back to ``json`` elsewhere.
fast_json: Any
try:
    import orjson as fast_json
except ImportError:  # exercised by a test in a child process without orjson
    fast_json = None

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_FILE_BYTES_ENV",
    "MAX_LINE_BYTES_ENV",
    "InputNotRegularError",
    "InputTooLargeError",
    "JsonInputError",
    "RawLine",
    "canonical_bytes",
    "clip",
    "compact_bytes",
    "decode_text",
    "dumps",
    "dumps_bytes",
    "escape_surrogates",
    "fast_json",
    "input_too_large",
    "max_file_bytes",
    "max_line_bytes",
    "open_regular",
    "orjson_bytes",
    "other_float_form",
    "own_cap",
    "parse_json",
    "parse_json_line",
    "read_bytes",
    "read_stream",
    "read_text",
    "split_lines",
    "unreadable_reason",
]

#: Default cap on the bytes read from one input file (1 GiB).
DEFAULT_MAX_FILE_BYTES = 1 << 30
#: Default cap on one line of a line-oriented input file (64 MiB).
DEFAULT_MAX_LINE_BYTES = 64 << 20
#: Environment variable overriding :data:`DEFAULT_MAX_FILE_BYTES` for a process (bytes).
MAX_FILE_BYTES_ENV = "EVALKIT_MAX_FILE_BYTES"
#: Environment variable overriding :data:`DEFAULT_MAX_LINE_BYTES` for a process (bytes).
MAX_LINE_BYTES_ENV = "EVALKIT_MAX_LINE_BYTES"

_READ_CHUNK = 1 << 20


class InputNotRegularError(InputFileError):
    """The path names a FIFO, device, socket or directory where a regular file belongs."""


class InputTooLargeError(InputFileError):
    """The file is larger than the cap this reader may hold in memory."""


class JsonInputError(EvalkitError):
    """A JSON text that cannot be read (malformed, nested too deeply, a bad constant).

    ``line`` is the 1-based line of the text where decoding failed, when the decoder knows it.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def _cap_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise EvalkitError(f"${name} must be a positive number of bytes, got {raw!r}") from None
    if value < 1:
        raise EvalkitError(f"${name} must be a positive number of bytes, got {raw!r}")
    return value


def max_file_bytes(override: int | None = None) -> int:
    """The file cap in effect: ``override``, else ``$EVALKIT_MAX_FILE_BYTES``, else 1 GiB."""
    return (
        override
        if override is not None
        else _cap_from_env(MAX_FILE_BYTES_ENV, DEFAULT_MAX_FILE_BYTES)
    )


def own_cap(limit: int) -> int:
    """A reader's own byte cap (a lock, a parameters file), tightened by the file cap in effect.

    Those readers cap what they read below the general cap; a user who lowers
    ``$EVALKIT_MAX_FILE_BYTES`` lowers theirs too.
    """
    return min(limit, max_file_bytes())


def max_line_bytes(override: int | None = None) -> int:
    """The line cap in effect: ``override``, else ``$EVALKIT_MAX_LINE_BYTES``, else 64 MiB."""
    return (
        override
        if override is not None
        else _cap_from_env(MAX_LINE_BYTES_ENV, DEFAULT_MAX_LINE_BYTES)
    )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _shown(path: str | os.PathLike[str]) -> str:
    return escape_surrogates(os.fsdecode(path))


def open_regular(path: str | os.PathLike[str], what: str) -> int:
    """Open ``path`` read-only and return its descriptor, refusing anything but a regular file.

    ``what`` names the file's role in messages ("journal", "labels file"). Raises an
    :class:`~evalkit.files.errors.InputFileError` (an ``EvalkitError`` and the matching
    ``OSError``) naming the path and the reason: missing, a dangling symlink, a symlink loop,
    permission denied, a directory, a FIFO, a device. The caller closes the descriptor.
    """
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputFileError(
                f"{what} {_shown(p)!r}: a symlink loop (too many levels of symbolic links)",
                p,
                exc.errno,
            ) from exc
        if exc.errno == errno.ENOENT and os.path.islink(p):
            raise InputFileError(
                f"{what} {_shown(p)!r}: a dangling symlink (its target does not exist)",
                p,
                exc.errno,
            ) from exc
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO's peer semantics
            raise InputNotRegularError(
                f"{what} {_shown(p)!r}: not a regular file", p, exc.errno
            ) from exc
        raise input_file_error(exc, what, _shown(p)) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputNotRegularError(
                f"{what} {_shown(p)!r}: is {_kind(mode)}, not a regular file", p, errno.EINVAL
            )
        # a regular file never blocks, but leave the descriptor in the ordinary blocking mode
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(
    path: str | os.PathLike[str],
    what: str,
    *,
    max_bytes: int | None = None,
    max_line_bytes_: int | None = None,
    line_cap: bool = False,
) -> bytes:
    """The whole content of the regular file ``path``, refusing more than ``max_bytes``.

    Never holds more than ``max_bytes + 1`` bytes: a file that grows while it is read, or
    that lies about its size, is still cut off at the cap and refused. With ``line_cap`` a
    line longer than the line cap is refused too (naming it): for line-oriented text handed
    whole to a parser, where one line must not cost more than the cap says.
    """
    cap = max_file_bytes(max_bytes)
    fd = open_regular(path, what)
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            raise input_too_large(path, what, cap, size)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_READ_CHUNK, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise input_too_large(path, what, cap, None)
    except OSError as exc:
        if isinstance(exc, InputFileError):
            raise
        raise input_file_error(exc, what, _shown(path)) from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if line_cap:
        _check_line_lengths(data, path, what, max_line_bytes(max_line_bytes_))
    return data


def read_stream(stream: Any, what: str, *, max_bytes: int | None = None) -> bytes:
    """Everything ``stream`` (standard input, a pipe) holds, refusing more than ``max_bytes``.

    Reads the binary buffer of a text stream when it has one. Never holds more than
    ``max_bytes + 1`` bytes of it: an endless producer (``yes |``) is cut off at the cap.
    """
    cap = max_file_bytes(max_bytes)
    raw = getattr(stream, "buffer", stream)
    chunks: list[bytes] = []
    total = 0
    while total <= cap:
        chunk = raw.read(min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        if isinstance(chunk, str):  # a text stream without a buffer (tests, StringIO)
            chunk = chunk.encode("utf-8", "surrogatepass")
        chunks.append(chunk)
        total += len(chunk)
    if total > cap:
        raise input_too_large("<stdin>", what, cap, None)
    return b"".join(chunks)


def input_too_large(
    path: str | os.PathLike[str], what: str, cap: int, size: int | None
) -> InputTooLargeError:
    """The refusal of a file over ``cap``: it names the file, its size and the setting."""
    seen = f"{size} bytes" if size is not None else "more"
    return InputTooLargeError(
        f"{what} {_shown(path)!r}: {seen} exceeds the {cap}-byte cap of this reader (raise it "
        f"with ${MAX_FILE_BYTES_ENV} if the file is really that large)",
        os.fspath(path),
        errno.EFBIG,
    )


def unreadable_reason(exc: OSError, what: str, path: str | os.PathLike[str]) -> str:
    """Why ``path`` could not be read, without the ``what 'path': `` prefix the error carries.

    For a diagnostic that names the file itself: "a dangling symlink ...", "is a named pipe
    (FIFO), not a regular file", "permission denied".
    """
    text = str(exc) if isinstance(exc, InputFileError) else (exc.strerror or type(exc).__name__)
    return text.removeprefix(f"{what} {_shown(path)!r}: ")


def _utf8_error(data: bytes, exc: UnicodeDecodeError) -> tuple[int, int]:
    """1-based line and column (in bytes) of the first invalid UTF-8 byte."""
    line = data.count(b"\n", 0, exc.start) + 1
    col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return line, col


def read_text(
    path: str | os.PathLike[str],
    what: str,
    *,
    max_bytes: int | None = None,
    max_line_bytes_: int | None = None,
    line_cap: bool = False,
) -> str:
    """:func:`read_bytes` decoded as strict UTF-8 (a leading BOM is dropped).

    Invalid UTF-8 raises an ``EvalkitError`` naming the file, the line and the byte column;
    ``line_cap`` as for :func:`read_bytes`.
    """
    data = read_bytes(
        path, what, max_bytes=max_bytes, max_line_bytes_=max_line_bytes_, line_cap=line_cap
    )
    return decode_text(data, path, what)


def decode_text(data: bytes, path: str | os.PathLike[str], what: str) -> str:
    """``data``, read from ``path``, as strict UTF-8 text (a leading BOM dropped).

    For a caller that needs the bytes too (to hash them); invalid UTF-8 raises an
    ``EvalkitError`` naming the file, the line and the byte column.
    """
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line, col = _utf8_error(data, exc)
        raise EvalkitError(
            f"{what} {_shown(path)!r}: line {line}: invalid UTF-8 at byte column {col} "
            f"({exc.reason}); the file must be UTF-8 text"
        ) from None


def _check_line_lengths(data: bytes, path: str | os.PathLike[str], what: str, cap: int) -> None:
    if len(data) <= cap:  # no line can be longer than the whole file
        return
    for line in split_lines(data, max_line_bytes_=cap):
        if line.data is None:
            raise InputTooLargeError(
                f"{what} {_shown(path)!r}: line {line.number}: {line.length} bytes exceed the "
                f"{cap}-byte line cap (raise it with ${MAX_LINE_BYTES_ENV} if that is right)",
                os.fspath(path),
                errno.EFBIG,
            )


@dataclass(frozen=True, slots=True)
class RawLine:
    """One line of a line-oriented file.

    Its 1-based ``number``, its bytes (without the newline and a trailing CR), and whether it
    was the last line without a newline (``unterminated``). ``data`` is None when the line is
    longer than the line cap (``length`` tells how long).
    """

    number: int
    data: bytes | None
    unterminated: bool
    length: int


def split_lines(data: bytes, *, max_line_bytes_: int | None = None) -> Iterator[RawLine]:
    r"""The lines of ``data`` (split on ``\n``, a trailing CR dropped); blank lines included.

    A line longer than the line cap is yielded with ``data=None`` so that the reader reports it
    instead of parsing it (parsing a huge line can take many times its size in memory).
    """
    cap = max_line_bytes(max_line_bytes_)
    n = len(data)
    start = 0
    number = 0
    while start < n:
        number += 1
        end = data.find(b"\n", start)
        unterminated = end < 0
        if unterminated:
            end = n
        length = end - start
        if length > cap:
            yield RawLine(number, None, unterminated, length)
        else:
            line = data[start:end]
            if line.endswith(b"\r"):
                line = line[:-1]
            yield RawLine(number, line, unterminated, length)
        start = end + 1


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


# Python's decoder recurses, so how deep it can go depends on sys.getrecursionlimit() and on
# the stack in use; one fixed bound, checked on the text first, gives every reader the same
# answer (and the same message) on the same bytes, well within the default limit of 1,000.
MAX_JSON_NESTING = 512
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")
_TOO_DEEP = f"JSON nested too deeply for this reader (more than {MAX_JSON_NESTING} levels)"


def _text_nests_deeper(text: str, bound: int) -> bool:
    """True when brackets outside strings in ``text`` open more than ``bound`` levels deep.

    Any text, JSON or not (an unclosed ``[[[`` counts too); a stored record has fewer
    brackets than its bound, so the two counts decide it.
    """
    if text.count("[") + text.count("{") <= bound:  # the common case: two C-speed counts
        return False
    depth = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > bound:
            return True
    return False


def parse_json(text: str | bytes, *, max_depth: int | None = None) -> Any:
    r"""Parse one JSON text strictly (no ``NaN``/``Infinity``), or raise :class:`JsonInputError`.

    Nesting beyond :data:`MAX_JSON_NESTING` and invalid UTF-8 in ``bytes`` are reasons, not
    crashes. Lone surrogates written as ``\udXXX`` escapes are legal JSON and are kept. With
    ``max_depth`` a value nesting arrays/objects deeper than that is refused too, so that no
    recursive code downstream (``repr``, ``deepcopy``, ``json.dumps``) can meet it.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if _text_nests_deeper(text, MAX_JSON_NESTING):
        raise JsonInputError(_TOO_DEEP)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:  # a bound of 512 met with little stack left: the same reason
        raise JsonInputError(_TOO_DEEP) from None
    except json.JSONDecodeError as exc:
        where = (
            f"line {exc.lineno}, column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        )
        raise JsonInputError(f"not JSON ({exc.msg} at {where})", exc.lineno) from None
    except ValueError as exc:
        raise JsonInputError(f"not JSON ({clip(str(exc))})") from None
    if (
        max_depth is not None
        and isinstance(value, dict | list)
        and _text_nests_deeper(text, max_depth)
    ):
        raise JsonInputError(f"JSON nested more than {max_depth} levels deep")
    return value


def parse_json_line(data: bytes, *, max_depth: int | None = None) -> tuple[Any, bool]:
    """:func:`parse_json` of one line's bytes, through orjson when it reads the same value.

    With whether orjson read it: the value then holds no NaN or infinity (orjson refuses a
    literal beyond double range) and no integer beyond 64 bits, so a caller may encode it
    with orjson again (:func:`evalkit.record.seal.record_sha256`). The two parsers read every
    other text alike (strict JSON, duplicate keys: the last wins, floats: the nearest
    double; ``tests/test_record_seal.py``); an integer of 19 digits or more (which
    orjson reads as a float past 64 bits), nesting deeper than the bound, and whatever orjson
    refuses go through :func:`parse_json`, which reads it or names why not.
    """
    if fast_json is not None and _LONG_DIGITS not in data.translate(_DIGITS_AS_ZERO):
        try:
            value = fast_json.loads(data)
        except ValueError:  # orjson.JSONDecodeError is one
            pass
        else:
            bound = MAX_JSON_NESTING if max_depth is None else min(max_depth, MAX_JSON_NESTING)
            if not isinstance(value, dict | list) or not _bytes_nest_deeper(data, bound):
                return value, True
    return parse_json(data, max_depth=max_depth), False


def _bytes_nest_deeper(data: bytes, bound: int) -> bool:
    if data.count(b"[") + data.count(b"{") <= bound:
        return False
    return _text_nests_deeper(data.decode("utf-8"), bound)  # orjson read it: valid UTF-8


#: 19 digits in a row, in bytes where every ASCII digit reads ``0`` (a translation and a
#: substring search: several times faster than a regular expression over a journal line)
_LONG_DIGITS = b"0" * 19
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    r"""``text`` with every lone surrogate written as the escape ``\udXXX`` (printable, safe)."""
    if not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clip(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters (saying how long it was), surrogates escaped.

    For quoting untrusted values in a message without printing a megabyte or crashing.
    """
    text = escape_surrogates(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def dumps_bytes(obj: Any, **kwargs: Any) -> bytes:
    """:func:`dumps` encoded as UTF-8, without searching the text for lone surrogates first.

    The encoding itself finds them (it refuses them); only then is the text escaped, so the
    common record costs one JSON encoding and one UTF-8 encoding.
    """
    kwargs.setdefault("ensure_ascii", False)
    kwargs.setdefault("allow_nan", False)
    text = json.dumps(obj, **kwargs)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")


def orjson_bytes(obj: Any, *, sort_keys: bool = False) -> bytes | None:
    """Orjson's compact bytes of ``obj`` (keys sorted when asked), or None.

    None when orjson is not installed or refuses ``obj`` (a lone surrogate, an integer past
    64 bits, a key that is not a string, nesting too deep). Where they are the same bytes as
    ``json``'s is each caller's to show (:func:`compact_bytes`, :func:`canonical_bytes`).
    """
    if fast_json is None:
        return None
    try:
        data: bytes = fast_json.dumps(obj, option=fast_json.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:  # orjson.JSONEncodeError is one
        return None
    return data


def compact_bytes(obj: Any, written: bytes | None) -> bytes:
    """``dumps_bytes(obj, separators=(",", ":"))``, by orjson when ``written`` shows it is the same.

    ``written``: ``json``'s bytes of ``obj`` in any key order, or of it before string values
    were added (a record's canonical form before its seal), or None. orjson writes strings,
    integers and keys as ``json`` does (``tests/test_record_seal.py`` checks every code point),
    and a float as ``repr`` does from 1e-4 up to 1e16 and at zero; ``repr`` writes every other
    float with a digit and an exponent sign (``1e-05``, ``1e+16``). So ``written`` without
    either (:func:`other_float_form`) holds no float orjson writes otherwise, and, written at
    all, no NaN or infinity. What orjson refuses is written by ``json``.
    """
    data = None
    if written is not None and not other_float_form(written):
        data = orjson_bytes(obj)
    return dumps_bytes(obj, separators=(",", ":")) if data is None else data


def canonical_bytes(obj: Any, *, finite: bool = False, allow_nan: bool = False) -> bytes:
    """``dumps_bytes(obj, sort_keys=True, separators=(",", ":"))``, by orjson where the same.

    orjson sorts keys by code point and writes strings and integers as ``json`` does
    (``tests/test_record_seal.py`` checks every code point); it writes NaN and infinity as
    ``null`` and floats outside 1e-4..1e16 otherwise (:func:`other_float_form`). So its bytes
    are taken only when they hold no such float and read back as ``obj`` (a NaN or an
    infinity reads back as null, a tuple as a list: not equal); ``finite``: ``obj`` is a value
    orjson parsed (:func:`parse_json_line`), which holds neither, so the read-back is skipped.
    The rest is written by ``json`` (``allow_nan`` as there).
    """
    data = orjson_bytes(obj, sort_keys=True)
    if data is None or other_float_form(data) or not (finite or fast_json.loads(data) == obj):
        return dumps_bytes(obj, sort_keys=True, separators=(",", ":"), allow_nan=allow_nan)
    return data


def other_float_form(data: bytes) -> bool:
    """Whether JSON ``data`` may hold a float that ``json`` and orjson write differently.

    That is, a digit followed by ``e-`` or ``e+``, or ``0.0000``, anywhere in ``data``.
    Both write a float as ``repr`` does from 1e-4 up to 1e16 and at zero; outside, ``json``
    always writes a digit and an exponent sign (``1e-05``, ``1e+16``) and orjson that or a
    fraction starting ``0.0000`` (``0.00001``) (``tests/test_record_seal.py``). The same
    characters inside a string only make the answer a cautious yes.
    """
    return b"0.0000" in data or _DIGIT_EXPONENT.search(data) is not None


# "e" first: the engine then looks for that one byte and tests the digit only behind it (about
# 1.5x faster on journal records than a find loop, 6x than "[0-9]e[-+]")
_DIGIT_EXPONENT = re.compile(rb"e(?<=[0-9]e)[-+]")


def dumps(obj: Any, **kwargs: Any) -> str:
    r"""``json.dumps(obj, ensure_ascii=False, allow_nan=False, **kwargs)``, encodable as UTF-8.

    Python's strings can hold lone surrogates (from a ledger's ``"\ud800"`` or from
    undecodable command-line bytes); inside a JSON string they are written as the escape
    ``\udXXX``, which ``JSON.parse`` and ``json.loads`` read back as the same string.
    """
    kwargs.setdefault("ensure_ascii", False)
    kwargs.setdefault("allow_nan", False)
    text = json.dumps(obj, **kwargs)
    # A lone surrogate can only appear inside a JSON string literal, so escaping it in place
    # keeps the document valid.
    return escape_surrogates(text) if not kwargs["ensure_ascii"] else text
