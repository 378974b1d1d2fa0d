r"""Entry point of the ``evalkit`` console script.

Each subcommand lives in its own module of this package and exposes
``register(subparsers) -> None``; the parser it adds sets ``func`` (``args -> int`` exit code).
Exit codes (SPEC section 3): 0 success, 1 user-facing error, 2 internal or I/O failure,
3 version mismatch.

Output never crashes on text that UTF-8 cannot encode: a lone surrogate (from a ledger's
``"\ud800"`` or from undecodable command-line bytes) is printed as the escape ``\ud800``
(stdout and stderr use ``errors="backslashreplace"``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from evalkit._version import __version__
from evalkit.errors import EvalkitError

# Order is the order of `evalkit --help`.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "score",
    "verify",
    "journal",
    "report",
    "explore",
    "facts",
    "judge",
    "stats",
    "monitor",
    "study",
    "demo",
    "gold",
    "calibrate",
    "preregister",
)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad argument; SPEC section 3 reserves 2 for internal/I-O failures."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``evalkit`` parser with every subcommand registered."""
    parser = _Parser(
        prog="evalkit",
        description="Score agentic coding sessions against pre-registered rubrics; "
        "calibrate judges; run studies.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"evalkit.cli.{name}").register(subparsers)
    return parser


def _escape_unencodable_output() -> None:
    """Print lone surrogates (and anything else the stream cannot encode) as escapes."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # a stream that cannot be reconfigured (detached, closed) is left as it is
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); the exit code (SPEC 3)."""
    _escape_unencodable_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 1
    try:
        return int(args.func(args))
    except EvalkitError as exc:
        print(f"evalkit {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `evalkit journal | head`
        return 0
    except OSError as exc:
        print(f"evalkit {args.command}: I/O error: {exc}", file=sys.stderr)
        return 2
    except UnicodeError as exc:
        # a writer that is not surrogate-safe yet: a clear message, never a traceback
        print(f"evalkit {args.command}: error: text that cannot be encoded: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
