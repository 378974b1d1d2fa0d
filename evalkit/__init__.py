"""evalkit: score agentic coding sessions against pre-registered rubrics, honestly.

The public API is listed in ``__all__``. Names are imported lazily so that ``import evalkit``
stays cheap (the scoring core needs only the standard library; pandas, scipy and the notebook
stack load only when a function that needs them is first used).
"""

from __future__ import annotations

from evalkit._lazy import lazy_attributes
from evalkit.errors import (
    DegenerateDataWarning,
    EvalkitError,
    SessionResolutionError,
    ValidationError,
    VersionMismatchError,
)

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "Resolution": "evalkit.resolve",
    "resolve_session": "evalkit.resolve",
    "EvalRecord": "evalkit.eval_record",
    "score_session": "evalkit.engine",
    "score_records": "evalkit.engine",
    "score_ledger": "evalkit.engine",
    "validate_record": "evalkit.record",
    "normalize_record": "evalkit.record",
    "compute_facts": "evalkit.facts",
    "journal_ledger": "evalkit.journaling",
    "verify_journal": "evalkit.verify",
    "verify_record": "evalkit.verify",
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
    "score_ledger",
    "score_records",
    "score_session",
    "validate_record",
    "verify_journal",
    "verify_record",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
