"""The rubric registry: one entry per pre-registered rubric version."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.dimension import Dimension
from evalkit.errors import EvalkitError, VersionMismatchError
from evalkit.rubrics import v1, v2
from evalkit.rubrics.context import ScoringContext

__all__ = ["PACKAGED_TEXT_DIR", "RUBRIC_TEXT_DIR", "RUBRIC_VERSIONS", "Rubric", "get_rubric"]

#: The project's own pre-registered rubric texts (repository root ``rubrics/``).
RUBRIC_TEXT_DIR = Path(__file__).resolve().parents[2] / "rubrics"
#: Byte-identical copies shipped as package data, for an installed (non-checkout) evalkit.
PACKAGED_TEXT_DIR = Path(__file__).resolve().parents[1] / "rubrics_text"

Scorer = Callable[[ScoringContext], Dimension]

#: Dimensions whose evidence comes from the events ledger (the LEDGER INCOMPLETE note goes
#: on these only; plan-fidelity and efficiency-kpis read the session record alone).
EVENT_DERIVED = frozenset(
    {"verification-evidence", "gate-health", "process-safety", "guard-friction"}
)


@dataclass(frozen=True)
class Rubric:
    """A rubric version: its scorer table, how it reads events, and its hashed text.

    ``event_reading`` is ``"active-file"`` (v1: ``events.jsonl`` only, every parseable line
    kept, unreadable lines skipped silently) or ``"rotation"`` (v2: the archives and legacy ring
    too, non-object lines counted as unreadable, and a LEDGER INCOMPLETE note on the
    event-derived dimensions when lines were unreadable or archives are missing).
    """

    version: str
    scorers: tuple[tuple[str, Scorer], ...]
    event_reading: Literal["active-file", "rotation"]

    @property
    def dimension_ids(self) -> tuple[str, ...]:
        """The deterministic dimension ids, in canonical order."""
        return tuple(dim_id for dim_id, _ in self.scorers)

    @property
    def text_path(self) -> Path:
        """The rubric's pre-registered text (``rubrics/<version>.md``; in an installed copy
        without the repository, the packaged copy in ``evalkit/rubrics_text/``)."""
        path = RUBRIC_TEXT_DIR / f"{self.version}.md"
        if path.is_file():
            return path
        return PACKAGED_TEXT_DIR / f"{self.version}.md"

    @property
    def sha256(self) -> str:
        """sha256 of the rubric text's bytes (written to ``provenance.rubric_sha256``)."""
        try:
            data = self.text_path.read_bytes()
        except OSError as exc:
            raise EvalkitError(
                f"rubric text {self.text_path} cannot be read ({exc.strerror}); "
                "provenance.rubric_sha256 needs it"
            ) from exc
        return hashlib.sha256(data).hexdigest()

    @property
    def ledger_notes(self) -> bool:
        return self.event_reading == "rotation"

    def score(self, ctx: ScoringContext) -> tuple[Dimension, ...]:
        """Score every deterministic dimension of this rubric over ``ctx``, in order."""
        dims = []
        for dim_id, scorer in self.scorers:
            dim = scorer(ctx)
            if self.ledger_notes and ctx.ledger_note and dim_id in EVENT_DERIVED:
                # Appended centrally, never per branch: every event-derived count is a lower
                # bound under an incomplete read, whichever branch produced it.
                dim = Dimension(
                    dim.id, dim.method, dim.status, dim.evidence + ctx.ledger_note, dim.score
                )
            dims.append(dim)
        return tuple(dims)


_RUBRICS: dict[str, Rubric] = {
    v1.VERSION: Rubric(v1.VERSION, v1.SCORERS, "active-file"),
    v2.VERSION: Rubric(v2.VERSION, v2.SCORERS, "rotation"),
}

#: The rubric versions evalkit can score, oldest first.
RUBRIC_VERSIONS: tuple[str, ...] = tuple(_RUBRICS)


def get_rubric(version: str | Rubric) -> Rubric:
    """The rubric registered under ``version`` (``"rubric-v1"`` or ``"rubric-v2"``).

    Raises :class:`~evalkit.errors.VersionMismatchError` for an unknown version.
    """
    if isinstance(version, Rubric):
        return version
    try:
        return _RUBRICS[version]
    except (KeyError, TypeError):
        known = ", ".join(RUBRIC_VERSIONS)
        raise VersionMismatchError(
            f"rubric: unknown rubric version {version!r} (known: {known})"
        ) from None
