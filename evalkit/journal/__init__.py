"""The ``eval.jsonl`` journal: read, append, a whole ledger in one batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.journal.batch import (
        JournalingResult,
        deterministic_rows,
        journal_ledger,
    )
    from evalkit.journal.file import (
        JOURNAL_NAME,
        JournalAppender,
        JournalIsADirectoryError,
        JournalNotFoundError,
        JournalNotRegularError,
        JournalWriteError,
        append,
        append_many,
        dumps_record,
        journal_os_error,
    )
    from evalkit.journal.reader import (
        MAX_RECORD_DEPTH,
        DiagnosticKind,
        JournalDiagnostic,
        JournalRead,
        latest_inputs,
        latest_records,
        read,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "JournalingResult": "evalkit.journal.batch",
    "deterministic_rows": "evalkit.journal.batch",
    "journal_ledger": "evalkit.journal.batch",
    "JOURNAL_NAME": "evalkit.journal.file",
    "JournalAppender": "evalkit.journal.file",
    "JournalIsADirectoryError": "evalkit.journal.file",
    "JournalNotFoundError": "evalkit.journal.file",
    "JournalNotRegularError": "evalkit.journal.file",
    "JournalWriteError": "evalkit.journal.file",
    "append": "evalkit.journal.file",
    "append_many": "evalkit.journal.file",
    "dumps_record": "evalkit.journal.file",
    "journal_os_error": "evalkit.journal.file",
    "DiagnosticKind": "evalkit.journal.reader",
    "JournalDiagnostic": "evalkit.journal.reader",
    "JournalRead": "evalkit.journal.reader",
    "MAX_RECORD_DEPTH": "evalkit.journal.reader",
    "latest_inputs": "evalkit.journal.reader",
    "latest_records": "evalkit.journal.reader",
    "read": "evalkit.journal.reader",
}

__all__ = [
    "JOURNAL_NAME",
    "MAX_RECORD_DEPTH",
    "DiagnosticKind",
    "JournalAppender",
    "JournalDiagnostic",
    "JournalIsADirectoryError",
    "JournalNotFoundError",
    "JournalNotRegularError",
    "JournalRead",
    "JournalWriteError",
    "JournalingResult",
    "append",
    "append_many",
    "deterministic_rows",
    "dumps_record",
    "journal_ledger",
    "journal_os_error",
    "latest_inputs",
    "latest_records",
    "read",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
