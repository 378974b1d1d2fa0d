"""What several subcommands share.

The metrics directory and journal options, reading the journal they name, and the places no
output flag writes (:func:`output_path`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import journal
from evalkit.calibration.calibrations import RepositoryCalibrations, repository_calibrations
from evalkit.calibration.certificate import CALIBRATIONS_DIR
from evalkit.errors import EvalkitError
from evalkit.files.input import escape_surrogates
from evalkit.files.output import NoWrite, check_output
from evalkit.gold.sets import MANIFEST_NAME, VERSION_DIR
from evalkit.journal.reader import JOURNAL_NAME
from evalkit.ledger.files import ledger_paths
from evalkit.ledger.reader import ARCHIVE_DIR_NAME
from evalkit.prereg.lock import default_lock_path
from evalkit.provenance.repository import REPO_ROOT

if TYPE_CHECKING:
    from evalkit.journal.reader import JournalRead

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


def accepted_calibrations() -> RepositoryCalibrations:
    """The calibrations a record may claim: the repository's certificates.

    Each is re-checked the first time a record claims it; a refused one is named on stderr
    with the reason.
    """
    return repository_calibrations(on_refused=_note_refused)


def progress_bar(desc: str, unit: str, *, disable: bool) -> Any:
    """A ``progress(iterable, total)`` callback that wraps the loop in a tqdm bar on stderr."""
    if disable:
        return lambda items, total: items
    from tqdm import tqdm  # deferred: only a command that shows a bar loads it

    def progress(items: Any, total: int) -> Any:
        return tqdm(items, total=total, desc=desc, unit=unit, file=sys.stderr)

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


PathLike = str | os.PathLike[str]


def never_write_here(
    metrics_dirs: Iterable[PathLike] = (),
    gold: Iterable[PathLike] = (),
    *,
    inputs: Iterable[PathLike] = (),
    journals: bool = True,
    lock: bool = True,
) -> tuple[NoWrite, ...]:
    """The places no output flag writes (:func:`evalkit.files.output.check_output`).

    The repository's ``gold/``, ``calibrations/`` and pre-registration lock (``lock``: the
    lock too; ``preregister --out`` writes one); of each metrics directory in play, every file
    of its ledger and (``journals``) its journal; every gold set named on the command line; the
    command's own input files (``inputs``).
    """
    places = [
        NoWrite(Path(given), f"this command's input {escape_surrogates(os.fsdecode(given))}")
        for given in inputs
    ]
    places += [
        NoWrite(REPO_ROOT / "gold", "the repository's gold sets (gold/)", tree=True),
        NoWrite(
            REPO_ROOT / CALIBRATIONS_DIR,
            f"the repository's calibration certificates ({CALIBRATIONS_DIR}/)",
            tree=True,
        ),
    ]
    if lock:
        places.append(NoWrite(default_lock_path(), "the pre-registration lock"))
    for md in metrics_dirs:
        shown = escape_surrogates(os.fsdecode(md))
        if journals:
            places.append(NoWrite(Path(md) / JOURNAL_NAME, f"the journal of {shown}"))
        places.append(NoWrite(Path(md) / ARCHIVE_DIR_NAME, f"the ledger archive of {shown}", True))
        places += [
            NoWrite(Path(p), f"{role} of the ledger {shown}") for role, p in ledger_paths(md)
        ]
    for folder in gold:
        shown = escape_surrogates(os.fsdecode(folder))
        places.append(NoWrite(Path(folder), f"the gold set {shown}", tree=True))
    return tuple(places)


def _frozen_gold_version(path: Path) -> NoWrite | None:
    """The frozen gold version folder ``path`` would be written into (wherever it is), or None.

    A folder ``v<N>`` holding a gold manifest is one, in the repository or in a copy.
    """
    here = Path(os.path.realpath(path.parent if str(path.parent) else "."))
    for folder in (here, *here.parents):
        if VERSION_DIR.match(folder.name) and (folder / MANIFEST_NAME).is_file():
            return NoWrite(folder, "a frozen gold set version", tree=True)
    return None


def _metrics_dir_around(path: Path) -> Path | None:
    """The metrics directory ``path`` would be written into (in play or not), or None.

    A folder holding a ledger file or a journal is one; so is the folder of a ``_archive``.
    """
    here = path.parent if str(path.parent) else Path(".")
    for folder in (here, here.parent) if here.name == ARCHIVE_DIR_NAME else (here,):
        names = [p for _, p in ledger_paths(folder)] + [os.fspath(folder / JOURNAL_NAME)]
        if any(os.path.isfile(p) for p in names):
            return folder
    return None


def output_path(
    path: PathLike,
    flag: str,
    *,
    metrics_dirs: Iterable[PathLike] = (),
    gold: Iterable[PathLike] = (),
    inputs: Iterable[PathLike] = (),
    journals: bool = True,
    lock: bool = True,
) -> Path:
    """``path`` once an output flag may write it; an ``EvalkitError`` (exit 1) naming why not.

    :func:`never_write_here` lists the places refused (its keywords as there), and any frozen
    gold version folder and the ledger and journal files of any metrics directory ``path`` is
    in (one not named on the command line too); a link or a special file is refused too.
    """
    around = _metrics_dir_around(Path(path))
    dirs = [*metrics_dirs, *([] if around is None else [around])]
    never = list(never_write_here(dirs, gold, inputs=inputs, journals=journals, lock=lock))
    frozen = _frozen_gold_version(Path(path))
    if frozen is not None:
        never.append(frozen)
    return check_output(path, flag, never)
