"""What a dimension module declares: its scorer for a rubric version, and its judge-facts reader.

A rubric version is a table (a tuple) of :class:`DimensionSpec`; the facts reader of a
dimension is the same whatever version scored it, because the judge reads stored records of
every version (rubric-v2 § "Cross-version reading").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalkit.record.dimension import Dimension
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import Reading, RecordView

__all__ = ["DimensionSpec", "FactsReader", "Scorer"]

Scorer = Callable[[ScoringContext], Dimension]


@dataclass(frozen=True)
class FactsReader:
    """A dimension's part of the judge facts.

    ``facts`` names the fact keys ``read`` may supply. ``read`` gets the whole record view (a
    reader may need another dimension's presence, and the third state); it returns a
    :class:`~evalkit.rubrics.dimensions.reading.Reading`, empty when its dimension is absent.
    ``events_unreadable``, when set, tells from this dimension's evidence that ``events.jsonl``
    was absent or empty (the rubric's third state, which the other readers then honour).
    """

    dimension: str
    facts: tuple[str, ...]
    read: Callable[[RecordView], Reading]
    events_unreadable: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class DimensionSpec:
    """One dimension as one rubric version scores it.

    ``templates`` are the evidence templates ``score`` can write (a test reads each back through
    its reader, and the frozen versions' are pinned byte for byte). ``event_derived`` marks
    evidence that comes from the events ledger: rubric-v2 appends its LEDGER INCOMPLETE note to
    those dimensions only.
    """

    id: str
    score: Scorer
    templates: tuple[Callable[..., str], ...]
    facts: FactsReader | None
    event_derived: bool
