"""Judge drift: a judge's disagreement with the gold set as an anytime-valid band over time.

When the gold subset is re-run at intervals into one run log (``evalkit judge run --gold``),
each call is one outcome in the log's order: the judge's label differs from the gold label
(fired), agrees (did not), or gave no label (``cannot-parse``, an error: unmeasured, never a
zero). A silent change of the model behind a judge then shows as its band passing the
ceiling, not as a change in the sessions. ``docs/MONITOR.md`` says what it does not prove.
"""

from __future__ import annotations

import os
from typing import Final

from evalkit.analyses import measurability as meas
from evalkit.analyses.monitor import Check, Limits, MonitorReport, Outcome, band_of
from evalkit.errors import EvalkitError
from evalkit.gold import sets as gold_sets
from evalkit.judge.runlog import read_runlog

__all__ = ["judge_drift"]

_NO_LABEL: Final = meas.Measurability(False, "the reply gave no label (cannot-parse)")
_NO_REPLY: Final = meas.Measurability(False, "no reply (an error; a rerun retries it)")


def judge_drift(
    runlog: str | os.PathLike[str],
    gold: str | os.PathLike[str],
    limits: Limits | None = None,
) -> MonitorReport:
    """One band per judge of ``runlog``: its calls' disagreement with ``gold``, in log order.

    A call on an item the gold set does not hold is skipped and counted in the notes. The
    model ids the API reported are listed with the log line each first appeared on.
    """
    limits = limits or Limits()
    gold_set = gold_sets.load(gold)
    labels = dict(zip(gold_set.items["item_id"], gold_set.items["label"], strict=True))
    log = read_runlog(runlog)
    notes: list[str] = []
    bands = []
    calls: dict[str, int] = {}
    for judge in log.judges():
        outcomes: list[Outcome] = []
        ids: list[str] = []
        models: dict[str, int] = {}
        off_gold = 0
        for entry in (e for e in log.entries if e.judge == judge):
            if entry.item_id not in labels:
                off_gold += 1
                continue
            model = entry.data.get("model")
            if isinstance(model, str):
                models.setdefault(model, entry.line)
            ids.append(f"line {entry.line}")
            if entry.outcome == "ok":
                outcomes.append(Outcome(entry.status != labels[entry.item_id]))
            else:
                outcomes.append(Outcome(None, _NO_LABEL if entry.answered else _NO_REPLY))
        calls[judge] = len(outcomes)
        if off_gold:
            notes.append(f"{judge}: {off_gold} call(s) on items outside {gold_set.tag} skipped")
        if models:
            seen = ", ".join(f"{m} (from line {line})" for m, line in models.items())
            notes.append(f"{judge}: model ids the API reported: {seen}")
        check = Check("", "judge drift", f"{judge}: disagrees with {gold_set.tag}")
        bands.append(band_of(check, outcomes, ids, limits))
    if not bands:
        raise EvalkitError(f"{runlog}: no judge call in this run log")
    return MonitorReport(
        source="run log (judge calls against the gold set)",
        name=os.path.basename(os.fspath(runlog)),
        limits=limits,
        since=None,
        sessions=calls,
        repeat_records=0,
        skipped_lines=log.diagnostics,
        bands=tuple(bands),
        notes=tuple(notes),
        unit="calls",
    )
