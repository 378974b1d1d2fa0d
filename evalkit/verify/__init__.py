"""Offline re-verify of one record or a whole journal, with every difference classified."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.verify.checks import (
        judge_contract,
        run_input_checks,
        version_check,
    )
    from evalkit.verify.diff import (
        DEFAULTED_KEYS,
        DriftKind,
        FieldDrift,
        broken_seal,
        diff_records,
        duplicate_keys,
        evidence_tokens,
        same_json,
    )
    from evalkit.verify.rescore import (
        find_record,
        verify_journal,
        verify_record,
    )
    from evalkit.verify.result import (
        CLAIMS,
        EntryOutcome,
        JournalEntry,
        JournalVerification,
        VerifyOutcome,
        VerifyResult,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "judge_contract": "evalkit.verify.checks",
    "run_input_checks": "evalkit.verify.checks",
    "version_check": "evalkit.verify.checks",
    "DEFAULTED_KEYS": "evalkit.verify.diff",
    "DriftKind": "evalkit.verify.diff",
    "FieldDrift": "evalkit.verify.diff",
    "broken_seal": "evalkit.verify.diff",
    "diff_records": "evalkit.verify.diff",
    "duplicate_keys": "evalkit.verify.diff",
    "evidence_tokens": "evalkit.verify.diff",
    "same_json": "evalkit.verify.diff",
    "find_record": "evalkit.verify.rescore",
    "verify_journal": "evalkit.verify.rescore",
    "verify_record": "evalkit.verify.rescore",
    "CLAIMS": "evalkit.verify.result",
    "EntryOutcome": "evalkit.verify.result",
    "JournalEntry": "evalkit.verify.result",
    "JournalVerification": "evalkit.verify.result",
    "VerifyOutcome": "evalkit.verify.result",
    "VerifyResult": "evalkit.verify.result",
}

__all__ = [
    "CLAIMS",
    "DEFAULTED_KEYS",
    "DriftKind",
    "EntryOutcome",
    "FieldDrift",
    "JournalEntry",
    "JournalVerification",
    "VerifyOutcome",
    "VerifyResult",
    "broken_seal",
    "diff_records",
    "duplicate_keys",
    "evidence_tokens",
    "find_record",
    "judge_contract",
    "run_input_checks",
    "same_json",
    "verify_journal",
    "verify_record",
    "version_check",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
