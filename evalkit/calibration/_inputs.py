"""What a calibration reads: the decision rule, a judge's labels, the rule judge's labels.

Every file is read through :mod:`evalkit.files.input`: regular files only (a FIFO or a device is
refused, never waited on), bounded, strict UTF-8 and JSON, each problem an ``EvalkitError``
naming the file and the line.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit import compute_facts
from evalkit.errors import EvalkitError
from evalkit.files.input import (
    JsonInputError,
    escape_surrogates,
    own_cap,
    parse_json,
    read_bytes,
    read_text,
)
from evalkit.gold.sets import LABELS, GoldSet, read_jsonl_numbered, sha256_hex
from evalkit.judge import apply_rules
from evalkit.provenance.repository import repo_root

__all__ = [
    "DECISION_RULE_NAME",
    "MODEL_JUDGE_RULE_NAME",
    "REPEAT_CONDITIONS",
    "RULE_JUDGE_NAME",
    "decision_rule_file",
    "judge_series",
    "load_decision_rule",
    "read_judge_labels",
    "repository_rule_file",
    "rule_judge_info",
    "rule_judge_labels",
]

DECISION_RULE_NAME = "DECISION_RULE.json"
#: The name the rule judge's calibration carries (command line, study pages, certificates).
RULE_JUDGE_NAME = "rule-judge (evalkit.judge.apply_rules)"
#: The rule a model judge's labels (a run log, or K > 1 repeats per item) are judged under.
MODEL_JUDGE_RULE_NAME = "DECISION_RULE-model-judge.json"
_MAX_RULE_BYTES = 1 << 20
#: Conditions a rule's ``graduate_if`` may hold; any other key is refused, never ignored.
_CONDITIONS = {
    "kappa_ci_low_at_least": float,
    "n_at_least": int,
    "missing_at_most": int,
    "repeat_kappa_ci_low_at_least": float,
    "failed_calls_share_at_most": float,
}
_REQUIRED_CONDITIONS = ("kappa_ci_low_at_least", "n_at_least", "missing_at_most")
#: Conditions only a calibration with repeats can evaluate.
REPEAT_CONDITIONS = ("repeat_kappa_ci_low_at_least", "failed_calls_share_at_most")


def decision_rule_file(
    gold: GoldSet,
    path: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    name: str = DECISION_RULE_NAME,
) -> Path:
    """Where the decision rule ``name`` of ``gold`` is read.

    ``path``, else the rule of that set name in the repository ``root`` (default: evalkit's
    own), whatever folder the version lies in: a copy never brings its own rule to graduate
    by. Only when the repository has no rule of that name is the one beside the version read
    (and a result under it is not pre-registered, :mod:`evalkit.calibration._lock`).
    """
    if path is not None:
        return Path(path)
    repo = repository_rule_file(gold, name, root)
    return repo if repo.exists() or repo.is_symlink() else gold.path.parent / name


def repository_rule_file(
    gold: GoldSet, name: str = DECISION_RULE_NAME, root: str | os.PathLike[str] | None = None
) -> Path:
    """``<root>/gold/<set name>/<name>``: the rule of ``gold``'s set name in the repository."""
    return repo_root(root) / "gold" / gold.name / name


def load_decision_rule(
    gold: GoldSet,
    path: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    bound_by_manifest: bool = True,
) -> dict[str, Any]:
    """The pre-registered decision rule of the gold set (``gold/<set>/DECISION_RULE.json``).

    Read from :func:`decision_rule_file`. When the version's manifest binds the rule's sha256,
    a different file is refused (``bound_by_manifest=False``: the repository's locked rule is
    read for a copied version whatever its own manifest names). The result carries ``sha256``
    and ``path`` (the file name) besides the rule's own fields.
    """
    p = decision_rule_file(gold, path, root=root)
    if not p.exists() and not p.is_symlink():
        raise EvalkitError(
            f"{p}: no pre-registered decision rule; a judge cannot graduate without one"
        )
    raw = read_bytes(p, "decision rule", max_bytes=own_cap(_MAX_RULE_BYTES))
    digest = sha256_hex(raw)
    bound = (gold.manifest.get("decision_rules") or {}).get(p.name) if bound_by_manifest else None
    if bound is not None and digest != bound:
        raise EvalkitError(
            f"{p}: not the decision rule {gold.tag} was frozen with (sha256 differs); a "
            "pre-registered rule is never edited — write a new rule file and mint a new version"
        )
    try:
        rule = parse_json(raw)
        g = rule["graduate_if"]
        for key in _REQUIRED_CONDITIONS:
            _CONDITIONS[key](g[key])
        unknown = sorted(set(g) - set(_CONDITIONS))
        if unknown:
            raise ValueError(f"unknown condition(s) {unknown} would be ignored; known: "
                             f"{sorted(_CONDITIONS)}")  # fmt: skip
        for key in set(g) & set(REPEAT_CONDITIONS):
            _CONDITIONS[key](g[key])
        float(rule["ci"]["level"])
    except (JsonInputError, KeyError, TypeError, ValueError) as exc:
        raise EvalkitError(f"{p}: not a valid decision rule ({exc})") from None
    rule["sha256"] = digest
    rule["path"] = p.name
    return rule


