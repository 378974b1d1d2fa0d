"""A judge at record time, as the scoring and journal layers see it: a protocol and its identity.

The engine (:func:`evalkit.scoring.engine.score_session`, ``score_records``) and the batch
journal sit below the judge layer, so they take a judge through :class:`RecordJudge`, defined
here and implemented by :class:`evalkit.judge.record_judge.ModelRecordJudge`; nothing below
``judge/`` imports it.

A judge dimension a judge writes carries its judge (:data:`JUDGE_KEY`): the spec, the model id
the API reported, the prompt template's sha256, the parameters that change answers, K and how K
calls became one verdict (:data:`AGGREGATION`), the run log (relative to the journal) and the
sha256 of every run-log line used. :func:`judge_identity` is the part a calibration is bound to
and :func:`identity_sha256` its hash; the rest says where the verdict can be re-derived from.
Standard library only. The rule and its reasons: docs/JUDGES.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

__all__ = [
    "AGGREGATION",
    "IDENTITY_KEYS",
    "JUDGE_KEY",
    "Judging",
    "RecordJudge",
    "identity_sha256",
    "judge_identity",
]

#: The key of a judge dimension that names its judge.
JUDGE_KEY = "judge"
#: How K calls become one verdict: the label of the first call (in repeat order) that gave one.
#: The locked model-judge rule calibrates the agreement of every labelled call with gold ("a
#: record is labelled by one call"), so one call, never a K-call majority, is what it vouches for.
AGGREGATION = "first-labelled-call"
#: The fields of a judge block that make up the judge's identity (what a calibration binds).
IDENTITY_KEYS = ("spec", "model", "prompt_template_sha256", "params", "repeats", "aggregation")


def judge_identity(block: Any) -> dict[str, Any] | None:
    """The identity fields of a judge block (:data:`IDENTITY_KEYS`), or None when it is none.

    A block without every identity field, or whose spec, reported model or prompt template is
    unknown (calls that reported several models, say), is no identity: it matches no
    calibration, and no calibration can be earned by it.
    """
    if not isinstance(block, Mapping) or any(key not in block for key in IDENTITY_KEYS):
        return None
    identity = {key: block[key] for key in IDENTITY_KEYS}
    if not all(isinstance(identity[k], str) for k in ("spec", "model", "prompt_template_sha256")):
        return None
    return identity


def identity_sha256(identity: Mapping[str, Any] | None) -> str | None:
    """The sha256 of an identity's canonical JSON (sorted keys, compact), or None."""
    if identity is None:
        return None
    try:
        text = json.dumps(
            dict(identity), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
            allow_nan=False,
        )  # fmt: skip
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("ascii")).hexdigest()


#: What :meth:`RecordJudge.submit_records` returns: call it for the batch's judge dimensions
#: (per record, None for one held back), once its calls have ended.
Judging = Callable[[], list[list[dict[str, Any]] | None]]


class RecordJudge(Protocol):
    """A judge that adds judge dimensions to records while they are written.

    ``judge_records`` receives unsealed records (the engine's ``to_dict(sealed=False)``) and
    returns, per record, its judge dimensions (empty when the judge adds none), or ``None`` for
    a record whose calls did not all get an answer: that record is held back (not written), so
    a rerun asks again. ``batch_size`` is how many records it wants at once (it runs their
    calls concurrently). ``submit_records`` starts a batch and returns what to call for its
    result, so the next batch can start before this one's records are written (collected in
    the order submitted). ``already_judged`` says whether a stored record carries this judge's
    dimensions, so an incremental batch skips it only then.
    """

    batch_size: int

    def judge_records(
        self, records: Sequence[Mapping[str, Any]]
    ) -> list[list[dict[str, Any]] | None]:
        """The judge dimensions of each record, or None for a record held back."""
        ...

    def submit_records(self, records: Sequence[Mapping[str, Any]]) -> Judging:
        """Start judging ``records``; calling the result gives :meth:`judge_records`'s."""
        ...

    def already_judged(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` carries judge dimensions of this judge (same identity)."""
        ...
