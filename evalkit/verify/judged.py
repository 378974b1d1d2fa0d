"""Re-deriving a record's judge dimensions from the run log it names, offline.

A judge dimension written by a judge at record time (:mod:`evalkit.judge.record_judge`) names
its run log (relative to the journal) and the sha256 of every line it used. :func:`rederive`
reads that log and, for each cited line: finds it by its sha256 (an edited or removed line is
not found), checks it answers this record's item, with this judge, for this repeat, re-reads
its reply and refuses a ``status`` that disagrees with it, and rebuilds the prompt from the
record and the line's nonce and refuses another ``prompt_sha256``. Then the K calls are
aggregated again (:func:`evalkit.judge.record_judge.derive_dimensions`) and the calibration
binding re-checked against the identity the *log* gives (the model its lines report), never
the one the record states: a record stays ``calibrated`` only when its certificate accepts that
identity. The re-derived dimension goes into the record the engine would write, so any changed
status, evidence, score, judge identity or calibration claim is a drift, resealed or not.

A run log that is missing is reported as such (:attr:`Rederived.missing`), never as agreement.
So is a judge dimension without a judge block (an older writer's, :func:`evalkit.judge.
merge_judge`, or a hand-written one): it names no run log, so nothing can re-derive it; it is
checked against the judge contract (:func:`evalkit.verify.checks.judge_contract`) and carried.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.judge.items import record_item
from evalkit.judge.prompt import build_prompt, prompt_template_sha256
from evalkit.judge.record_judge import calibrated, derive_dimensions
from evalkit.judge.reply import CANNOT_PARSE, read_reply
from evalkit.judge.runlog import RunLog, read_runlog
from evalkit.record.judging import JUDGE_KEY
from evalkit.verify.checks import judge_contract
from evalkit.verify.diff import DriftKind, FieldDrift

if TYPE_CHECKING:
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = ["Rederived", "rederive"]


@dataclass
class Rederived:
    """What :func:`rederive` found: the expected judge dimensions, drifts, notes, missing logs."""

    dimensions: list[dict[str, Any]] = field(default_factory=list)
    drifts: list[FieldDrift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # one line per run log not found


_LOGS: dict[tuple[str, int, int, int], RunLog] = {}


def _read(path: Path) -> RunLog:
    """The run log at ``path``, read once per content (keyed by inode, size and mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _LOGS:
        if len(_LOGS) > 16:
            _LOGS.clear()
        _LOGS[key] = read_runlog(path)
    return _LOGS[key]


def _drift(dim_id: str, where: str, stored: Any, expected: Any, why: str) -> FieldDrift:
    return FieldDrift(dim_id, where, stored, expected, why, DriftKind.JUDGE)


def _log_path(journal: Path, name: Any) -> Path | None:
    """The run log a block names, relative to the journal's folder (None: not such a path)."""
    if not isinstance(name, str) or not name or PurePosixPath(name).is_absolute():
        return None
    return journal.parent / Path(*PurePosixPath(name).parts)


def _check_line(
    dim_id: str, entry: Any, item: Any, block: Mapping[str, Any], repeat: Any
) -> list[FieldDrift]:
    """How a cited run-log line fails to be this record's call (empty: it is)."""
    data = entry.data
    where = f"judge.calls (line {entry.line})"
    out = []
    if entry.item_id != item.item_id:
        out.append(
            _drift(dim_id, where, entry.item_id, item.item_id, "the line answers another item")
        )
    if entry.judge != block.get("spec") or entry.repeat != repeat:
        got = f"{entry.judge} repeat {entry.repeat}"
        out.append(_drift(dim_id, where, got, f"{block.get('spec')} repeat {repeat}",
                          "the line is another judge's or another repeat's call"))  # fmt: skip
    if out:
        return out
    if data.get("prompt_template_sha256") == prompt_template_sha256():
        nonce = data.get("nonce")
        try:
            prompt = build_prompt(
                item.record, item.facts, nonce if isinstance(nonce, str) else None
            )
            rebuilt = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        except EvalkitError:
            rebuilt = None
        if rebuilt != data.get("prompt_sha256"):
            out.append(_drift(dim_id, where + ".prompt_sha256", data.get("prompt_sha256"), rebuilt,
                              "not the prompt rebuilt from this record and the line's nonce"))  # fmt: skip
    if entry.outcome != "error":
        reading = read_reply(data.get("reply"), item_id=item.item_id,
                             rubric_version=item.rubric_version, nonce=data.get("nonce"))  # fmt: skip
        if (reading.status or CANNOT_PARSE) != entry.status:
            out.append(_drift(dim_id, where + ".status", entry.status,
                              reading.status or CANNOT_PARSE, "its reply reads otherwise"))  # fmt: skip
    else:
        out.append(_drift(dim_id, where, "error", "an answer", "an error outcome is no answer"))
    return out


def _one(
    stored: Mapping[str, Any],
    dim: Mapping[str, Any],
    journal: Path,
    accepted: CalibrationAcceptance | None,
    found: Rederived,
) -> dict[str, Any] | None:
    """The dimension the log gives for ``dim`` (None: not re-derivable; drifts say why)."""
    dim_id = str(dim.get("id"))
    block = dim[JUDGE_KEY]
    path = _log_path(journal, block.get("run_log"))
    if path is None:
        found.drifts.append(_drift(dim_id, "judge.run_log", block.get("run_log"),
                                   "a path relative to the journal", "names no run log"))  # fmt: skip
        return None
    if not path.exists():
        found.missing.append(f"judge dimension {dim_id}: its run log {path} is missing")
        return None
    try:
        log = _read(path)
    except (EvalkitError, OSError) as exc:
        found.missing.append(f"judge dimension {dim_id}: its run log cannot be read: {exc}")
        return None
    item = record_item(stored)
    by_sha = log.by_sha256()
    calls = block.get("calls")
    if not isinstance(calls, list) or not calls:
        found.drifts.append(_drift(dim_id, "judge.calls", calls, "the calls", "names no call"))
        return None
    answers: list[tuple[Mapping[str, Any], str]] = []
    for index, call in enumerate(calls):
        sha = call.get("line_sha256") if isinstance(call, Mapping) else None
        entry = by_sha.get(sha) if isinstance(sha, str) else None
        if entry is None:
            found.drifts.append(_drift(dim_id, f"judge.calls[{index}]", sha, f"a line of {path.name}",
                                       "no line of the run log has this sha256: edited or removed"))  # fmt: skip
            return None
        bad = _check_line(dim_id, entry, item, block, index)
        if bad:
            found.drifts += bad
            return None
        answers.append((entry.data, entry.sha256))
    params = answers[0][0].get("params")
    derived = derive_dimensions(
        item, item.rubric_version, answers, spec=str(block.get("spec")),
        params=params if isinstance(params, Mapping) else {}, run_log=block["run_log"],
    )  # fmt: skip
    expected = next((d for d in derived if d["id"] == dim_id), None)
    if expected is None:
        return None
    return _calibration(dim, expected, accepted)


def _calibration(
    dim: Mapping[str, Any], expected: dict[str, Any], accepted: CalibrationAcceptance | None
) -> dict[str, Any]:
    """``expected`` with the stored claim when the log's identity supports it, else none."""
    from evalkit.judge.record_judge import JudgeCalibration

    status, ref = dim.get("calibration_status"), dim.get("calibration_ref")
    if status == "uncalibrated" or accepted is None:
        return calibrated(expected, JudgeCalibration())
    if accepted.accepts(str(dim.get("id")), status, ref, expected[JUDGE_KEY]):
        return calibrated(expected, JudgeCalibration(str(status), str(ref)))
    return calibrated(expected, JudgeCalibration())


def rederive(
    stored: Mapping[str, Any],
    judges: Sequence[Mapping[str, Any]],
    journal: str | os.PathLike[str],
    accepted: CalibrationAcceptance | None,
) -> Rederived:
    """The record's judge dimensions as its run logs give them (module docstring)."""
    found = Rederived()
    explain = getattr(accepted, "explain", None)
    for dim in judges:
        if isinstance(dim.get(JUDGE_KEY), Mapping):
            expected = _one(stored, dim, Path(journal), accepted, found)
            # not re-derivable: the stored one stands in (its drifts or missing log say why)
            found.dimensions.append(dict(dim) if expected is None else expected)
            if callable(explain) and expected is not None:
                why = explain(str(dim.get("id")), expected)
                found.notes.append(f"{dim.get('id')}: {expected['calibration_status']}: {why}")
        else:
            found.drifts += judge_contract(dim, str(stored.get("rubric_version")))
            found.dimensions.append(dict(dim))
            found.missing.append(
                f"judge dimension {dim.get('id')}: written without its judge (no judge block, no "
                "run log): its verdict cannot be re-derived"
            )
    return found
