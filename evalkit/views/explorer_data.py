"""What the explorer page holds: every record of one or more journals, compact, as JSON.

:func:`explorer_payload` reads each source (a journal, its ledger's session dates, its
``verify --all`` outcome), computes each record's facts and flags, the per-dimension fire rates
over time with their band, and packs it all into one JSON value: repeated text (evidence,
provenance, facts) is stored once in a string table and referred to by index, so 5,000
sessions under two rubrics stay well inside the page's size budget. Three plug points say
what a record or a rate carries beyond the record itself: :func:`record_flags`
(every unmeasured signal with its reason, from :mod:`evalkit.analyses.measurability`, and a
contaminated window), :func:`judge_fields` (a judge dimension's binding and calibration) and
:func:`rate_band` (the band drawn around a running fire rate). The format is described in
``docs/EXPLORER.md``.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.analyses.measurability import (
    LedgerProfile,
    RecordMeasurability,
    ledger_profile,
    record_measurability,
)
from evalkit.analyses.replay import REPORTED_ONLY, STATUSES
from evalkit.journal.reader import JOURNAL_NAME, JournalRead
from evalkit.judge.facts import FACT_KEYS
from evalkit.record.contract import KPI_KEYS, Method
from evalkit.rubrics.registry import RUBRIC_VERSIONS, get_rubric
from evalkit.stats.proportion import wilson_interval
from evalkit.stats.thresholds import FIRE_RATE_CEILING
from evalkit.views.report import RECORD_FIELDS, display_value, field_value, verify_command

__all__ = [
    "FIRES",
    "FORMAT_VERSION",
    "SERIES_POINTS",
    "Band",
    "ExplorerSource",
    "Flag",
    "explorer_payload",
    "judge_fields",
    "rate_band",
    "record_flags",
]

#: Bumped when the payload's shape changes (the page's script reads this version only).
FORMAT_VERSION = 1
#: The statuses whose running rate is drawn over time: a check that fires.
FIRES: tuple[str, ...] = ("fail", "cannot-determine")
#: Points kept per fire-rate series (the running rate is sampled evenly, last point kept).
SERIES_POINTS = 120
#: Keys every dimension carries; anything else a judge dimension carries is shown beside it.
_DIMENSION_KEYS = frozenset({"id", "method", "status", "evidence", "score"})


@dataclass(frozen=True)
class ExplorerSource:
    """One journal to explore: its label (the repository in a fleet), file and ledger."""

    label: str
    journal: Path
    metrics_dir: Path | None = None

    @classmethod
    def of_metrics_dir(
        cls, metrics_dir: str | os.PathLike[str], label: str | None = None
    ) -> ExplorerSource:
        """The journal ``<metrics_dir>/eval.jsonl`` beside its ledger."""
        path = Path(metrics_dir)
        return cls(label or os.fspath(metrics_dir), path / JOURNAL_NAME, path)


@dataclass(frozen=True)
class Flag:
    """A flag on a record: its kind, why (one line) and the dimension it concerns.

    Kinds: ``unmeasured`` (``signal`` names it: ``dimension:<id>``, ``fact:<name>``,
    ``rule-judge``) and ``contaminated``. ``dimension`` is set for a dimension's status: that
    dimension is left out of its rates (their n) and counted apart, an unmeasured signal is
    never a measured zero.
    """

    kind: str
    reason: str
    dimension: str | None = None
    signal: str | None = None


@dataclass(frozen=True)
class Band:
    """A running rate's band: ``lower[i]``/``upper[i]`` after the ``i``-th measured outcome.

    ``kind`` names the construction and ``caption`` says in a sentence what it guarantees.
    """

    kind: str
    caption: str
    lower: tuple[float | None, ...]
    upper: tuple[float | None, ...]


# --------------------------------------------------------------------------- plug points


def record_flags(measured: RecordMeasurability) -> tuple[Flag, ...]:
    """The flags of one record: each unmeasured signal with why, and a contaminated window.

    ``measured`` is :func:`evalkit.analyses.measurability.record_measurability` of the record
    (with its ledger's profile when there is one): the one answer to "was this measured".
    """
    flags = []
    for signal, got in measured.signals.items():
        if not got.measured:
            dim = signal.split(":", 1)[1] if signal.startswith("dimension:") else None
            flags.append(Flag("unmeasured", got.reason or "unmeasured", dim, signal))
    if measured.facts.get("window_contaminated") is True:
        flags.append(
            Flag(
                "contaminated",
                "the session's window overlaps another session's: gate events unattributable",
            )
        )
    return tuple(flags)


def judge_fields(dim: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a judge dimension carries beyond its verdict, as (key, text) in record order.

    Its ``advisory`` mark and ``calibration_status`` (and ``calibration_ref``), and whatever
    else the record binds to the judge: every extra key is shown, none is interpreted here.
    """
    return [(key, _text(value)) for key, value in dim.items() if key not in _DIMENSION_KEYS]


def rate_band(outcomes: Sequence[bool], at: Sequence[int]) -> Band:
    """The band around the running rate of ``outcomes`` (in order), after outcome ``at[i]``.

    A fixed-n Wilson 95% interval per point: each holds for one look at one n; read along the
    curve, the chance that some point misses the true rate is larger than 5% (the caption
    says so). An anytime-valid band takes the whole sequence; hence the signature.
    """
    fires = list(itertools.accumulate(int(o) for o in outcomes))
    bounds = [wilson_interval(fires[i], i + 1) if i >= 1 else (None, None) for i in at]
    return Band(
        "wilson",
        "pointwise Wilson 95% intervals (fixed n): each holds for one look at one point, "
        "not for watching the curve; reading it at many points overstates certainty",
        tuple(lo for lo, _ in bounds),
        tuple(hi for _, hi in bounds),
    )


# --------------------------------------------------------------------------- reading


def _text(value: Any) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=False) if value else "none"
    return display_value(value)


