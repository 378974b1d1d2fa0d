r"""A record's seal: ``provenance.record_sha256``, the sha256 of everything else in it.

evalkit seals every record it writes (the engine's :meth:`~evalkit.scoring.eval_record.EvalRecord.
to_dict`, and the journal's writer over the exact line it appends). A record changed after it
was written no longer matches its seal, so record validation refuses it and ``verify`` reports
it, including a change to a field no re-score can re-derive (the run inputs: model, handle,
harness, engine commit, timestamp).

**What it is not.** The seal is a content hash anyone can recompute offline, by design; it is
not a signature. It detects every edit that does not also recompute the seal. Whoever edits a
record *and* recomputes the seal (with this module or the recipe below) produces a record that
passes; only a signature with a key the editor lacks, or a copy of the journal held elsewhere,
could catch that.

**The canonical form**, so that anyone can recompute a seal offline: the record as a JSON value
without the key ``provenance.record_sha256`` (every other key kept, ``provenance`` too), written
with keys sorted by code point at every level, compact separators (``,`` and ``:``, no
whitespace), non-ASCII characters as themselves in UTF-8, a lone surrogate (legal in a JSON
string, not in UTF-8) as the escape ``\udXXX``, numbers as Python's ``json`` module writes them
(``1``, ``0.5``, ``1e-07``), and no NaN or Infinity (a record holding one has no seal). In
Python, for a record without lone surrogates::

    body = json.dumps(rec_without_seal, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False).encode("utf-8")
    seal = hashlib.sha256(body).hexdigest()

The seal is computed last: it covers every other field, ``provenance.inputs_sha256`` included.
Records of the reference engine carry no seal; they stay valid, and ``verify`` says that their
run inputs cannot be checked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from evalkit.errors import ValidationError
from evalkit.files.input import canonical_bytes, dumps

__all__ = [
    "SEAL_FIELD",
    "SealMismatchError",
    "canonical_json",
    "check_seal",
    "record_sha256",
    "seal_record",
    "seal_with_canonical",
    "without_seal",
]

#: Where the seal lives: ``provenance.record_sha256``.
SEAL_FIELD = "provenance.record_sha256"
_KEY = "record_sha256"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class SealMismatchError(ValidationError):
    """A sealed record whose content no longer matches its seal: changed after it was written."""


def without_seal(record: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``record`` without ``provenance.record_sha256``.

    ``provenance`` itself is copied when it held the seal; nothing else is.
    """
    out = dict(record)
    provenance = out.get("provenance")
    if isinstance(provenance, Mapping) and _KEY in provenance:
        out["provenance"] = {k: v for k, v in provenance.items() if k != _KEY}
    return out


def canonical_json(value: Any) -> str:
    """``value`` in the canonical form of the module docstring.

    ``ValueError``/``TypeError`` for what JSON cannot hold: NaN, Infinity, a non-JSON type.
    """
    return dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def record_sha256(record: Mapping[str, Any], *, finite: bool = False) -> str | None:
    """The seal ``record`` should carry, or None when it cannot be sealed.

    It cannot when it holds a value JSON cannot hold or a key that is not a string.
    ``finite``: the record is a value orjson parsed (:func:`evalkit.files.input.
    parse_json_line`), so it holds no NaN or infinity and the canonical form may be written
    by orjson without reading it back.
    """
    body = _canonical_or_none(without_seal(record), finite)
    return None if body is None else hashlib.sha256(body).hexdigest()


def _canonical_or_none(value: Any, finite: bool) -> bytes | None:
    """The canonical form (module docstring) of ``value``, or None when it cannot be sealed.

    :func:`evalkit.files.input.canonical_bytes`, by orjson where it writes the same bytes.
    """
    try:
        return canonical_bytes(value, finite=finite)
    except (TypeError, ValueError, RecursionError):
        return None


def seal_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``record`` carrying its seal as the last key of ``provenance``.

    Any seal it carried is replaced. A record that cannot be sealed (no ``provenance`` object, a
    value JSON cannot hold) is returned unsealed, for validation to name what is wrong with it.
    """
    return seal_with_canonical(record)[0]


def seal_with_canonical(record: Mapping[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """:func:`seal_record`, with the canonical bytes the seal hashes (None: left unsealed).

    For a writer that encodes the sealed record once more (the journal's line): those bytes
    tell :func:`evalkit.files.input.compact_bytes` whether orjson may write it.
    """
    out = without_seal(record)
    provenance = out.get("provenance")
    if not isinstance(provenance, Mapping) or (body := _canonical_or_none(out, False)) is None:
        return out, None
    out["provenance"] = {**provenance, _KEY: hashlib.sha256(body).hexdigest()}
    return out, body


def check_seal(record: Mapping[str, Any], *, finite: bool = False) -> None:
    """Refuse a seal that is not one, or that ``record``'s content no longer matches.

    No seal at all is fine (records of the reference engine carry none). ``finite`` as for
    :func:`record_sha256`. Raises
    ``ValidationError`` naming ``provenance.record_sha256`` for a seal that is not 64
    lowercase hex, and :class:`SealMismatchError` when the content does not hash to it.
    """
    provenance = record.get("provenance")
    if not isinstance(provenance, Mapping) or _KEY not in provenance:
        return
    stored = provenance[_KEY]
    if not isinstance(stored, str) or not _SHA256.fullmatch(stored):
        raise ValidationError(
            f"{SEAL_FIELD}: must be the 64 lowercase hex sha256 of the record's canonical "
            f"JSON, got {stored!r}"
        )
    actual = record_sha256(record, finite=finite)
    if actual != stored:
        raise SealMismatchError(
            f"{SEAL_FIELD}: the record was changed after it was written: its content "
            f"{'cannot be sealed' if actual is None else f'hashes to {actual}'}, its seal "
            f"says {stored}"
        )
