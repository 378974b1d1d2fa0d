r"""Every difference between a stored record and the record the engine would write, classified.

:func:`diff_records` compares two records as JSON values, exactly: the same keys in the same
order, the same dimensions in the same order, every string code point for code point, every
number with its JSON type (``1`` and ``1.0`` are the same number spelled differently, which is
a difference of *form*), booleans and nulls as they are. Two values equal under this rule
serialize to the same bytes with the journal's serializer, so "no difference" here is "byte
for byte the same line" (whitespace between tokens and ``\u`` escapes, which a JSON reader
never sees, aside).

Each difference is a :class:`FieldDrift` with a :class:`DriftKind`, so a reader sees at once
whether a verdict changed (``verdict``), a score, a KPI, what the evidence says (``evidence-
values``: its numbers or the judge facts read from it) or only its wording, the order of
dimensions or keys, an identity or provenance field, the seal (``seal``: absent, or not
matching the stored content: changed after it was written) or the scored inputs' hash
(``inputs``), or an extra or missing key.

Standard library only besides :mod:`evalkit.judge.facts` (which attributes evidence facts) and
:mod:`evalkit.record.seal`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from evalkit.files.input import clip, dumps
from evalkit.judge.facts import compute_facts
from evalkit.record.seal import SEAL_FIELD, record_sha256

__all__ = [
    "DEFAULTED_KEYS",
    "DriftKind",
    "FieldDrift",
    "broken_seal",
    "diff_records",
    "duplicate_keys",
    "evidence_tokens",
    "same_json",
]

#: Top-level keys SPEC section 2 defines a default for (``schema_version`` 1, ``handle`` null,
#: ``anonymized`` = no handle): a record written without them (the reference engine's lines)
#: means the same as one that spells the default out, so their absence is no difference.
DEFAULTED_KEYS: tuple[str, ...] = ("schema_version", "handle", "anonymized")

# The value tokens evidence carries: numbers as JavaScript prints them, and the literal
# stand-ins for "no number" (null, n/a) and flags (true/false).
_VALUE_TOKEN = re.compile(
    r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\b(?:null|n/a|true|false|NaN|Infinity)\b"
)


class DriftKind(StrEnum):
    """What kind of field a difference is in (``verdict`` first: the one that matters most)."""

    VERDICT = "verdict"  # a dimension's status or method
    SCORE = "score"
    KPI = "kpi"
    EVIDENCE_VALUES = "evidence-values"  # the numbers or judge facts the evidence carries
    EVIDENCE_WORDING = "evidence-wording"  # the same values in other words
    ORDER = "order"  # of the dimensions, or of the keys of an object
    IDENTITY = "identity"  # run id, session, versions, provenance, model, harness, handle
    SEAL = "seal"  # provenance.record_sha256: absent, or the record changed after it was written
    INPUTS = "inputs"  # provenance.inputs_sha256: the scored ledger inputs differ (or unknown)
    EXTRA_KEY = "extra-key"  # a key the engine does not write
    MISSING_KEY = "missing-key"  # a key the engine writes
    PRESENCE = "presence"  # a dimension present on one side only
    JUDGE = "judge-contract"  # a judge dimension the judge writer could not have written
    DUPLICATE = "duplicate"  # another copy of the run id that differs; a key written twice
    CHAIN = "chain"  # the journal line does not follow the line before it (deleted, moved)
    FORM = "form"  # the same value spelled with another JSON type (1.0 for 1)


@dataclass(frozen=True)
class FieldDrift:
    """One field of one dimension (or ``record``/``kpis``) that differs after re-scoring."""

    dimension: str
    field: str
    stored: Any
    rescored: Any
    detail: str = ""
    kind: DriftKind = DriftKind.IDENTITY
    #: what ``stored`` and ``rescored`` are (two copies of a run id: their lines)
    labels: tuple[str, str] = ("stored", "re-scored")

    def line(self) -> str:
        """The difference as one line of ``verify``'s report."""
        left, right = self.labels
        text = (
            f"drift [{self.kind.value}]: dimension {self.dimension} field {self.field}: "
            f"{left} {_show(self.stored)}, {right} {_show(self.rescored)}"
        )
        return f"{text} ({self.detail})" if self.detail else text

    def to_dict(self) -> dict[str, Any]:
        """The difference, JSON-ready.

        A side where the key is absent is ``null`` with ``*_absent: true``; a non-finite number
        read from ``1e400`` is the string ``"Infinity"``.
        """
        return {
            "kind": self.kind.value,
            "dimension": self.dimension,
            "field": self.field,
            "stored": _json_safe(self.stored),
            "stored_absent": self.stored is _ABSENT,
            "rescored": _json_safe(self.rescored),
            "rescored_absent": self.rescored is _ABSENT,
            "detail": self.detail,
            "labels": list(self.labels),
        }


