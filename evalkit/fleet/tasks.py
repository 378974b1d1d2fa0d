"""The per-directory tasks of a fleet: what one Dask worker (or this process) does to one ledger.

Module-level functions, so a worker imports them by name: :func:`score_directory` (the task of
:func:`evalkit.fleet.score.score_fleet`: ``score_ledger`` of one directory, sent back as an Arrow
stream) and :func:`journal_directory` (the task of ``evalkit score --all --fleet
--journal-each``: ``score --all --journal`` into that directory's own ``eval.jsonl``). Each
raises :class:`~evalkit.errors.EvalkitError` for a directory with no session to score, and the
message names what is wrong where: ``sessions.jsonl``'s path and state, then the lines that
gave no session, as ``file:line: reason`` or ``file:line: session_id: reason``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.rubrics import Rubric
    from evalkit.scoring.run_inputs import RunInputs

__all__ = [
    "DIAGNOSTICS_KEPT",
    "JournaledDirectory",
    "Scored",
    "journal_directory",
    "score_directory",
]

#: Ledger diagnostics a scored directory sends back (the rest are counted).
DIAGNOSTICS_KEPT = 100


@dataclass(frozen=True)
class Scored:
    """One directory's ``score_ledger`` table as it travels back: an Arrow IPC stream.

    ``sessions`` and ``rows`` count what it holds; ``skipped`` are the session ids
    ``score_ledger`` did not score (only whitespace) and ``notes`` say where they are
    (``file:line: session_id: ...``); ``diagnostics``: the first :data:`DIAGNOSTICS_KEPT`
    lines or files the ledger reading skipped or doubted, of ``n_diagnostics``.
    """

    payload: bytes
    sessions: int
    rows: int
    skipped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()
    n_diagnostics: int = 0


def score_directory(metrics_dir: str, rubric: str | Rubric) -> Scored:
    """``score_ledger`` of one directory, encoded for the trip back.

    Raises :class:`~evalkit.errors.EvalkitError` when the directory is missing or holds no
    session it can score (the message names the lines of ``sessions.jsonl`` that gave none).
    """
    from evalkit.fleet.arrow import encode_ledger_table
    from evalkit.ledger.nothing_to_score import NoSession
    from evalkit.scoring.engine import score_ledger

    frame = score_ledger(metrics_dir, rubric=rubric)
    skipped = tuple(frame.attrs.get("skipped") or ())
    if frame.empty:
        also = f"{len(skipped)} session id(s) skipped (only whitespace)" if skipped else ""
        raise EvalkitError(NoSession.from_dict(frame.attrs["no_session"]).message(also))
    notes = tuple(frame.attrs.get("skipped_lines") or ())
    diagnostics = list(frame.attrs.get("diagnostics") or ())
    sessions = int(frame["session_id"].nunique())
    return Scored(
        encode_ledger_table(frame),
        sessions,
        len(frame),
        skipped,
        notes,
        tuple(diagnostics[:DIAGNOSTICS_KEPT]),
        len(diagnostics),
    )


# -- journaling each directory ---------------------------------------------------------------


@dataclass(frozen=True)
class JournaledDirectory:
    """What :func:`journal_directory` did to one directory's own journal.

    ``scored`` records appended to ``journal``; ``unchanged`` sessions skipped (nothing new);
    ``refused`` sessions (``'id': reason``); ``payload``: the appended records' deterministic
    rows (``rows``) as an Arrow stream; the ledger ``diagnostics`` kept (``n_diagnostics`` in
    all); ``notes``: the calibration certificates refused while reading the journal.
    """

    journal: str
    scored: int = 0
    unchanged: int = 0
    refused: tuple[str, ...] = ()
    rows: int = 0
    payload: bytes = b""
    diagnostics: tuple[str, ...] = ()
    n_diagnostics: int = 0
    notes: tuple[str, ...] = ()


def journal_directory(
    metrics_dir: str,
    rubric: str = "rubric-v2",
    *,
    rescore: bool = False,
    timestamp: str | None = None,
    model_id: str | None = None,
    model_source: str | None = None,
    handle: str | None = None,
    diagnostics_kept: int | None = None,
    run: RunInputs | None = None,
) -> JournaledDirectory:
    """``score --all --journal`` for one directory of a fleet, into ``<metrics_dir>/eval.jsonl``.

    :func:`evalkit.journal.batch.journal_ledger` with these arguments, incremental unless
    ``rescore``, the journal validated against the certificates of the repository evalkit runs
    from (as the command line does); ``diagnostics_kept`` caps the ledger diagnostics sent back
    (``None``: all); ``run``: the run inputs validated once for the whole fleet (the keywords
    otherwise). Raises :class:`~evalkit.errors.EvalkitError` when there is no session to
    score (then no journal is created: ``sessions.jsonl`` is missing, unreadable or holds no
    line with a session id; or, after scoring, every session was refused) or when
    ``eval.jsonl`` is a file of the ledger; :class:`~evalkit.journal.reader.JournalWriteError` (an
    ``OSError``) when an append fails, its message saying which records of the batch are on
    disk.
    """
    from evalkit.calibration.calibrations import repository_calibrations
    from evalkit.journal.batch import journal_ledger
    from evalkit.journal.reader import JOURNAL_NAME
    from evalkit.ledger.files import ledger_role
    from evalkit.scoring.run_inputs import RunInputs

    target = os.path.join(metrics_dir, JOURNAL_NAME)
    role = ledger_role(metrics_dir, target)
    if role is not None:
        raise EvalkitError(
            f"{target} is the ledger's {role}: records are never appended to the ledger"
        )
    notes: list[str] = []
    if run is None:
        run = RunInputs.of(
            timestamp=timestamp, model_id=model_id, model_source=model_source, handle=handle
        )
    result = journal_ledger(
        metrics_dir,
        target,
        rubric,
        rescore=rescore,
        run=run,
        accepted=repository_calibrations(on_refused=notes.append),
        create_empty=False,
    )
    if result.no_session is not None:
        raise EvalkitError(str(result.no_session))
    return _journaled(metrics_dir, target, result, diagnostics_kept, tuple(notes))


def _journaled(
    metrics_dir: str, target: str, result: Any, kept: int | None, notes: tuple[str, ...]
) -> JournaledDirectory:
    """The :class:`JournaledDirectory` of a batch (an error when nothing could be scored)."""
    import pandas as pd

    from evalkit.fleet.arrow import encode_ledger_table
    from evalkit.journal.batch import deterministic_rows
    from evalkit.scoring.engine import LEDGER_COLUMNS

    refused = tuple(str(r) for r in result.refused)
    if not result.appended and not result.unchanged:
        first = f": {refused[0]}" if refused else ""
        raise EvalkitError(f"no session to score: {len(refused)} refused{first}")
    rows = list(deterministic_rows(result.appended))
    table = pd.DataFrame(rows, columns=LEDGER_COLUMNS, dtype=object)  # values kept as they are
    diagnostics = result.diagnostics if kept is None else result.diagnostics[:kept]
    return JournaledDirectory(
        target,
        scored=result.scored,
        unchanged=len(result.unchanged),
        refused=refused,
        rows=len(rows),
        payload=encode_ledger_table(table),
        diagnostics=tuple(str(d) for d in diagnostics),
        n_diagnostics=len(result.diagnostics),
        notes=notes,
    )
