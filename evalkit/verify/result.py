"""What a re-verify found, with the exit codes of SPEC section 3.

One record (:class:`VerifyResult`) or a whole journal (:class:`JournalVerification`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from evalkit.display import ROWS_SHOWN, Readable
from evalkit.verify.diff import DriftKind, FieldDrift, iter_kinds

__all__ = [
    "CLAIMS",
    "EntryOutcome",
    "JournalEntry",
    "JournalVerification",
    "VerifyOutcome",
    "VerifyResult",
]

#: Record fields that are run inputs: passed back to the engine, checked for form and
#: consistency, never re-derived; a change to one is caught by the record's seal unless the
#: seal was recomputed too (see :mod:`evalkit.verify.rescore`).
CLAIMS: tuple[str, ...] = (
    "timestamp",
    "model.id",
    "model.source",
    "handle",
    "harness.plugin_version",
    "harness.platform",
    "harness.hostname_hash",
    "provenance.engine_commit",
)


class VerifyOutcome(StrEnum):
    """The outcomes of a re-verify, with their exit codes.

    ``judge-log-missing``: nothing differs, but a judge dimension's run log is missing, so its
    verdict could not be re-derived: never an agreement (exit 1).
    """

    AGREEMENT = "agreement"
    DRIFT = "drift"
    VERSION_MISMATCH = "version-mismatch"
    JUDGE_LOG_MISSING = "judge-log-missing"

    @property
    def exit_code(self) -> int:
        """The outcome's exit code (SPEC section 3; docs/CLI.md)."""
        return {"agreement": 0, "drift": 1, "version-mismatch": 3, "judge-log-missing": 1}[
            self.value
        ]


@dataclass(frozen=True, repr=False)
class VerifyResult(Readable):
    """What ``verify_record`` found. ``exit_code`` follows SPEC section 3."""

    run_id: str
    outcome: VerifyOutcome
    rubric_version: str
    drifts: tuple[FieldDrift, ...] = ()
    mismatch: str | None = None
    stored_sha256: str | None = None
    current_sha256: str | None = None
    verified_dimensions: tuple[str, ...] = ()
    unverified_dimensions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    claims: tuple[str, ...] = CLAIMS

    @property
    def exit_code(self) -> int:
        """The outcome's exit code (SPEC section 3)."""
        return self.outcome.exit_code

    @property
    def ok(self) -> bool:
        """Whether the stored record and the re-score agree."""
        return self.outcome is VerifyOutcome.AGREEMENT

    @property
    def wording(self) -> tuple[FieldDrift, ...]:
        """The evidence differences that are wording only (still drift)."""
        return tuple(d for d in self.drifts if d.kind is DriftKind.EVIDENCE_WORDING)

    @property
    def verdicts_changed(self) -> tuple[str, ...]:
        """Dimensions whose verdict differs, or that are present on one side only.

        A verdict is a status and a method.
        """
        kinds = (DriftKind.VERDICT, DriftKind.PRESENCE)
        return tuple(dict.fromkeys(d.dimension for d in self.drifts if d.kind in kinds))

    def headline(self) -> str:
        """One line: the outcome, and for a drift whether any verdict changed."""
        if self.outcome is VerifyOutcome.VERSION_MISMATCH:
            return f"version mismatch: {self.run_id}: {self.mismatch}"
        if self.outcome is VerifyOutcome.JUDGE_LOG_MISSING:
            return (
                f"judge log missing: {self.run_id}: a judge dimension's run log is missing, so "
                "its verdict could not be re-derived (not an agreement; see the notes)"
            )
        if self.outcome is VerifyOutcome.AGREEMENT:
            return (
                f"agreement: {self.run_id}: the stored record is what the engine writes, byte "
                f"for byte ({len(self.verified_dimensions)} deterministic dimension(s) "
                f"re-scored under {self.rubric_version})"
            )
        kinds = ", ".join(kind.value for kind in iter_kinds(self.drifts))
        changed = self.verdicts_changed
        verdicts = f"VERDICT CHANGED: {', '.join(changed)}" if changed else "no verdict changed"
        return f"drift: {self.run_id}: {len(self.drifts)} difference(s) [{kinds}]; {verdicts}"

    def _headline(self) -> str:
        return self.headline()

    def _rows(self) -> list[tuple[str, Any]]:
        return [("detail", line) for line in self.lines()[1:]]

    def lines(self) -> list[str]:
        """Human-readable report.

        The headline, one line per difference, then what was not re-derived.
        """
        out = [self.headline()]
        out.extend(d.line() for d in self.drifts)
        if self.unverified_dimensions:
            out.append(
                "judge dimensions (advisory; re-derived from their run log, or checked against "
                "the judge contract when they name none): " + ", ".join(self.unverified_dimensions)
            )
        if self.outcome is not VerifyOutcome.VERSION_MISMATCH:
            out.append(
                "run inputs taken from the record, not re-derivable (checked for form and "
                "consistency, and bound by its seal): " + ", ".join(self.claims)
            )
        out.extend(f"note: {note}" for note in self.notes)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The result, JSON-ready (``verify --json``)."""
        return {
            "run_id": self.run_id,
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "rubric_version": self.rubric_version,
            "mismatch": self.mismatch,
            "stored_sha256": self.stored_sha256,
            "current_sha256": self.current_sha256,
            "verdicts_changed": list(self.verdicts_changed),
            "drifts": [d.to_dict() for d in self.drifts],
            "verified_dimensions": list(self.verified_dimensions),
            "unverified_dimensions": list(self.unverified_dimensions),
            "claims": list(self.claims),
            "notes": list(self.notes),
        }


class EntryOutcome(StrEnum):
    """One journal entry's outcome in ``verify --all``: a verify outcome, or why there is none.

    ``error``: the run id names no valid record or the session cannot be re-scored;
    ``unreadable``: a line that is no record and carries no run id.
    """

    AGREEMENT = "agreement"
    DRIFT = "drift"
    VERSION_MISMATCH = "version-mismatch"
    JUDGE_LOG_MISSING = "judge-log-missing"
    ERROR = "error"
    UNREADABLE = "unreadable"

    @property
    def exit_code(self) -> int:
        """The entry's exit code (SPEC section 3)."""
        return 3 if self is EntryOutcome.VERSION_MISMATCH else int(self is not self.AGREEMENT)


