"""Re-checking a calibration certificate offline, from the content it names.

:func:`verify_certificate`: the bytes hash to the certificate's name, the gold set and
decision rule in the repository hash to what it names and to what the lock holds, the labels
hash to their sha256, and re-scoring the labels against the gold set under the rule (same
level, resamples and seed) graduates and reproduces every figure. Anything else is refused
with the reason. An outcome is cached per process under the sha256 of everything it was
computed from, so repeated reads are cheap and an edited input is re-checked.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import prereg
from evalkit.errors import EvalkitError
from evalkit.files.hashing import sha256_hex
from evalkit.gold.sets import load as load_gold
from evalkit.gold.sets import sha256_file
from evalkit.provenance.repository import repo_root
from evalkit.record.calibration_status import (
    mint_status,
)

if TYPE_CHECKING:
    pass
from evalkit.calibration.certificate import (
    CertificateError,
    VerifiedCertificate,
    _Claim,
    _parse,
    certificate_dict,
    read_certificate_bytes,
)

__all__ = ["verify_certificate"]

#: fingerprint of everything a verification read -> its outcome (verified, or the refusal)
_CACHE: dict[str, VerifiedCertificate | str] = {}


# --------------------------------------------------------------------------- re-checking


def _fingerprint(ref: str, base: Path, claim: _Claim) -> str:
    """sha256 over everything a verification reads.

    The certificate, the gold version folder, the set's decision rules and the repository's
    lock.
    """
    h = hashlib.sha256(f"{ref}\0{base}\0".encode())
    vdir = base / claim.gold_path
    set_dir = vdir.parent
    files = sorted(vdir.iterdir()) if vdir.is_dir() else []
    files += [*sorted(set_dir.glob("DECISION_RULE*.json")), base / prereg.LOCK_NAME]
    for p in files:
        exists = p.exists() or p.is_symlink()
        digest = sha256_file(p, "certificate input") if exists else "absent"
        h.update(f"{p}\0{p.is_symlink()}\0{digest}\n".encode())
    return h.hexdigest()


def _rescore(obj: dict[str, Any], claim: _Claim, ref: str, base: Path) -> VerifiedCertificate:
    # deferred: re-scoring the labels needs the statistics stack (pandas, scipy), which a
    # journal of uncalibrated judges never loads; _calibrate also imports this module
    import pandas as pd

    from evalkit.calibration._calibrate import calibrate

    gs = load_gold(base / claim.gold_path)
    if gs.sha256 != claim.gold_sha256:
        raise EvalkitError(
            f"the gold set {claim.gold_path} in the repository (sha256 {gs.sha256[:12]}...) is "
            f"not the one it names ({claim.gold_sha256[:12]}...)"
        )
    if claim.judge_section["origin"] == "rules":
        _check_rule_judge(claim, gs)
    if claim.repeats:
        from evalkit.calibration.labels import CALL_COLUMNS, labels_from_frame

        frame = pd.DataFrame(claim.labels, columns=list(CALL_COLUMNS))
        labels: Any = labels_from_frame(frame, source="certificate labels", model_judge=True)
    else:
        labels = pd.DataFrame(claim.labels, columns=["item_id", "label"])
    result = calibrate(
        labels,
        gs,
        dimension_id=claim.dimension_id,
        judge=claim.judge,
        level=claim.level,
        n_resamples=claim.n_resamples,
        rng=claim.rng,
        decision_rule=base / claim.rule_path,
        lock=base / prereg.LOCK_NAME,
        root=base,
        judge_info=claim.judge_section,
    )
    if not result.mintable:
        raise EvalkitError(result.mint_reason)
    if not result.graduates:
        raise EvalkitError(
            f"its labels re-scored against {gs.tag} do not graduate ({result.graduation_reason})"
        )
    diff = _first_difference(obj, certificate_dict(result), "")
    if diff is not None:
        raise EvalkitError(f"re-scoring its labels does not reproduce it ({diff})")
    return VerifiedCertificate(
        ref,
        mint_status(gs.tag, ref),
        claim.dimension_id,
        result.judge,
        gs.tag,
        gs.sha256,
        None,
        identity=claim.judge_section["identity"],
        identity_sha256=claim.judge_section["identity_sha256"],
        origin=claim.judge_section["origin"],
        superseded_by=_superseded_by(gs.name, gs.version, base),
    )


def _check_rule_judge(claim: _Claim, gs: Any) -> None:
    """A certificate of origin ``rules`` holds the rule judge's labels and identity, as today."""
    from evalkit.calibration._inputs import rule_judge_info, rule_judge_labels

    if claim.repeats:
        raise EvalkitError("a rule judge's certificate holds one label per item, not repeats")
    today = rule_judge_labels(gs)
    expected = sorted(zip(today["item_id"], today["label"], strict=True))
    if sorted((i["item_id"], i["label"]) for i in claim.labels) != expected:
        raise EvalkitError(
            "its labels are not the rule judge's on this gold set (origin 'rules' is re-checked "
            "by recomputing them)"
        )
    if claim.judge_section["identity"] != rule_judge_info()["identity"]:
        raise EvalkitError("its judge identity is not the rule judge's as it runs today")