def read_judge_labels(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Judge labels from a ``.csv`` or JSON-lines file with columns ``item_id`` and ``label``.

    A missing file, a directory, a FIFO or a device, invalid UTF-8, a line nested too deeply,
    a malformed CSV or a lone surrogate in a JSON line's field is an ``EvalkitError`` naming the
    file (and the line where there is one).
    """
    p = Path(path)
    if p.suffix.lower() == ".csv":
        text = read_text(p, "judge labels file")
        try:
            df = pd.read_csv(
                io.StringIO(text), dtype={"item_id": str, "label": object}, keep_default_na=True
            )
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
            raise EvalkitError(
                f"judge labels file {str(p)!r}: not a readable CSV ({exc})"
            ) from None
    else:
        rows = read_jsonl_numbered(p, "judge labels file")
        for number, row in rows:
            _refuse_lone_surrogates(row, f"{p}:{number}")
        df = pd.DataFrame([row for _, row in rows])
    for col in ("item_id", "label"):
        if col not in df.columns:
            raise EvalkitError(f"{p}: column {col!r} missing")
    return df


def _refuse_lone_surrogates(row: dict[str, Any], where: str) -> None:
    """Refuse a field name or text value holding a lone surrogate (legal JSON, not text).

    A table column holds text; such a value could never match a gold item, and pandas' string
    columns cannot hold it at all.
    """
    for key, value in row.items():
        for text in (key, value):
            if isinstance(text, str) and escape_surrogates(text) != text:
                raise EvalkitError(
                    # repr writes a lone surrogate as its escape: printable, never raised on
                    f"{where}: field {key!r} holds a lone surrogate ({text[:80]!r}): "
                    "not text a labels table can hold"
                )


def rule_judge_info() -> dict[str, Any]:
    """The ``judge`` section of the rule judge's certificate: its identity, origin ``rules``.

    The identity is what ``score --judge rules`` writes into a record (one call per record,
    the prompt template it reads the facts from); a certificate of origin ``rules`` is
    re-checked by recomputing the labels (:mod:`evalkit.calibration.certificate_check`).
    """
    from evalkit.calibration.labels import judge_info
    from evalkit.judge.prompt import prompt_template_sha256
    from evalkit.judge.specs import RULES, RULES_MODEL
    from evalkit.record.judging import AGGREGATION

    identity = {
        "spec": RULES,
        "model": RULES_MODEL,
        "prompt_template_sha256": prompt_template_sha256(),
        "params": {"temperature": None, "max_tokens": None, "seed": None},
        "repeats": 1,
        "aggregation": AGGREGATION,
    }
    return judge_info(identity, "rules")


def rule_judge_labels(gold: GoldSet) -> pd.DataFrame:
    """The rule judge's labels: ``apply_rules(compute_facts(dimensions))`` for every gold item.

    Facts are recomputed from the dimensions with this evalkit (not read from the frozen
    snapshot), so the rule judge is calibrated as it runs today. The frame's
    ``attrs["judge_info"]`` is :func:`rule_judge_info` (what a certificate of it records).
    """
    rows = []
    for rec in gold.items[["item_id", "dimensions"]].to_dict("records"):
        v = apply_rules(compute_facts(rec["dimensions"]))
        status = getattr(v.status, "value", v.status)
        rows.append(
            {"item_id": rec["item_id"], "label": str(status), "rule": v.rule, "reason": v.reason}
        )
    frame = pd.DataFrame(rows)
    frame.attrs["judge_info"] = rule_judge_info()
    return frame


def judge_series(judge_labels: pd.DataFrame, gold_ids: set[str]) -> dict[str, str | None]:
    """``item_id -> label`` (None: not labeled) of a judge's labels, refusing anything else."""
    if not isinstance(judge_labels, pd.DataFrame):
        raise EvalkitError("judge_labels must be a pandas DataFrame with columns item_id, label")
    for col in ("item_id", "label"):
        if col not in judge_labels.columns:
            raise EvalkitError(f"judge_labels: column {col!r} missing")
    out: dict[str, str | None] = {}
    for i, (iid, label) in enumerate(
        zip(judge_labels["item_id"], judge_labels["label"], strict=True)
    ):
        iid = str(iid)
        if iid in out:
            raise EvalkitError(f"judge_labels: item_id {iid!r} appears twice (row {i})")
        if iid not in gold_ids:
            raise EvalkitError(f"judge_labels: item_id {iid!r} (row {i}) is not in the gold set")
        if label is None or (isinstance(label, float) and math.isnan(label)):
            out[iid] = None  # not labeled: missing, never guessed
            continue
        if not isinstance(label, str) or label not in LABELS:
            raise EvalkitError(
                f"judge_labels: item {iid!r} (row {i}): label {label!r} is not one of {LABELS}"
            )
        out[iid] = label
    return out