#: each verify outcome as an entry's (a lookup: ``verify --all`` asks for it per row and count)
_ENTRY_OUTCOME = {outcome: EntryOutcome(outcome.value) for outcome in VerifyOutcome}


@dataclass(frozen=True)
class JournalEntry:
    """One run id of the journal (or one unreadable line) as ``verify --all`` found it.

    ``result`` is what :func:`evalkit.verify.rescore.verify_record` returns for this run id, ``error``
    the message of what it raises; exactly one of them is set, except for an unreadable line
    (neither; ``error`` says why it is no record).
    """

    line: int
    run_id: str | None
    session_id: str | None
    result: VerifyResult | None = None
    error: str | None = None

    @property
    def outcome(self) -> EntryOutcome:
        """The verify outcome, else ``error`` (a run id) or ``unreadable`` (none)."""
        if self.result is not None:
            return _ENTRY_OUTCOME[self.result.outcome]
        return EntryOutcome.ERROR if self.run_id is not None else EntryOutcome.UNREADABLE

    @property
    def exit_code(self) -> int:
        """The entry's exit code (SPEC section 3)."""
        return self.outcome.exit_code

    def summary(self) -> str:
        """What differs, in one line.

        The drift kinds and changed verdicts, the mismatch, or the error.
        """
        if self.result is None:
            return self.error or ""
        result = self.result
        if result.outcome is VerifyOutcome.VERSION_MISMATCH:
            return result.mismatch or ""
        if result.outcome is VerifyOutcome.JUDGE_LOG_MISSING:
            return "; ".join(n for n in result.notes if "run log" in n)
        if result.outcome is VerifyOutcome.AGREEMENT:
            return ""
        kinds = ",".join(kind.value for kind in iter_kinds(result.drifts))
        changed = result.verdicts_changed
        verdicts = f"; verdict changed: {','.join(changed)}" if changed else ""
        return f"{len(result.drifts)} difference(s) [{kinds}]{verdicts}"

    def row(self) -> dict[str, Any]:
        """The table row (csv): line, run id, session, outcome, exit code, what differs."""
        return {
            "line": self.line,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "what_differs": self.summary(),
        }

    def to_dict(self) -> dict[str, Any]:
        """The row plus the full result (jsonl)."""
        return {
            **self.row(),
            "result": None if self.result is None else self.result.to_dict(),
            "error": self.error,
        }


@dataclass(frozen=True, repr=False)
class JournalVerification(Readable):
    """Every record of a journal re-verified in one pass over the ledger.

    ``exit_code``: 0 when every entry agrees, 3 when the only findings are version mismatches,
    else 1 (any drift, a run id that names no valid record or cannot be re-scored, an
    unreadable line).
    """

    journal: Path
    metrics_dir: Path
    entries: tuple[JournalEntry, ...]

    @property
    def exit_code(self) -> int:
        """The journal's exit code (the class docstring)."""
        codes = {e.exit_code for e in self.entries}
        if 1 in codes:
            return 1
        return 3 if 3 in codes else 0

    def counts(self) -> dict[str, int]:
        """Entries per outcome (every outcome listed, zeros included)."""
        return {o.value: sum(e.outcome is o for e in self.entries) for o in EntryOutcome}

    def _headline(self) -> str:
        counts = ", ".join(f"{n} {outcome}" for outcome, n in self.counts().items() if n)
        return f"verify --all {self.journal}: {counts or 'no entry'}; exit {self.exit_code}"

    def _rows(self) -> list[tuple[str, Any]]:
        found = [e for e in self.entries if e.outcome is not EntryOutcome.AGREEMENT]
        rows: list[tuple[str, Any]] = [
            (e.run_id or f"line {e.line}", f"{e.outcome.value}: {e.summary()}")
            for e in found[:ROWS_SHOWN]
        ]
        if len(found) > ROWS_SHOWN:
            rows.append(("...", f"and {len(found) - ROWS_SHOWN} more (.entries holds all)"))
        return rows
