"""evalkit: score agentic coding sessions against pre-registered rubrics, honestly.

The public API is listed in ``__all__``. Names are imported lazily so that ``import evalkit``
stays cheap (the scoring core needs only the standard library; pandas, scipy and the notebook
stack load only when a function that needs them is first used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes
from evalkit._version import __version__
from evalkit.errors import (
    DegenerateDataWarning,
    EvalkitError,
    SessionResolutionError,
    ValidationError,
    VersionMismatchError,
)

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.fleet.score import score_fleet
    from evalkit.journal.batch import journal_ledger
    from evalkit.judge.facts import compute_facts
    from evalkit.record.contract import normalize_record, validate_record
    from evalkit.resolve import Resolution, resolve_session
    from evalkit.scoring.engine import score_ledger, score_records, score_session
    from evalkit.scoring.eval_record import EvalRecord
    from evalkit.verify.rescore import verify_journal, verify_record


# public name -> module that defines it
_LAZY: dict[str, str] = {
    "Resolution": "evalkit.resolve",
    "resolve_session": "evalkit.resolve",
    "EvalRecord": "evalkit.scoring.eval_record",
    "score_session": "evalkit.scoring.engine",
    "score_records": "evalkit.scoring.engine",
    "score_ledger": "evalkit.scoring.engine",
    "validate_record": "evalkit.record.contract",
    "normalize_record": "evalkit.record.contract",
    "compute_facts": "evalkit.judge.facts",
    "score_fleet": "evalkit.fleet.score",
    "journal_ledger": "evalkit.journal.batch",
    "verify_journal": "evalkit.verify.rescore",
    "verify_record": "evalkit.verify.rescore",
}

__all__ = [
    "DegenerateDataWarning",
    "EvalRecord",
    "EvalkitError",
    "Resolution",
    "SessionResolutionError",
    "ValidationError",
    "VersionMismatchError",
    "__version__",
    "compute_facts",
    "journal_ledger",
    "normalize_record",
    "resolve_session",
    "score_fleet",
    "score_ledger",
    "score_records",
    "score_session",
    "validate_record",
    "verify_journal",
    "verify_record",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
