"""What several subcommands share.

The metrics directory and journal options, and reading the journal they name.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import journal
from evalkit.calibration.calibrations import repository_calibrations
from evalkit.errors import EvalkitError
from evalkit.files.input import escape_surrogates
from evalkit.journal.reader import JOURNAL_NAME

if TYPE_CHECKING:
    from evalkit.journal.reader import JournalRead
    from evalkit.record.calibration_status import CalibrationAcceptance

DEFAULT_METRICS_DIR = Path(".orchestrator/metrics")
#: Ledger diagnostics printed without ``--diagnostics``.
DIAGNOSTICS_SHOWN = 5
JOURNAL_HELP = f"journal file (default <metrics-dir>/{JOURNAL_NAME})"


def require_text(value: str, flag: str) -> str:
    """``value`` when it is valid text; an ``EvalkitError`` naming ``flag`` otherwise.

    Invalid text: command-line bytes that were not UTF-8 (Python decodes those as lone
    surrogates).
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EvalkitError(
            f"{flag}: not valid UTF-8 text (undecodable byte at character {exc.start + 1}: "
            f"'{escape_surrogates(value)}'); pass it as UTF-8"
        ) from None
    return value


def add_metrics_dir(parser: Any, what: str, *, default: Path | None = DEFAULT_METRICS_DIR) -> None:
    """``--metrics-dir`` (``what``, then the default directory, is its help)."""
    parser.add_argument(
        "--metrics-dir",
        type=Path,
        default=default,
        help=f"{what} (default {DEFAULT_METRICS_DIR})",
    )


def add_journal(parser: Any, help: str = JOURNAL_HELP) -> None:
    """``--journal FILE``."""
    parser.add_argument("--journal", type=Path, help=help)


def add_journal_source(parser: Any, journal_help: str) -> Any:
    """``--journal`` or ``--metrics-dir`` (one of them, see :func:`journal_path`).

    Returns the mutually exclusive group.
    """
    source = parser.add_mutually_exclusive_group()
    add_journal(source, journal_help)
    add_metrics_dir(source, f"directory holding {JOURNAL_NAME}", default=None)
    return source


def journal_path(args: argparse.Namespace) -> Path:
    """The journal a command reads: ``--journal``, else ``--metrics-dir``/eval.jsonl."""
    if getattr(args, "journal", None) is not None:
        return Path(args.journal)
    return Path(args.metrics_dir or DEFAULT_METRICS_DIR) / JOURNAL_NAME


def accepted_calibrations() -> CalibrationAcceptance:
    """The calibrations a record may claim: the repository's certificates.

    Each is re-checked the first time a record claims it; a refused one is named on stderr
    with the reason.
    """
    return repository_calibrations(on_refused=_note_refused)


def progress_bar(desc: str, unit: str, *, disable: bool) -> Any:
    """A ``progress(iterable, total)`` callback that wraps the loop in a tqdm bar on stderr."""
    from tqdm import tqdm

    def progress(items: Any, total: int) -> Any:
        return tqdm(items, total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable)

    return progress


def _note_refused(reason: str) -> None:
    print(f"evalkit: {reason}", file=sys.stderr)


def print_diagnostics(diagnostics: Sequence[Any], show_all: bool, *, prog: str) -> None:
    """What the ledger reading skipped or doubted, on stderr.

    The first :data:`DIAGNOSTICS_SHOWN`, or all of them.
    """
    if not diagnostics:
        return
    shown = diagnostics if show_all else diagnostics[:DIAGNOSTICS_SHOWN]
    print(
        f"{prog}: ledger: {len(diagnostics)} line(s) or file(s) skipped or doubted while reading:",
        file=sys.stderr,
    )
    for diag in shown:
        print(f"  {diag}", file=sys.stderr)
    if len(shown) < len(diagnostics):
        print(
            f"  ... and {len(diagnostics) - len(shown)} more (--diagnostics lists all)",
            file=sys.stderr,
        )


def read_journal(path: Path) -> JournalRead:
    """The journal at ``path`` (``EvalkitError`` when there is none), read and validated.

    Validated against the repository's verified calibration certificates; skipped lines are
    reported on stderr.
    """
    try:
        result = journal.read(path, accepted=accepted_calibrations())
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no journal file there") from None
    # anything else that is not a journal (a FIFO, a device, a directory) names itself
    for diag in result.diagnostics:
        print(f"evalkit: {path}: {diag}", file=sys.stderr)
    return result


def read_journal_records(path: Path) -> list[dict[str, Any]]:
    """Valid records of the journal at ``path``; skipped lines are reported on stderr."""
    return list(read_journal(path).records)
