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
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from evalkit._version import __version__
from evalkit.errors import EvalkitError

#: Every subcommand and its line in ``evalkit --help``, in that order. The module
#: ``evalkit.cli.<name>`` registers it (taking its help from here); only the module of the
#: command being run is imported, so ``evalkit --help`` loads none of them (docs/CLI.md).
SUBCOMMANDS: dict[str, str] = {
    "score": "score one session (or --all sessions, or a --fleet) against a rubric",
    "verify": "re-score stored records offline and compare them byte for byte",
    "journal": "list and summarize the records of a journal (eval.jsonl)",
    "report": "render one stored record as a self-contained HTML report",
    "explore": "write one offline HTML file to filter, compare and drill into a journal",
    "facts": "print the judge facts of a stored record as JSON",
    "judge": "label journal records with the rule judge, or run model judges (judge run)",
    "stats": "agreement (kappa with CI), sample sizes, threshold studies",
    "monitor": "every check's fire rate as an anytime-valid band over the journal",
    "study": "run a parameterized study notebook into HTML + results.json",
    "demo": "build the default data and run every study into reports/",
    "gold": "verify frozen gold sets or freeze a new version",
    "calibrate": "calibrate a judge's labels against a frozen gold set (kappa with BCa CI, ...)",
    "preregister": "write the pre-registration lock (rubrics, gold sets, decision rules, studies)",
}
SUBCOMMAND_MODULES: tuple[str, ...] = tuple(SUBCOMMANDS)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad argument; SPEC section 3 reserves 2 for internal/I-O failures."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``evalkit`` parser: every subcommand registered, or only the one ``argv`` runs.

    With ``argv`` the other subcommands are placeholders that carry their help line, so
    parsing ``argv`` imports one subcommand module at most.
    """
    parser = _Parser(
        prog="evalkit",
        description="Score agentic coding sessions against pre-registered rubrics; "
        "calibrate judges; run studies.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None if argv is None else _command_of(argv)
    for name, line in SUBCOMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"evalkit.cli.{name}").register(subparsers)
        else:
            subparsers.add_parser(name, help=line, add_help=False)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option.

    The top level's options (``--help``, ``--version``) take no value.
    """
    words = [a for a in argv if a == "--" or not a.startswith("-")]
    if words and words[0] == "--":
        words = words[1:]
    return words[0] if words else None


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
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
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


def run() -> NoReturn:
    """The process entry (``evalkit`` and ``python -m evalkit``): :func:`main`, then exit.

    Before exiting, every live object is frozen out of the collector: the interpreter's
    final collections would otherwise walk the whole heap (the SDKs' models, a ledger's
    records), about 0.3 s of a judged run's exit. Objects are still finalized and every
    ``atexit`` handler runs; only a process that ends right away freezes its heap.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