_VERSION_NAME = re.compile(r"^(?P<set>.+)/v(?P<n>[1-9][0-9]*)$")


def _superseded_by(name: str, version: int, base: Path) -> str | None:
    """``<set>-v<N>`` of the newest version of the set the lock holds, when newer; else None."""
    lock = prereg.read_lock(base / prereg.LOCK_NAME) or {}
    newest = version
    for entry in lock.get("entries") or []:
        match = _VERSION_NAME.match(str(entry.get("name"))) if isinstance(entry, dict) else None
        if entry.get("kind") == "gold" and match and match.group("set") == name:
            newest = max(newest, int(match.group("n")))
    return f"{name}-v{newest}" if newest > version else None


def _same_number(a: Any, b: Any) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _first_difference(a: Any, b: Any, where: str) -> str | None:
    """Where the stored and the re-scored certificate differ (floats to 1e-9), else None."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        for key in sorted(keys, key=str):
            if key not in a or key not in b:
                return f"{where}{key}: present in only one of them"
            diff = _first_difference(a[key], b[key], f"{where}{key}.")
            if diff is not None:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where.rstrip('.')}: {len(a)} entries, re-scored {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = _first_difference(x, y, f"{where}{i}.")
            if diff is not None:
                return diff
        return None
    numbers = (int, float)
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        same = _same_number(a, b)
    else:
        same = type(a) is type(b) and a == b
    return None if same else f"{where.rstrip('.')}: stored {a!r}, re-scored {b!r}"


def _read(source: str | os.PathLike[str] | bytes) -> tuple[bytes, str | None]:
    if isinstance(source, bytes):
        return source, None
    return read_certificate_bytes(source), Path(source).name


def verify_certificate(
    source: str | os.PathLike[str] | bytes, *, root: str | os.PathLike[str] | None = None
) -> VerifiedCertificate:
    """Re-check a certificate (a file, or its bytes) against the repository ``root``.

    ``root`` defaults to evalkit's own checkout, never to an environment variable. Returns the
    :class:`VerifiedCertificate`; raises :class:`CertificateError` naming the certificate and
    the reason when any check fails (see the module docstring).
    """
    base = repo_root(root)
    raw, name = _read(source)
    ref = sha256_hex(raw)
    shown = name or f"{ref}.json"
    try:
        if name is not None and name != f"{ref}.json":
            raise EvalkitError(f"its name is not the sha256 of its bytes ({ref}.json)")
        obj, claim = _parse(raw)
        key = _fingerprint(ref, base, claim)
        outcome = _CACHE.get(key)
        if outcome is None:
            try:
                with warnings.catch_warnings():  # the figures hold what they would say
                    warnings.simplefilter("ignore")
                    outcome = _rescore(obj, claim, ref, base)
            except EvalkitError as exc:
                outcome = str(exc)
            if _fingerprint(ref, base, claim) == key:  # nothing moved while it was checked
                _CACHE[key] = outcome
    except EvalkitError as exc:
        outcome = str(exc)
    except MemoryError:
        outcome = "cannot be re-checked: it ran out of memory (refused, fail closed)"
    except (ArithmeticError, LookupError, RecursionError, TypeError, ValueError) as exc:
        # a hostile certificate is refused, never a traceback: whatever it makes the re-check
        # trip over is the reason (fail closed)
        outcome = f"cannot be re-checked ({type(exc).__name__}: {exc})"
    if isinstance(outcome, str):
        raise CertificateError(f"calibration certificate {shown}: refused: {outcome}")
    path = None if isinstance(source, bytes) else Path(source)
    return dataclasses.replace(outcome, path=path)