_ABSENT = object()


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    if isinstance(value, str):
        return repr(clip(value, 300))
    try:
        return clip(dumps(value), 300)
    except (TypeError, ValueError):  # a non-finite float read from 1e400: not JSON
        return repr(value)


def _json_safe(value: Any) -> Any:
    if value is _ABSENT:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def evidence_tokens(evidence: str) -> list[str]:
    """The value tokens (numbers, null, n/a, true, false) of an evidence string, in order."""
    return _VALUE_TOKEN.findall(evidence)


def same_json(a: Any, b: Any) -> bool:
    """Exact JSON equality: same types, same key order, same list order.

    ``bool`` is not ``int``, ``int`` is not ``float``.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_value_other_type(a: Any, b: Any) -> bool:
    """``1`` vs ``1.0`` (the same JSON number, spelled differently); never ``true`` vs ``1``."""
    numbers = (int, float)
    return (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def _value_drift(dimension: str, field: str, a: Any, b: Any, kind: DriftKind) -> list[FieldDrift]:
    if same_json(a, b):
        return []
    if _same_value_other_type(a, b):
        return [
            FieldDrift(dimension, field, a, b, "the same number spelled otherwise", DriftKind.FORM)
        ]
    return [FieldDrift(dimension, field, a, b, kind=kind)]


def _key_order(
    dimension: str,
    where: str,
    stored: Mapping[str, Any],
    expected: Mapping[str, Any],
    skip: set[str],
) -> list[FieldDrift]:
    common = [k for k in stored if k in expected and k not in skip]
    wanted = [k for k in expected if k in stored and k not in skip]
    if common == wanted:
        return []
    return [
        FieldDrift(
            dimension,
            f"{where}(key order)",
            common,
            wanted,
            "keys in another order",
            DriftKind.ORDER,
        )
    ]


def _diff_object(
    dimension: str,
    prefix: str,
    stored: Mapping[str, Any],
    expected: Mapping[str, Any],
    kind: DriftKind,
    skip_order: frozenset[str] = frozenset(),
) -> list[FieldDrift]:
    """Key by key: extra and missing keys, values (``kind``), then the key order."""
    out: list[FieldDrift] = []
    for key, value in stored.items():
        if key not in expected:
            out.append(
                FieldDrift(dimension, prefix + key, value, _ABSENT, kind=DriftKind.EXTRA_KEY)
            )
    for key, value in expected.items():
        if key not in stored:
            out.append(
                FieldDrift(dimension, prefix + key, _ABSENT, value, kind=DriftKind.MISSING_KEY)
            )
        elif isinstance(value, dict) and isinstance(stored[key], dict):
            out += _diff_object(dimension, f"{prefix}{key}.", stored[key], value, kind)
        else:
            out += _value_drift(dimension, prefix + key, stored[key], value, kind)
    out += _key_order(dimension, prefix, stored, expected, set(skip_order))
    return out


def _evidence_drifts(
    dim_id: str, stored_dims: Sequence[Any], stored_ev: Any, fresh_ev: str
) -> list[FieldDrift]:
    """Evidence differences: the values and judge facts it carries, else its wording."""
    if not isinstance(stored_ev, str):
        return [FieldDrift(dim_id, "evidence", stored_ev, fresh_ev, kind=DriftKind.EVIDENCE_VALUES)]
    out: list[FieldDrift] = []
    stored_tokens, fresh_tokens = evidence_tokens(stored_ev), evidence_tokens(fresh_ev)
    if stored_tokens != fresh_tokens:
        out.append(
            FieldDrift(
                dim_id,
                "evidence",
                stored_tokens,
                fresh_tokens,
                "the values the evidence carries differ",
                DriftKind.EVIDENCE_VALUES,
            )
        )
    # The judge facts read from this dimension: swap in the re-scored evidence alone and see
    # which facts move, so each moved fact is attributed to the dimension that moved it.
    before = compute_facts(list(stored_dims))
    swapped = [
        {**d, "evidence": fresh_ev} if isinstance(d, dict) and d.get("id") == dim_id else d
        for d in stored_dims
    ]
    after = compute_facts(swapped)
    for key, value in before.items():
        if after[key] != value:
            out.append(
                FieldDrift(
                    dim_id,
                    f"evidence (fact {key})",
                    value,
                    after[key],
                    kind=DriftKind.EVIDENCE_VALUES,
                )
            )
    if not out:
        out.append(
            FieldDrift(
                dim_id,
                "evidence",
                stored_ev,
                fresh_ev,
                "reworded: the same values, other words",
                DriftKind.EVIDENCE_WORDING,
            )
        )
    return out


_DIMENSION_KINDS = {
    "status": DriftKind.VERDICT,
    "method": DriftKind.VERDICT,
    "score": DriftKind.SCORE,
}


def _diff_dimension(
    dim: Mapping[str, Any], new: Mapping[str, Any], stored_dims: Sequence[Any]
) -> list[FieldDrift]:
    dim_id = str(new["id"])
    out: list[FieldDrift] = []
    for key, value in dim.items():
        if key not in new:
            out.append(FieldDrift(dim_id, key, value, _ABSENT, kind=DriftKind.EXTRA_KEY))
    for key, value in new.items():
        if key not in dim:
            out.append(FieldDrift(dim_id, key, _ABSENT, value, kind=DriftKind.MISSING_KEY))
        elif key == "evidence" and not same_json(dim[key], value):
            out += _evidence_drifts(dim_id, stored_dims, dim[key], value)
        else:
            out += _value_drift(
                dim_id, key, dim[key], value, _DIMENSION_KINDS.get(key, DriftKind.IDENTITY)
            )
    out += _key_order(dim_id, "", dim, new, set())
    return out


def _dimension_drifts(stored: Any, expected: Sequence[Mapping[str, Any]]) -> list[FieldDrift]:
    if not isinstance(stored, list):
        return [FieldDrift("record", "dimensions", stored, expected, kind=DriftKind.VERDICT)]
    by_id = {d.get("id"): d for d in stored if isinstance(d, dict)}
    wanted = {d["id"]: d for d in expected}
    out: list[FieldDrift] = []
    for dim_id in wanted:
        if dim_id not in by_id:
            out.append(
                FieldDrift(str(dim_id), "presence", "absent", "present", kind=DriftKind.PRESENCE)
            )
    for dim_id in by_id:
        if dim_id not in wanted:
            out.append(
                FieldDrift(str(dim_id), "presence", "present", "absent", kind=DriftKind.PRESENCE)
            )
    for dim_id, new in wanted.items():
        if dim_id in by_id:
            out += _diff_dimension(by_id[dim_id], new, stored)
    stored_order = [d.get("id") for d in stored if isinstance(d, dict) and d.get("id") in wanted]
    wanted_order = [i for i in wanted if i in by_id]
    if stored_order != wanted_order:
        out.append(
            FieldDrift(
                "record",
                "dimensions (order)",
                stored_order,
                wanted_order,
                "dimensions in another order",
                DriftKind.ORDER,
            )
        )
    return out


_TOP_LEVEL_KINDS = {"kpis": DriftKind.KPI}


def diff_records(stored: Mapping[str, Any], expected: Mapping[str, Any]) -> list[FieldDrift]:
    """Every difference between ``stored`` and ``expected``, classified.

    ``stored`` is a journal line as parsed, ``expected`` the record the engine would write for
    it; ``[]`` when they are the same bytes. The keys of :data:`DEFAULTED_KEYS` that ``stored``
    omits are compared as their defaults and left out of the key-order check.
    """
    filled = dict(stored)
    missing_defaults = frozenset(k for k in DEFAULTED_KEYS if k not in stored)
    if "schema_version" in missing_defaults:
        filled["schema_version"] = 1
    if "handle" in missing_defaults:
        filled["handle"] = None
    if "anonymized" in missing_defaults:
        filled["anonymized"] = filled.get("handle") is None
    out: list[FieldDrift] = []
    for key, value in filled.items():
        if key not in expected:
            out.append(FieldDrift("record", key, value, _ABSENT, kind=DriftKind.EXTRA_KEY))
    for key, value in expected.items():
        if key not in filled:
            out.append(FieldDrift("record", key, _ABSENT, value, kind=DriftKind.MISSING_KEY))
        elif key == "dimensions":
            out += _dimension_drifts(filled[key], value)
        elif isinstance(value, dict) and isinstance(filled[key], dict):
            kind = _TOP_LEVEL_KINDS.get(key, DriftKind.IDENTITY)
            dimension = "kpis" if key == "kpis" else "record"
            prefix = "" if key == "kpis" else f"{key}."
            out += _diff_object(dimension, prefix, filled[key], value, kind)
        else:
            out += _value_drift(
                "record", key, filled[key], value, _TOP_LEVEL_KINDS.get(key, DriftKind.IDENTITY)
            )
    out += _key_order("record", "", filled, expected, set(missing_defaults))
    return [h for h in (_hash_drift(d, stored) for d in out) if h is not None]


_INPUTS_FIELD = "provenance.inputs_sha256"


def _seal_detail(stored: Mapping[str, Any], drift: FieldDrift) -> str | None:
    if drift.stored is _ABSENT:
        return (
            "no seal: evalkit seals every record it writes; this one was written by another "
            "writer (the reference engine) or its seal was removed, so a changed run input "
            "(model, handle, harness, engine commit) cannot be detected"
        )
    actual = record_sha256(stored)
    if actual != drift.stored:
        return (
            "the record was changed after it was written: its content hashes to "
            f"{actual}, not to its seal (the other differences say what changed)"
        )
    # sealed as written: the seal differs only because the content does, which the other
    # differences show (a seal never differs alone when it matches its own content)
    return None


def broken_seal(stored: Mapping[str, Any]) -> FieldDrift | None:
    """The ``seal`` drift of a stored record whose content no longer matches its seal.

    Such a record was changed after it was written; None when it carries no seal or one that
    matches.
    """
    provenance = stored.get("provenance")
    if not isinstance(provenance, Mapping) or "record_sha256" not in provenance:
        return None
    seal, actual = provenance["record_sha256"], record_sha256(stored)
    if seal == actual:
        return None
    drift = FieldDrift("record", SEAL_FIELD, seal, actual, kind=DriftKind.SEAL)
    return FieldDrift(
        "record", SEAL_FIELD, seal, actual, _seal_detail(stored, drift) or "", DriftKind.SEAL
    )


def _hash_drift(drift: FieldDrift, stored: Mapping[str, Any]) -> FieldDrift | None:
    """The seal's and the inputs hash's differences, classified as such and explained.

    A stored seal that matches its own content is no difference of its own (None).
    """
    if drift.dimension != "record":
        return drift
    if drift.field == SEAL_FIELD:
        seal_detail = _seal_detail(stored, drift)
        if seal_detail is None:
            return None
        detail, kind = seal_detail, DriftKind.SEAL
    elif drift.field == _INPUTS_FIELD:
        kind = DriftKind.INPUTS
        detail = (
            "no hash of the scored inputs: written by another writer or an older evalkit"
            if drift.stored is _ABSENT
            else "the ledger inputs this score depends on (the session record and what was "
            "measured from the events for it) differ from those it was scored from"
        )
    else:
        return drift
    return FieldDrift(drift.dimension, drift.field, drift.stored, drift.rescored, detail, kind)


def duplicate_keys(raw: bytes | str) -> list[str]:
    """Keys written twice in one object of the JSON text ``raw``.

    Readers disagree on which copy wins: JavaScript and Python take the last, others the first.
    """
    found: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                found.append(key)
            seen.add(key)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return []
    return found


def iter_kinds(drifts: Sequence[FieldDrift]) -> Iterator[DriftKind]:
    """The kinds of ``drifts`` in :class:`DriftKind` order, each once."""
    present = {d.kind for d in drifts}
    return (kind for kind in DriftKind if kind in present)
