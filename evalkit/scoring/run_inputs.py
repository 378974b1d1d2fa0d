"""What a scoring run is told, validated once: :class:`RunInputs`.

The timestamp that names the run, the model (id and where the id came from), the handle and
the harness overrides are the *run inputs* of every record a run writes (no re-score can
re-derive them: ``docs/RECORDS.md``). They are checked once, where the run starts (the command
line, or the first library call), and the same frozen value goes down through
``score_session``, ``score_records``, ``journal_ledger`` and the fleet's tasks, so a batch
on many workers names every record with one timestamp and no floor checks them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evalkit.errors import ValidationError
from evalkit.record.contract import validate_timestamp
from evalkit.scoring.eval_record import Model, check_model

__all__ = ["HARNESS_OVERRIDES", "RunInputs", "now_iso"]

#: The harness fields a run may set (the others are measured from the ledger or the host).
HARNESS_OVERRIDES = ("plugin_version", "platform", "host_class", "hostname_hash")


def now_iso() -> str:
    """Now, as the writer's form ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class RunInputs:
    """The run inputs of every record of one run, already validated (:meth:`of` builds it).

    ``harness`` holds the overrides as sorted ``(field, value)`` pairs (frozen, hashable).
    """

    timestamp: str
    model: Model
    handle: str | None = None
    harness: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(
        cls,
        *,
        timestamp: str | None = None,
        model_id: str | None = None,
        model_source: str | None = None,
        handle: str | None = None,
        harness: Mapping[str, Any] | None = None,
    ) -> RunInputs:
        """Validate the run's arguments once; ``ValidationError`` names the one that is wrong.

        ``timestamp`` defaults to now (taken here, once for the whole run), the model to
        ``unknown`` / ``self-report``; ``handle`` is a non-empty string or None (anonymized);
        ``harness`` may set :data:`HARNESS_OVERRIDES` only.
        """
        ts = now_iso() if timestamp is None else validate_timestamp(timestamp)
        model = check_model(model_id, model_source)
        if handle is not None and (not isinstance(handle, str) or not handle):
            raise ValidationError(f"handle: must be a non-empty string or null, got {handle!r}")
        overrides = dict(harness or {})
        unknown = sorted(set(overrides) - set(HARNESS_OVERRIDES))
        if unknown:
            raise ValidationError(
                f"harness: unknown field(s) {', '.join(unknown)} (a run may set "
                f"{', '.join(HARNESS_OVERRIDES)})"
            )
        return cls(ts, model, handle, tuple(sorted(overrides.items())))

    @property
    def overrides(self) -> dict[str, Any]:
        """The harness overrides as a dict."""
        return dict(self.harness)
