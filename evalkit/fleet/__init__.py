"""A fleet of metrics directories scored as one, one task per directory, on Dask or serially."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.fleet.arrow import (
        decode_ledger_tables,
        encode_ledger_table,
    )
    from evalkit.fleet.paths import (
        resolve_fleet,
    )
    from evalkit.fleet.score import (
        FLEET_EXTRA,
        LOCAL_WORKER_CONFIG,
        SCHEDULER_TRUST,
        DirectoryOutcome,
        FleetFailure,
        FleetFailureWarning,
        FleetSummary,
        fleet_client,
        fleet_summary,
        run_fleet,
        score_fleet,
    )
    from evalkit.fleet.tasks import (
        DIAGNOSTICS_KEPT,
        JournaledDirectory,
        Scored,
        journal_directory,
        score_directory,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "decode_ledger_tables": "evalkit.fleet.arrow",
    "encode_ledger_table": "evalkit.fleet.arrow",
    "resolve_fleet": "evalkit.fleet.paths",
    "DirectoryOutcome": "evalkit.fleet.score",
    "FLEET_EXTRA": "evalkit.fleet.score",
    "FleetFailure": "evalkit.fleet.score",
    "FleetFailureWarning": "evalkit.fleet.score",
    "FleetSummary": "evalkit.fleet.score",
    "LOCAL_WORKER_CONFIG": "evalkit.fleet.score",
    "SCHEDULER_TRUST": "evalkit.fleet.score",
    "fleet_client": "evalkit.fleet.score",
    "fleet_summary": "evalkit.fleet.score",
    "run_fleet": "evalkit.fleet.score",
    "score_fleet": "evalkit.fleet.score",
    "DIAGNOSTICS_KEPT": "evalkit.fleet.tasks",
    "JournaledDirectory": "evalkit.fleet.tasks",
    "Scored": "evalkit.fleet.tasks",
    "journal_directory": "evalkit.fleet.tasks",
    "score_directory": "evalkit.fleet.tasks",
}

__all__ = [
    "DIAGNOSTICS_KEPT",
    "FLEET_EXTRA",
    "LOCAL_WORKER_CONFIG",
    "SCHEDULER_TRUST",
    "DirectoryOutcome",
    "FleetFailure",
    "FleetFailureWarning",
    "FleetSummary",
    "JournaledDirectory",
    "Scored",
    "decode_ledger_tables",
    "encode_ledger_table",
    "fleet_client",
    "fleet_summary",
    "journal_directory",
    "resolve_fleet",
    "run_fleet",
    "score_directory",
    "score_fleet",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
