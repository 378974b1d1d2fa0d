"""Which ``calibration_status`` a judge dimension may carry (low level: standard library only).

Until a calibration graduates, every judge dimension is ``"uncalibrated"`` (rubric-v1/v2 § Judge
Dimensions). A graduating calibration (``evalkit.calibration``) mints
``calibrated:<set>-v<N>:<hash8>``, bound to the gold set's sha256 and to the calibration
result's sha256 (``calibration_ref``, full 64 hex; ``hash8`` is its first 8). A record may carry
the minted status only together with a ``calibration_ref`` that a graduated calibration of the
same dimension holds. Two places hold graduated calibrations:

* **In process** (this module's ``_GRADUATED`` set): every graduating ``calibrate()`` records
  ``(dimension id, status, reference)`` here, and never a non-graduating one. So, in the same
  Python process, ``validate_record`` accepts a judge dimension carrying that status with that
  exact ``calibration_ref`` (any other, forged or prefix reference is refused). It is gone when
  the process ends.
* **Persistent**: the registry ``calibrations/registry.jsonl`` (or ``$EVALKIT_CALIBRATION_REGISTRY``)
  that ``evalkit.calibration.register`` (``evalkit calibrate --register``) appends to. Only this
  makes the status acceptable in other processes, e.g. when a journal holding such records is
  read later; register a calibration before journaling records that carry its status.

``is_accepted`` consults the persistent registry, and the in-process set only when asked
(``include_in_process=True``, as record validation does): "is this calibration registered?"
remains a question about the persistent registry.

This module is imported by record validation, so it must not import pandas, scipy or any
higher evalkit layer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import input_file_error

__all__ = [
    "ALLOWED_UNCALIBRATED",
    "MINTED_STATUS_PATTERN",
    "REGISTRY_ENV",
    "default_registry_path",
    "forget_in_process",
    "in_process_graduated",
    "is_accepted",
    "is_minted",
    "mint_status",
    "read_registry",
    "remember_graduated",
]

#: Statuses every judge dimension may carry without any registered calibration.
ALLOWED_UNCALIBRATED: frozenset[str] = frozenset({"uncalibrated"})

#: ``calibrated:<gold set>-v<N>:<first 8 hex of calibration_ref>``
MINTED_STATUS_PATTERN = re.compile(
    r"^calibrated:(?P<set>[a-z0-9][a-z0-9._-]*)-v(?P<version>[1-9][0-9]*):(?P<hash8>[0-9a-f]{8})$"
)
_REF_PATTERN = re.compile(r"^[0-9a-f]{64}$")

#: Environment variable naming another registry file (tests, other checkouts).
REGISTRY_ENV = "EVALKIT_CALIBRATION_REGISTRY"

_REPO_ROOT = Path(__file__).resolve().parents[1]

Registry = str | os.PathLike[str] | Iterable[Mapping[str, Any]] | None


def default_registry_path() -> Path:
    """``$EVALKIT_CALIBRATION_REGISTRY`` if set, else ``<repo>/calibrations/registry.jsonl``."""
    env = os.environ.get(REGISTRY_ENV)
    return Path(env) if env else _REPO_ROOT / "calibrations" / "registry.jsonl"


def mint_status(gold_tag: str, calibration_ref: str) -> str:
    """The status a graduated calibration carries: ``calibrated:<gold_tag>:<ref[:8]>``."""
    if not _REF_PATTERN.match(calibration_ref):
        raise EvalkitError(
            f"calibration_ref must be 64 lower-case hex digits, got {calibration_ref!r}"
        )
    status = f"calibrated:{gold_tag}:{calibration_ref[:8]}"
    if not MINTED_STATUS_PATTERN.match(status):
        raise EvalkitError(f"gold tag {gold_tag!r} does not form a valid status ({status!r})")
    return status


def is_minted(status: object) -> bool:
    """True when ``status`` has the shape of a minted calibration status."""
    return isinstance(status, str) and MINTED_STATUS_PATTERN.match(status) is not None


# (dimension_id, calibration_status, calibration_ref) of every graduating calibrate() run in
# this process; see the module docstring.
_GRADUATED: set[tuple[str, str, str]] = set()


def _well_formed(status: object, reference: object) -> bool:
    """A minted status and a full 64-hex reference whose first 8 hex are the status's hash8."""
    if not is_minted(status) or not isinstance(reference, str) or not _REF_PATTERN.match(reference):
        return False
    assert isinstance(status, str)
    return status.endswith(":" + reference[:8])


def remember_graduated(dimension_id: str, status: str, reference: str) -> None:
    """Record a graduated calibration for this process (``calibrate()`` calls it on graduation).

    Raises ``EvalkitError`` (a ``ValueError``) unless ``status`` is a minted status bound to
    ``reference``. It is not persisted: use ``evalkit.calibration.register`` for that.
    """
    if not isinstance(dimension_id, str) or not dimension_id:
        raise EvalkitError(f"dimension_id must be a non-empty string, got {dimension_id!r}")
    if not _well_formed(status, reference):
        raise EvalkitError(
            f"{status!r} with calibration_ref {reference!r} is not a minted status bound to "
            "its reference"
        )
    _GRADUATED.add((dimension_id, status, reference))


def in_process_graduated() -> frozenset[tuple[str, str, str]]:
    """The ``(dimension_id, calibration_status, calibration_ref)`` recorded in this process."""
    return frozenset(_GRADUATED)


def forget_in_process() -> None:
    """Clear the in-process graduated calibrations (the persistent registry is untouched)."""
    _GRADUATED.clear()


def read_registry(registry: Registry = None) -> list[dict[str, Any]]:
    """Registry entries from a path (JSON lines), an iterable of dicts, or the default file.

    A missing file is an empty registry. Lines that are not JSON objects are skipped: a damaged
    line can never make a status acceptable. A path that is a directory or cannot be read
    raises an ``EvalkitError`` that is also the matching ``OSError`` subclass, naming the path
    (and ``$EVALKIT_CALIBRATION_REGISTRY`` when that variable named it).
    """
    if registry is not None and not isinstance(registry, str | os.PathLike):
        return [dict(e) for e in registry if isinstance(e, Mapping)]
    path = Path(registry) if registry is not None else default_registry_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        from_env = registry is None and os.environ.get(REGISTRY_ENV)
        hint = f" (named by ${REGISTRY_ENV})" if from_env else ""
        raise input_file_error(exc, "calibration registry", path, hint) from exc
    entries = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            entries.append(obj)
    return entries


def is_accepted(
    dimension_id: str,
    status: object,
    reference: object,
    *,
    registry: Registry = None,
    include_in_process: bool = False,
) -> bool:
    """May a judge dimension ``dimension_id`` carry ``status`` with ``calibration_ref=reference``?

    ``"uncalibrated"`` always. A minted ``calibrated:<set>-v<N>:<hash8>`` only when
    ``reference`` is the full 64-hex calibration_ref whose first 8 hex are ``hash8`` and a
    graduated calibration for this dimension holds exactly this status and reference: an entry
    of the persistent ``registry`` or, with ``include_in_process=True``, a graduating
    ``calibrate()`` run earlier in this process (module docstring). Anything else is refused.
    """
    if status in ALLOWED_UNCALIBRATED:
        return True
    if not _well_formed(status, reference):
        return False
    if include_in_process and (dimension_id, status, reference) in _GRADUATED:
        return True
    return any(
        e.get("dimension_id") == dimension_id
        and e.get("calibration_status") == status
        and e.get("calibration_ref") == reference
        and e.get("graduated") is True
        for e in read_registry(registry)
    )
