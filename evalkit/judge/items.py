"""The items a judge run judges: every gold item of a frozen set, or journal records.

An item is what :func:`evalkit.judge.build_prompt` needs: a record (``run_id`` = the item id,
``rubric_version``, ``session_id``, ``kpis``, ``dimensions``) and its facts, recomputed from the
dimensions with this evalkit, exactly as the rule judge sees them
(:func:`evalkit.calibration.rule_judge_labels`). A gold item's label, rule, rationale, family,
tags and mutations never reach the prompt.

Each item carries ``sha256``: the hash of its canonical JSON (record and facts), the identity a
run log records so that a resumed run or a replay can tell the same item from a changed one.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.input import dumps
from evalkit.judge.facts import compute_facts
from evalkit.judge.prompt import record_rubric_version

if TYPE_CHECKING:
    from evalkit.journal.reader import JournalRead

__all__ = ["ItemSource", "JudgeItem", "gold_items", "journal_items", "make_item"]


@dataclass(frozen=True)
class JudgeItem:
    """One item to judge: its id, the record the prompt is built from, facts, content hash."""

    item_id: str
    record: Mapping[str, Any]
    facts: Mapping[str, Any]
    rubric_version: str
    sha256: str


@dataclass(frozen=True)
class ItemSource:
    """Where the items came from (``gold`` or ``journal``), for the run log and messages."""

    kind: str
    path: str
    items: tuple[JudgeItem, ...]
    sha256: str | None = None  # the gold set's sha256 (journal: None)

    def describe(self) -> dict[str, Any]:
        """The source as the run log records it: kind, path, sha256."""
        return {"kind": self.kind, "path": self.path, "sha256": self.sha256}


def make_item(item_id: str, record: Mapping[str, Any]) -> JudgeItem:
    """The item of ``record`` under ``item_id`` (facts recomputed from its dimensions)."""
    prompt_record = {
        "run_id": item_id,
        "rubric_version": record.get("rubric_version"),
        "session_id": record.get("session_id"),
        "kpis": record.get("kpis"),
        "dimensions": record.get("dimensions"),
    }
    facts = compute_facts(prompt_record["dimensions"])
    canonical = dumps({"record": prompt_record, "facts": facts}, sort_keys=True)
    return JudgeItem(
        item_id=item_id,
        record=prompt_record,
        facts=facts,
        rubric_version=record_rubric_version(prompt_record),
        sha256=hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
    )


def gold_items(path: str | Path) -> ItemSource:
    """Every item of the gold set at ``path`` (verified first; see :func:`evalkit.gold.sets.load`)."""
    from evalkit.gold.sets import load

    gold = load(path)
    rows = gold.items[["item_id", "rubric_version", "session_id", "kpis", "dimensions"]]
    items = tuple(make_item(row["item_id"], row) for row in rows.to_dict("records"))
    return ItemSource("gold", str(gold.path), items, gold.sha256)


def journal_items(journal: JournalRead, run_ids: Iterable[str] = ()) -> ItemSource:
    """Every valid record of a read journal (or those of ``run_ids``), one item per run id.

    A run id recorded more than once is judged on its last record (the newest append), said
    on stderr. A requested run id that is not in the journal, or a journal without a valid
    record, is an ``EvalkitError``.
    """
    path = journal.path
    by_id: dict[str, Mapping[str, Any]] = {}
    for record in journal.records:
        by_id[record["run_id"]] = record  # the last record of a run id wins
    for run_id, lines in journal.duplicates.items():
        print(
            f"evalkit judge run: {path}: run id {run_id!r} is on lines "
            f"{', '.join(map(str, lines))}; judging its last record",
            file=sys.stderr,
        )
    wanted = list(dict.fromkeys(run_ids))
    missing = [rid for rid in wanted if rid not in by_id]
    if missing:
        raise EvalkitError(f"{path}: {journal.missing(missing[0])}")
    chosen = wanted or list(by_id)
    if not chosen:
        skipped = len(journal.diagnostics)
        raise EvalkitError(f"{path}: no valid record to judge ({skipped} line(s) skipped)")
    items = tuple(make_item(rid, by_id[rid]) for rid in chosen)
    return ItemSource("journal", str(path), items)
