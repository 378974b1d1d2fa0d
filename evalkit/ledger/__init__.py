"""Reading a metrics directory exactly as the reference engine does: files, lines, sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.ledger.files import (
        describe_sessions_file,
        ledger_role,
    )
    from evalkit.ledger.parse import (
        FAST_MAX_DEPTH,
        Diagnostic,
        Line,
        Parsed,
        decode_line,
        gc_paused,
        parse_data,
        parse_file,
    )
    from evalkit.ledger.reader import (
        ARCHIVE_DIR_NAME,
        ARCHIVE_NAME_RE,
        LEGACY_RING_MAX,
        ROTATION_EVENT,
        EventReading,
        EventSink,
        FileState,
        Gap,
        JsonlFile,
        Ledger,
        LedgerView,
        ReadCounts,
        get_number,
        get_path,
        get_str,
        iter_diagnostics,
        read_jsonl,
        read_ledger,
        read_metrics_dir,
        read_session_values,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "describe_sessions_file": "evalkit.ledger.files",
    "ledger_role": "evalkit.ledger.files",
    "Diagnostic": "evalkit.ledger.parse",
    "FAST_MAX_DEPTH": "evalkit.ledger.parse",
    "Line": "evalkit.ledger.parse",
    "Parsed": "evalkit.ledger.parse",
    "decode_line": "evalkit.ledger.parse",
    "gc_paused": "evalkit.ledger.parse",
    "parse_data": "evalkit.ledger.parse",
    "parse_file": "evalkit.ledger.parse",
    "ARCHIVE_DIR_NAME": "evalkit.ledger.reader",
    "ARCHIVE_NAME_RE": "evalkit.ledger.reader",
    "EventReading": "evalkit.ledger.reader",
    "EventSink": "evalkit.ledger.reader",
    "FileState": "evalkit.ledger.reader",
    "Gap": "evalkit.ledger.reader",
    "JsonlFile": "evalkit.ledger.reader",
    "LEGACY_RING_MAX": "evalkit.ledger.reader",
    "Ledger": "evalkit.ledger.reader",
    "LedgerView": "evalkit.ledger.reader",
    "ReadCounts": "evalkit.ledger.reader",
    "ROTATION_EVENT": "evalkit.ledger.reader",
    "get_number": "evalkit.ledger.reader",
    "get_path": "evalkit.ledger.reader",
    "get_str": "evalkit.ledger.reader",
    "iter_diagnostics": "evalkit.ledger.reader",
    "read_jsonl": "evalkit.ledger.reader",
    "read_ledger": "evalkit.ledger.reader",
    "read_metrics_dir": "evalkit.ledger.reader",
    "read_session_values": "evalkit.ledger.reader",
}

__all__ = [
    "ARCHIVE_DIR_NAME",
    "ARCHIVE_NAME_RE",
    "FAST_MAX_DEPTH",
    "LEGACY_RING_MAX",
    "ROTATION_EVENT",
    "Diagnostic",
    "EventReading",
    "EventSink",
    "FileState",
    "Gap",
    "JsonlFile",
    "Ledger",
    "LedgerView",
    "Line",
    "Parsed",
    "ReadCounts",
    "decode_line",
    "describe_sessions_file",
    "gc_paused",
    "get_number",
    "get_path",
    "get_str",
    "iter_diagnostics",
    "ledger_role",
    "parse_data",
    "parse_file",
    "read_jsonl",
    "read_ledger",
    "read_metrics_dir",
    "read_session_values",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