class _Table:
    """Values stored once, referred to by index (the payload's string and value tables)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._index: dict[Any, int] = {}

    def add(self, value: Any, key: Any = None) -> int:
        key = value if key is None else key
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.items)
            self.items.append(value)
        return found


@dataclass
class _Packer:
    strings: _Table = field(default_factory=_Table)
    values: _Table = field(default_factory=_Table)  # lists of texts, by their JSON
    dims: dict[str, int] = field(default_factory=dict)
    dim_rows: list[dict[str, Any]] = field(default_factory=list)
    rubrics: dict[str, int] = field(default_factory=dict)

    def s(self, text: str) -> int:
        return self.strings.add(text)

    def v(self, texts: list[Any]) -> int:
        # lists of texts (or of [key, text] pairs): their tuples are the key
        key = tuple(tuple(t) if isinstance(t, list) else t for t in texts)
        return self.values.add(texts, key)

    def dim(self, dim_id: str, method: str) -> int:
        if dim_id not in self.dims:
            self.dims[dim_id] = len(self.dim_rows)
            self.dim_rows.append(
                {"id": dim_id, "method": method, "reported_only": dim_id in REPORTED_ONLY}
            )
        return self.dims[dim_id]

    def rubric(self, version: str) -> int:
        return self.rubrics.setdefault(version, len(self.rubrics))


_STATUS_INDEX = {status: i for i, status in enumerate(STATUSES)}


def _pack_dimension(p: _Packer, dim: Mapping[str, Any]) -> list[Any]:
    entry: list[Any] = [
        p.dim(dim["id"], dim["method"]),
        _STATUS_INDEX[dim["status"]],
        p.s(dim["evidence"]),
    ]
    extra = [("score", _text(dim["score"]))] if "score" in dim else []
    if dim["method"] == Method.JUDGE:
        extra += judge_fields(dim)
    if extra:
        entry.append(p.v([list(pair) for pair in extra]))
    return entry


@dataclass(frozen=True)
class _Verified:
    outcome: str
    summary: str


def _verify(
    source: ExplorerSource,
    accepted: Any,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None,
) -> dict[str, _Verified] | None:
    """Run id -> its ``verify --all`` outcome; ``None`` when there is no ledger to verify from."""
    from evalkit.verify.rescore import verify_journal  # deferred: loads the engine

    found = _ledger(source)
    if found is None:
        return None
    result = verify_journal(source.journal, found, accepted=accepted, progress=progress)
    return {
        entry.run_id: _Verified(entry.outcome.value, entry.summary())
        for entry in result.entries
        if entry.run_id is not None
    }


def _ledger(source: ExplorerSource) -> Path | None:
    """The source's metrics directory when it holds a ledger (``sessions.jsonl``)."""
    found = source.metrics_dir
    return found if found is not None and (found / "sessions.jsonl").exists() else None


def _profile(source: ExplorerSource) -> LedgerProfile | None:
    """What the source's ledger holds (session starts, event types); None without a ledger."""
    found = _ledger(source)
    return None if found is None else ledger_profile(found)


def _pack_source(
    p: _Packer,
    index: int,
    source: ExplorerSource,
    read: JournalRead,
    profile: LedgerProfile | None,
    verified: dict[str, _Verified] | None,
) -> list[list[Any]]:
    latest: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(read.records):
        latest[(rec["session_id"], rec["rubric_version"])] = i
    latest_rows = set(latest.values())
    rows = []
    for i, (line, rec) in enumerate(zip(read.line_numbers, read.records, strict=True)):
        measured = record_measurability(rec, profile)
        facts = measured.facts
        flags = record_flags(measured)
        start = None if profile is None else profile.session_starts.get(rec["session_id"])
        state = None if verified is None else verified.get(rec["run_id"])
        rows.append(
            [
                rec["run_id"],
                p.s(rec["session_id"]),
                p.rubric(rec["rubric_version"]),
                start,
                index,
                [_pack_dimension(p, d) for d in rec["dimensions"]],
                p.v([display_value(rec["kpis"][key]) for key in KPI_KEYS]),
                p.v([_text(facts[key]) for key in FACT_KEYS]),
                [
                    [
                        p.s(f.kind),
                        p.s(f.reason),
                        -1 if f.dimension is None else p.dims.get(f.dimension, -1),
                        -1 if f.signal is None else p.s(f.signal),
                    ]
                    for f in flags
                ],
                None if state is None else [p.s(state.outcome), p.s(state.summary)],
                p.v([display_value(field_value(rec, path)) for _, path in RECORD_FIELDS]),
                line,
                verify_command(rec["run_id"], source.metrics_dir),
                1 if i in latest_rows else 0,
            ]
        )
    return rows


