"""The record the engine builds: :class:`EvalRecord` and its parts, next to the contract.

:meth:`EvalRecord.to_dict` is the record of SPEC section 2 exactly as the engine writes it
(key order included); :mod:`evalkit.record.contract` is the contract it is validated against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.display import Readable, fmt_number
from evalkit.errors import ValidationError
from evalkit.js.values import is_non_empty_trimmed
from evalkit.record.contract import RECORD_KIND, SCHEMA_VERSION, STANDARD_VERSION, ModelSource
from evalkit.record.dimension import Dimension
from evalkit.record.scoring_context import Kpis
from evalkit.record.seal import seal_record

if TYPE_CHECKING:
    from evalkit.ledger.reader import Diagnostic
    from evalkit.resolve import Resolution

__all__ = [
    "DEFAULT_MODEL_ID",
    "DEFAULT_MODEL_SOURCE",
    "MODEL_SOURCES",
    "EvalRecord",
    "Harness",
    "Model",
    "Provenance",
    "check_model",
]

MODEL_SOURCES = tuple(source.value for source in ModelSource)
DEFAULT_MODEL_ID = "unknown"
DEFAULT_MODEL_SOURCE = "self-report"


@dataclass(frozen=True)
class Provenance:
    """What produced the record: the rubric text, the engine and the inputs, as hashes.

    The rubric text's sha256, the engine's commit and the sha256 of the inputs the score
    depended on (:func:`evalkit.scoring.measure.inputs_sha256`).
    """

    rubric_sha256: str
    engine_commit: str | None
    inputs_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record's ``provenance`` object (``inputs_sha256`` only when known)."""
        out: dict[str, Any] = {
            "rubric_sha256": self.rubric_sha256,
            "engine_commit": self.engine_commit,
        }
        if self.inputs_sha256 is not None:
            out["inputs_sha256"] = self.inputs_sha256
        return out


@dataclass(frozen=True)
class Model:
    """The model that ran the session, and where its id came from."""

    id: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        """The record's ``model`` object."""
        return {"id": self.id, "source": self.source}


def check_model(model_id: str | None, model_source: str | None) -> Model:
    """The record's model from the run's arguments; ``ValidationError`` for a bad one.

    The defaults are ``"unknown"``/``"self-report"``: evalkit cannot know which model ran a
    session unless told.
    """
    mid = DEFAULT_MODEL_ID if model_id is None else model_id
    if not is_non_empty_trimmed(mid):
        raise ValidationError("model.id: must be a non-empty string")
    source = DEFAULT_MODEL_SOURCE if model_source is None else model_source
    if source not in MODEL_SOURCES:
        raise ValidationError(
            f"model.source: must be one of {', '.join(MODEL_SOURCES)}, got {source!r}"
        )
    return Model(mid.strip(), source)


@dataclass(frozen=True)
class Harness:
    """Where the session ran and the record was written (the host only as a hash)."""

    plugin_version: str
    platform: str
    host_class: str | None
    hostname_hash: str | None

    def to_dict(self) -> dict[str, Any]:
        """The record's ``environment`` object."""
        return {
            "plugin_version": self.plugin_version,
            "platform": self.platform,
            "host_class": self.host_class,
            "hostname_hash": self.hostname_hash,
        }


@dataclass(frozen=True, repr=False)
class EvalRecord(Readable):
    """One evaluation record; :meth:`to_dict` is the record of SPEC section 2.

    ``resolution`` (how the session was selected, its window and peers) and
    ``ledger_diagnostics`` (what the reading of the ledger this rubric reads skipped or
    doubted, file and line) are kept beside the record for callers and reports; they are not
    part of the record itself.
    """

    run_id: str
    session_id: str
    rubric_version: str
    provenance: Provenance
    model: Model
    harness: Harness
    kpis: Kpis
    dimensions: tuple[Dimension, ...]
    timestamp: str
    handle: str | None = None
    resolution: Resolution | None = field(default=None, compare=False, repr=False)
    ledger_diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False, repr=False)

    @property
    def anonymized(self) -> bool:
        """Whether the record names no handle."""
        return self.handle is None

    def _headline(self) -> str:
        counts: dict[str, int] = {}
        for dim in self.dimensions:
            counts[str(dim.status)] = counts.get(str(dim.status), 0) + 1
        statuses = ", ".join(f"{n} {status}" for status, n in counts.items())
        return f"EvalRecord {self.session_id} under {self.rubric_version}: {statuses}"

    def _rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = []
        for dim in self.dimensions:
            score = f" (score {fmt_number(dim.score)})" if dim.has_score else ""
            advisory = " [judge, advisory]" if dim.method == "judge" else ""
            rows.append((dim.id, f"{dim.status}{score}{advisory}: {dim.evidence}"))
        return [*rows, ("run_id", self.run_id), ("timestamp", self.timestamp)]

    def to_dict(self, *, sealed: bool = True) -> dict[str, Any]:
        """The full record, JSON-ready and sealed.

        Non-finite KPIs and scores are written as ``None``; ``provenance.record_sha256`` is
        computed last, over everything else (:mod:`evalkit.record.seal`). ``sealed=False``:
        without the seal (for a caller that completes the record first, then seals it).
        """
        body = {
            "schema_version": SCHEMA_VERSION,
            "record_kind": RECORD_KIND,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "standard_version": STANDARD_VERSION,
            "rubric_version": self.rubric_version,
            "provenance": self.provenance.to_dict(),
            "model": self.model.to_dict(),
            "harness": self.harness.to_dict(),
            "kpis": self.kpis.to_dict(),
            "dimensions": [d.to_dict() for d in self.dimensions],
            "handle": self.handle,
            "anonymized": self.anonymized,
            "timestamp": self.timestamp,
        }
        return seal_record(body) if sealed else body
