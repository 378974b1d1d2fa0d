"""The rubric registry: one line per pre-registered rubric version, each a table of dimensions.

A version's table lives in its own module (:mod:`evalkit.rubrics.v1`, :mod:`evalkit.rubrics.v2`):
a tuple of :class:`~evalkit.rubrics.dimensions.spec.DimensionSpec`, one per dimension, each
from that dimension's module. A new version is a new table module plus one line in
``_RUBRICS`` (and its text in ``rubrics/``). A test extends the registry without editing a
file: :func:`registered` makes a :class:`Rubric` built in the test (with its own ``text_dir``)
known to :func:`get_rubric` for the duration of a ``with`` block; it never replaces a shipped
version.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.errors import EvalkitError, VersionMismatchError
from evalkit.files.hashing import sha256_hex
from evalkit.provenance.repository import PACKAGE_DIR, REPO_ROOT
from evalkit.record.dimension import Dimension
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics import v1, v2
from evalkit.rubrics.dimensions.spec import DimensionSpec

__all__ = [
    "PACKAGED_TEXT_DIR",
    "RUBRIC_TEXT_DIR",
    "RUBRIC_VERSIONS",
    "Rubric",
    "get_rubric",
    "registered",
]

#: The project's own pre-registered rubric texts (repository root ``rubrics/``).
RUBRIC_TEXT_DIR = REPO_ROOT / "rubrics"
#: Byte-identical copies shipped as package data, for an installed (non-checkout) evalkit.
PACKAGED_TEXT_DIR = PACKAGE_DIR / "rubrics_text"


@dataclass(frozen=True)
class Rubric:
    """A rubric version: its table of dimensions, how it reads events, and its hashed text.

    ``event_reading`` is ``"active-file"`` (v1: ``events.jsonl`` only, every parseable line
    kept, unreadable lines skipped silently) or ``"rotation"`` (v2: the archives and legacy ring
    too, non-object lines counted as unreadable, and a LEDGER INCOMPLETE note on the
    event-derived dimensions when lines were unreadable or archives are missing).
    ``text_dir`` overrides where the text ``<version>.md`` is read (``None``: the repository's
    ``rubrics/``, else the packaged copy).
    """

    version: str
    dimensions: tuple[DimensionSpec, ...]
    event_reading: Literal["active-file", "rotation"]
    text_dir: Path | None = None

    @property
    def dimension_ids(self) -> tuple[str, ...]:
        """The deterministic dimension ids, in canonical order."""
        return tuple(spec.id for spec in self.dimensions)

    @property
    def text_path(self) -> Path:
        """The rubric's pre-registered text (``rubrics/<version>.md``).

        In an installed copy without the repository: the packaged copy in
        ``evalkit/rubrics_text/``.
        """
        if self.text_dir is not None:
            return self.text_dir / f"{self.version}.md"
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
        return sha256_hex(data)

    @property
    def ledger_notes(self) -> bool:
        """Whether rubric-v2's LEDGER INCOMPLETE note applies (rotation reading)."""
        return self.event_reading == "rotation"

    def score(self, ctx: ScoringContext) -> tuple[Dimension, ...]:
        """Score every deterministic dimension of this rubric over ``ctx``, in order."""
        dims = []
        for spec in self.dimensions:
            dim = spec.score(ctx)
            if self.ledger_notes and ctx.ledger_note and spec.event_derived:
                # Appended centrally, never per branch: every event-derived count is a lower
                # bound under an incomplete read, whichever branch produced it.
                dim = Dimension(
                    dim.id, dim.method, dim.status, dim.evidence + ctx.ledger_note, dim.score
                )
            dims.append(dim)
        return tuple(dims)


#: One line per version, oldest first.
_RUBRICS: dict[str, Rubric] = {
    v1.VERSION: Rubric(v1.VERSION, v1.DIMENSIONS, v1.EVENT_READING),
    v2.VERSION: Rubric(v2.VERSION, v2.DIMENSIONS, v2.EVENT_READING),
}

#: The rubric versions evalkit ships, oldest first.
RUBRIC_VERSIONS: tuple[str, ...] = tuple(_RUBRICS)

#: Versions made known by :func:`registered` (tests, experiments), never a shipped one.
_REGISTERED: dict[str, Rubric] = {}


@contextmanager
def registered(*rubrics: Rubric) -> Iterator[tuple[Rubric, ...]]:
    """Make ``rubrics`` known to :func:`get_rubric` by their version inside the ``with`` block.

    For a rubric version that is not shipped (a test's made-up ``rubric-v3``): it extends the
    registry without editing a file, and leaves :data:`RUBRIC_VERSIONS` (the shipped versions)
    as it is. A version already known is refused: a frozen rubric is never replaced.
    """
    for rubric in rubrics:
        if rubric.version in _RUBRICS or rubric.version in _REGISTERED:
            raise EvalkitError(f"rubric: {rubric.version!r} is already registered")
    _REGISTERED.update({rubric.version: rubric for rubric in rubrics})
    try:
        yield rubrics
    finally:
        for rubric in rubrics:
            _REGISTERED.pop(rubric.version, None)


def get_rubric(version: str | Rubric) -> Rubric:
    """The rubric registered under ``version`` (``"rubric-v1"`` or ``"rubric-v2"``).

    Raises :class:`~evalkit.errors.VersionMismatchError` for an unknown version.
    """
    if isinstance(version, Rubric):
        return version
    try:
        return _RUBRICS.get(version) or _REGISTERED[version]
    except (KeyError, TypeError):
        known = ", ".join(RUBRIC_VERSIONS)
        raise VersionMismatchError(
            f"rubric: unknown rubric version {version!r} (known: {known})"
        ) from None
