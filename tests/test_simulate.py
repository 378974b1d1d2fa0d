"""The default data: seeded determinism, ledger shapes, and the preset's published figures.

The preset's figures are those rubric-v2 reports in "Änderungen gegenüber v1" (seed 001,
2026-09-19): 40 records / 38 sessions, 32 v1 process-safety fail records / 30 sessions, the
blocked distribution 0->8, 1->3, 2->5, 3-5->14, 6+->10 with maximum 58 and a gap between 13 and
33, spiral 0 in all records; counterfactual thresholds 3 -> 23 sessions, 6 -> 9, 20 -> 2 records.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal_mod
from evalkit.simulate import (
    PRESET_RUBRIC_V2,
    build_preset,
    simulate_labels,
    simulate_metrics_dir,
)

ARCHIVE_NAME = re.compile(r"^events-(\d{8}T\d{6}Z|unknown)_\d{8}T\d{6}Z(-\d+)?\.jsonl$")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _ts(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module")
def preset(tmp_path_factory: pytest.TempPathFactory):
    return build_preset(tmp_path_factory.mktemp("preset") / "metrics")


@pytest.fixture(scope="module")
def journal(preset) -> list[dict]:
    return journal_mod.read(preset.metrics_dir / "eval.jsonl").records


# ------------------------------------------------------------------------ determinism


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = simulate_metrics_dir(tmp_path / "a", n_sessions=8, seed=7, score=False)
    b = simulate_metrics_dir(tmp_path / "b", n_sessions=8, seed=7, score=False)
    c = simulate_metrics_dir(tmp_path / "c", n_sessions=8, seed=8, score=False)
    assert _files(a.metrics_dir) == _files(b.metrics_dir)
    assert _files(a.metrics_dir) != _files(c.metrics_dir)


def test_preset_is_deterministic_including_the_journal(tmp_path: Path, preset) -> None:
    again = build_preset(tmp_path / "again")
    assert _files(again.metrics_dir) == _files(preset.metrics_dir)


def test_refuses_to_write_over_an_existing_ledger(tmp_path: Path) -> None:
    simulate_metrics_dir(tmp_path / "m", n_sessions=3, seed=1, score=False)
    with pytest.raises(EvalkitError, match="already exists"):
        simulate_metrics_dir(tmp_path / "m", n_sessions=3, seed=1, score=False)


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalkitError, match="n_sessions"):
        simulate_metrics_dir(tmp_path / "x", n_sessions=1)
    with pytest.raises(EvalkitError, match="rubric"):
        simulate_metrics_dir(tmp_path / "y", rubric="rubric-v9")
    with pytest.raises(EvalkitError, match="unknown preset"):
        build_preset(tmp_path / "z", "no-such-preset")


# ------------------------------------------------------------------------ ledger shapes


def test_ledger_carries_the_realistic_shapes(preset) -> None:
    root = preset.metrics_dir
    archives = sorted((root / "_archive").iterdir())
    assert archives and all(ARCHIVE_NAME.match(p.name) for p in archives)
    events = _lines(root / "events.jsonl") + [e for p in archives for e in _lines(p)]
    kinds = {e.get("event") for e in events}
    assert "orchestrator.events.rotated" in kinds
    rotated = [e["archived_as"] for e in events if e.get("event") == "orchestrator.events.rotated"]
    assert all((root / name).is_file() for name in rotated)  # every rotation is on disk
    stamps = [e for e in events if e.get("semantic_session_id")]
    assert stamps and all(
        re.fullmatch(r"[0-9a-f-]{36}", e["session_id"]) for e in stamps
    )  # dual stamp: raw uuid + semantic id
    gates = [e for e in events if str(e.get("event", "")).startswith("orchestrator.quality_gate")]
    assert any(e["variant"] == "full-gate" for e in gates)
    assert any(e["exit_code"] != 0 for e in gates) and "session_id" not in gates[0]
    raw_text = (archives[0]).read_text(encoding="utf-8")
    assert "not json at all" in raw_text  # malformed lines are part of the ledger
    sessions = _lines(root / "sessions.jsonl")
    assert any("duration_minutes" in s for s in sessions)  # drifted field names
    assert any(s.get("status") == "abandoned" for s in sessions)
    assert any(s.get("_backfill_source") for s in sessions)
    scored = [s for s in sessions if s.get("session_id") in preset.blocked and "completed_at" in s]
    windows = sorted(
        {(s["session_id"], _ts(s["started_at"]), _ts(s["completed_at"])) for s in scored},
        key=lambda w: w[1],
    )
    touching = sum(1 for a, b in itertools.pairwise(windows) if b[1] == a[2])
    overlapping = sum(1 for a, b in itertools.pairwise(windows) if b[1] < a[2])
    assert touching >= 1 and overlapping >= 1  # back-to-back windows and peers


def test_every_session_owns_exactly_its_blocked_events(preset) -> None:
    """Second implementation: count each session's blocked events by raw id over the whole
    history, and by its window; both must equal the planned count."""
    root = preset.metrics_dir
    events = _lines(root / "events.jsonl") + [
        e for p in sorted((root / "_archive").iterdir()) for e in _lines(p)
    ]
    raw_of: dict[str, set[str]] = {}
    for e in events:
        if e.get("semantic_session_id"):
            raw_of.setdefault(e["semantic_session_id"], set()).add(e["session_id"])
    started = {
        e["session_id"]: e for e in events if e.get("event") == "orchestrator.session.started"
    }
    sessions = {
        s["session_id"]: s
        for s in _lines(root / "sessions.jsonl")
        if s.get("session_id") and not s.get("_backfill_source")  # a stub never shadows
    }
    blocked = [e for e in events if e.get("event") == "orchestrator.destructive_guard.blocked"]
    for sid, planned in preset.blocked.items():
        rec = sessions[sid]
        lo, hi = _ts(rec["started_at"]), _ts(rec["completed_at"])
        in_window = sum(1 for e in blocked if lo <= _ts(e["timestamp"]) <= hi)
        assert in_window == planned, sid
        if sid in raw_of:
            assert sum(1 for e in blocked if e["session_id"] in raw_of[sid]) == planned, sid
        assert any(lo == _ts(e["timestamp"]) for e in started.values())


# ------------------------------------------------------------------------ preset figures


def test_preset_journal_figures(preset, journal) -> None:
    assert preset.preset == PRESET_RUBRIC_V2
    assert len(journal) == 40 and preset.records == 40
    assert {r["rubric_version"] for r in journal} == {"rubric-v1"}
    assert len({r["session_id"] for r in journal}) == 38
    assert len({r["run_id"] for r in journal}) == 40
    ps = [next(d for d in r["dimensions"] if d["id"] == "process-safety") for r in journal]
    fails = [r for r, d in zip(journal, ps, strict=True) if d["status"] == "fail"]
    assert len(fails) == 32
    assert len({r["session_id"] for r in fails}) == 30
    facts = [evalkit.compute_facts(r["dimensions"]) for r in journal]
    assert all(f["spiral"] == 0 for f in facts)


def test_preset_blocked_distribution_through_the_threshold_analysis(preset, journal) -> None:
    from evalkit.analyses import threshold as th

    df = th.fact_table(preset.metrics_dir, "guard_blocked")
    # the 32 fail records carry the number the facts readers parse; the 8 pass records carry
    # rubric-v1's prose "(0 blocked, ..." that the readers (like the reference) leave null
    assert df["value_source"].value_counts().to_dict() == {"facts": 32, "v1-prose": 8}
    assert th.distribution_bins(df) == {"0": 8, "1": 3, "2": 5, "3-5": 14, "6+": 10}
    values = sorted(int(v) for v in df["value"])
    assert values[-1] == 58
    assert 13 in values and 33 in values and not any(13 < v < 33 for v in values)
    # and they agree with what each session really did (the planned count)
    assert all(v == preset.blocked[s] for s, v in zip(df["session_id"], df["value"], strict=True))
    assert th.published_table(df) == {
        "records": 40,
        "sessions": 38,
        "v1_records": 40,
        "v1_fail_records": 32,
        "v1_fail_sessions": 30,
        "v1_sessions": 38,  # every session's rubric-v1 process-safety was measured
    }
    cf = {row["threshold"]: row for row in th.counterfactual(df, [1, 3, 6, 20])}
    assert (cf[1]["records_firing"], cf[1]["sessions_failing"]) == (32, 30)
    assert cf[3]["sessions_failing"] == 23
    assert cf[6]["sessions_failing"] == 9
    assert cf[20]["records_firing"] == 2 and cf[20]["records_rate"] == pytest.approx(0.05)


def test_twice_scored_sessions_reproduce_their_count(journal) -> None:
    by_session: dict[str, list[dict]] = {}
    for r in journal:
        by_session.setdefault(r["session_id"], []).append(r)
    twice = {s: rs for s, rs in by_session.items() if len(rs) == 2}
    assert len(twice) == 2
    for records in twice.values():
        a, b = (evalkit.compute_facts(r["dimensions"])["guard_blocked"] for r in records)
        assert a == b and a is not None
        assert records[0]["timestamp"] < records[1]["timestamp"]


# ------------------------------------------------------------------------ rater labels


def test_labels_are_seeded_long_tables() -> None:
    a = simulate_labels(10, seed=3)
    b = simulate_labels(10, seed=3)
    c = simulate_labels(10, seed=4)
    assert a.equals(b) and not a.equals(c)
    assert list(a.columns[:5]) == ["item_id", "target", "family", "rater", "label"]
    assert a.groupby("target")["item_id"].nunique().eq(10).all()
    assert a["rater"].nunique() == 6 and a["family"].nunique() == 3
    flat = a[a["target"] == "rq_status"]["label"].unique().tolist()
    assert flat == ["pass"]  # the variance-free target
    assert a[a["target"] == "ia_status"]["label"].nunique() == 3


def test_labels_follow_each_raters_accuracy() -> None:
    labels = simulate_labels(400, targets=["scope_kept"], seed=1)
    agree = (labels["label"] == labels["truth"]).mean()
    assert 0.8 < agree < 0.96  # accuracy 0.88 +- 0.08 per rater


def test_labels_reject_unknown_targets() -> None:
    with pytest.raises(EvalkitError, match="unknown target"):
        simulate_labels(5, targets=["nope"])


def test_counterfactual_never_reads_an_unknown_value_as_not_firing() -> None:
    # Three sessions: s1 fires at 3, s2's only record is unknown, s3 does not fire.
    from evalkit.analyses.threshold import counterfactual

    df = pd.DataFrame(
        {"session_id": ["s1", "s1", "s2", "s3"], "value": [5.0, 1.0, None, 0.0]},
    )
    (row,) = counterfactual(df, [3])
    assert row["records_firing"] == 1 and row["records_known"] == 3 and row["records_unknown"] == 1
    assert row["records_rate"] == pytest.approx(1 / 3)  # not 1/4: the unknown record is no 0
    assert row["sessions_failing"] == 1 and row["sessions_undetermined"] == 1
    assert row["sessions_rate"] == pytest.approx(1 / 2)  # s2 is undetermined, not passing
