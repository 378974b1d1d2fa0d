"""Label families from model-judge run logs: the agreement study's raters, and each judge vs gold.

``evalkit judge run`` with several ``--judge`` specs (or several runs) writes run logs; each
judge is a label family. :func:`load` reads them (``labels_path``: one run log, a folder of run
logs, or a glob such as ``runs/*.jsonl``) into

* the agreement study's long table (``item_id, target, family, rater, label``) with one rater
  per judge carrying its per-item majority label (a tie is a missing rating, never broken), so
  Fleiss' κ, Krippendorff's α and Gwet's AC1 are computed *across judges*
  (:func:`evalkit.judge.runlog.agreement_table`);
* the gold set the runs labelled, when they labelled one committed here: found by the sha256
  the run logs name, and every item's content hash checked
  (:func:`evalkit.calibration.labels.check_against_gold`); then each judge's Cohen κ vs gold
  on every labelled call and on the majority label, with BCa intervals resampling items
  (:func:`evalkit.judge.consistency.kappa_vs_gold`).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.escape import markdown_code, markdown_text
from evalkit.record.dimension import DimensionId

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Families", "gold_text", "judge_vs_gold", "judge_vs_gold_frame", "load", "runlog_paths"]

TARGET = DimensionId.INSTRUCTION_ADHERENCE.value


def runlog_paths(labels_path: str) -> list[Path] | None:
    """The run logs ``labels_path`` names, or None when it names no run log (a label table).

    A glob pattern (``*``, ``?``, ``[``) that is not itself a path names every run log it
    matches; a folder names every run log (``*.jsonl``) in it; a file is a run log when its
    first JSON line carries the run-log schema. A pattern or folder without a run log is an
    ``EvalkitError``.
    """
    from evalkit.calibration.labels import is_runlog

    if not labels_path:
        return None
    path = Path(labels_path)
    if glob.has_magic(labels_path) and not os.path.lexists(path):
        found = [Path(p) for p in sorted(glob.glob(labels_path)) if Path(p).is_file()]
        where = f"the pattern {labels_path!r}"
    elif path.is_dir():
        found = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        where = f"the folder {labels_path!r}"
    else:
        return [path] if path.suffix.lower() in (".jsonl", ".ndjson") and is_runlog(path) else None
    logs = [p for p in found if is_runlog(p)]
    if not logs:
        raise EvalkitError(f"{where} names no run log of `evalkit judge run`")
    return logs


@dataclass(frozen=True)
class Families:
    """Run logs read as label families (see the module docstring)."""

    paths: tuple[Path, ...]
    labels: pd.DataFrame  # runlog_labels: item_id, judge, repeat, label, outcome, reason
    table: pd.DataFrame  # agreement table, one rater per judge (its majority label)
    gold: Any  # the GoldSet the runs labelled, or None
    gold_reason: str  # why there is no gold comparison ("" when there is)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.labels["judge"]))


def _sources(paths: list[Path]) -> list[dict[str, Any]]:
    from evalkit.judge.runlog import read_runlog

    seen: dict[str, dict[str, Any]] = {}
    for path in paths:
        for entry in read_runlog(path).entries:
            src = entry.data.get("source")
            if isinstance(src, dict):
                seen[str(sorted(src.items()))] = src
    return list(seen.values())


def _find_gold(paths: list[Path], gold_path: str) -> tuple[Any, str]:
    """The committed gold version every run log names, checked item by item; else why not."""
    from evalkit.analyses.calibration import default_gold_path
    from evalkit.calibration import labels_from_runlog
    from evalkit.calibration.labels import check_against_gold
    from evalkit.gold.sets import load
    from evalkit.judge.runlog import read_runlog

    sources = _sources(paths)
    if len(sources) != 1 or sources[0].get("kind") != "gold":
        kinds = ", ".join(sorted({str(s.get("kind")) for s in sources})) or "none"
        return None, f"the run logs do not all name one gold set (sources: {kinds})"
    base = Path(gold_path) if gold_path else default_gold_path()
    versions = [base] if (base / "MANIFEST.json").exists() else sorted(base.glob("v*"))
    sha = sources[0].get("sha256")
    gold = next((g for g in (load(v) for v in versions) if g.sha256 == sha), None)
    if gold is None:
        return None, f"no gold set version here has the sha256 the run logs name ({sha!s:.12}…)"
    for path in paths:
        for judge in read_runlog(path).judges():
            check_against_gold(labels_from_runlog(path, judge), gold)
    return gold, ""


def load(labels_path: str, *, gold_path: str = "") -> Families | None:
    """The run logs ``labels_path`` names as label families, or None when it names none."""
    from evalkit.judge.runlog import agreement_table, runlog_labels

    paths = runlog_paths(labels_path)
    if paths is None:
        return None
    labels = runlog_labels(paths)
    table = agreement_table(labels, majority=True, target=TARGET)
    gold, why = _find_gold(paths, gold_path)
    return Families(tuple(paths), labels, table, gold, why)


def judge_vs_gold(fam: Families, *, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per judge: Cohen's κ vs gold on every labelled call and on the majority label, BCa 95%
    intervals resampling items, with n (calls, items) and the ties left out."""
    import pandas as pd

    from evalkit.judge.consistency import kappa_vs_gold

    if fam.gold is None:
        return pd.DataFrame()
    gold = dict(zip(fam.gold.items["item_id"], fam.gold.items["label"], strict=True))
    rows = []
    for judge in fam.judges:
        row: dict[str, Any] = {"judge": judge}
        for basis, majority in (("all", False), ("majority", True)):
            try:
                k = kappa_vs_gold(fam.labels, gold, judge, majority=majority)
            except EvalkitError as exc:
                row[f"kappa_{basis}"] = None
                row[f"note_{basis}"] = str(exc)
                continue
            low, high = k.confidence_interval(n_resamples=n_resamples, rng=seed)
            row |= {f"kappa_{basis}": k.statistic, f"kappa_{basis}_ci_low": low,
                    f"kappa_{basis}_ci_high": high, f"n_{basis}": k.n,
                    f"items_{basis}": k.n_items}  # fmt: skip
            if majority:
                row["ties"] = k.dropped_ties
        rows.append(row)
    return pd.DataFrame(rows)


def judge_vs_gold_frame(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`judge_vs_gold` for the page: ``κ [95% CI], n`` strings, never NaN."""
    import pandas as pd

    from evalkit.analyses._results import fmt_estimate

    def shown(r: Any, basis: str, unit: str) -> str:
        k = r.get(f"kappa_{basis}")
        if k is None or k != k:
            return str(r.get(f"note_{basis}") or "undefined")
        ci = (r.get(f"kappa_{basis}_ci_low"), r.get(f"kappa_{basis}_ci_high"))
        return fmt_estimate(k, ci, None) + f", n = {r[f'n_{basis}']} {unit}"

    rows = [
        {
            "judge": r["judge"],
            "κ vs gold, every call [95% CI]": shown(r, "all", "calls")
            + f" over {r.get('items_all')} items",
            "κ vs gold, majority label [95% CI]": shown(r, "majority", "items")
            + f"; {r.get('ties', 0)} tie(s) left out",
        }
        for r in table.to_dict("records")
    ]
    return pd.DataFrame(rows).set_index("judge") if rows else pd.DataFrame()


def gold_text(fam: Families) -> str:
    """Which run logs and judges, and which gold set they are compared with (or why not)."""
    logs = ", ".join(markdown_code(p.name) for p in fam.paths)
    judges = ", ".join(markdown_code(j) for j in fam.judges)
    head = (
        f"Run logs {logs}: {len(fam.judges)} judge(s) as label families ({judges}); in the "
        "tables above each judge is one rater carrying its per-item majority label (a tie is a "
        "missing rating, never broken)."
    )
    if fam.gold is None:
        return f"{head} No comparison with gold: {markdown_text(fam.gold_reason)}."
    return (
        f"{head} Their items are the gold set {markdown_code(fam.gold.tag)} (sha256 "
        f"{markdown_code(fam.gold.sha256[:12])}…, every item's content hash checked); each "
        "judge's Cohen κ vs gold, BCa 95% intervals resampling items:"
    )