# --------------------------------------------------------------------------- fire rates


def _series(
    rows: list[list[Any]], n_dims: int, rubric: int, unmeasured: int
) -> list[dict[str, Any]]:
    """The running fire rates of one rubric: latest records with a date, in session order.

    ``unmeasured``: the string index of the flag kind whose dimension is left out.
    """
    chosen = [
        (r, {d[0]: d[1] for d in r[5]}, {f[2] for f in r[8] if f[0] == unmeasured})
        for r in sorted(
            (r for r in rows if r[2] == rubric and r[13] and r[3] is not None),
            key=lambda r: (r[3], r[0]),
        )
    ]
    out = []
    for dim in range(n_dims):
        for status in FIRES:
            code = _STATUS_INDEX[status]
            xs: list[float] = []
            outcomes: list[bool] = []
            for r, statuses, left_out in chosen:
                got = statuses.get(dim)
                if got is None or dim in left_out:
                    continue
                xs.append(r[3])
                outcomes.append(got == code)
            if not outcomes:
                continue
            keep = _sample(len(xs))
            band = rate_band(outcomes, keep)
            fires = list(itertools.accumulate(int(o) for o in outcomes))
            out.append(
                {
                    "rubric": rubric,
                    "dim": dim,
                    "status": code,
                    "band": band.kind,
                    "x": [xs[i] for i in keep],
                    "k": [fires[i] for i in keep],
                    "n": [i + 1 for i in keep],
                    "lo": [_round(v) for v in band.lower],
                    "hi": [_round(v) for v in band.upper],
                    "caption": band.caption,
                }
            )
    return out


def _sample(length: int, points: int = SERIES_POINTS) -> list[int]:
    if length <= points:
        return list(range(length))
    return sorted({round(j * (length - 1) / (points - 1)) for j in range(points)})


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


# --------------------------------------------------------------------------- the payload


def _dimension_order(p: _Packer) -> None:
    """Register the shipped rubrics' dimensions first, in their canonical order."""
    for version in RUBRIC_VERSIONS:
        for spec in get_rubric(version).dimensions:
            p.dim(spec.id, "deterministic")


def explorer_payload(
    sources: Sequence[ExplorerSource],
    reads: Sequence[JournalRead],
    *,
    verify: bool = True,
    accepted: Any = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The page's data for ``sources`` (with ``reads``, each source's journal as read).

    ``verify``: re-verify every record from its ledger (``verify --all``) when the ledger is
    there; ``accepted``: the calibrations a judge dimension may claim (as the journal was
    read with). ``progress`` wraps the verify loop (a tqdm bar on the command line).
    """
    p = _Packer()
    _dimension_order(p)
    for version in RUBRIC_VERSIONS:
        if any(rec["rubric_version"] == version for read in reads for rec in read.records):
            p.rubric(version)
    rows: list[list[Any]] = []
    described = []
    for index, (source, read) in enumerate(zip(sources, reads, strict=True)):
        profile = _profile(source)
        verified = _verify(source, accepted, progress) if verify else None
        rows += _pack_source(p, index, source, read, profile, verified)
        described.append(
            {
                "label": source.label,
                "journal": os.fspath(source.journal),
                "records": len(read.records),
                "skipped": [str(d) for d in read.diagnostics],
                "duplicates": len(read.duplicates),
                "dates": profile is not None,
                "ledger": None
                if profile is None
                else {
                    "sessions": profile.sessions,
                    "first_start": profile.first_start,
                    "last_end": profile.last_end,
                    "events": profile.events_text(),
                },
                "verify": "verified"
                if verified is not None
                else "not requested"
                if not verify
                else "no ledger",
            }
        )
    unmeasured = p.s("unmeasured")
    series = [
        s
        for rubric in range(len(p.rubrics))
        for s in _series(rows, len(p.dim_rows), rubric, unmeasured)
    ]
    return {
        "format": FORMAT_VERSION,
        "sources": described,
        "rubrics": list(p.rubrics),
        "dims": p.dim_rows,
        "statuses": list(STATUSES),
        "kpi_keys": list(KPI_KEYS),
        "fact_keys": list(FACT_KEYS),
        "record_fields": [label for label, _ in RECORD_FIELDS],
        "ceiling": FIRE_RATE_CEILING,
        "strings": p.strings.items,
        "values": p.values.items,
        "records": rows,
        "series": series,
    }
