"""What the study pages say and publish is computed in evalkit.analyses (linted, typed, tested
here); the notebooks built by notebooks/build_notebooks.py only call it and show the result."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from evalkit.analyses import agreement as ag
from evalkit.analyses import replay
from evalkit.analyses import threshold as th
from evalkit.stats import wilson_interval

REPO = Path(__file__).resolve().parents[1]


def _records() -> pd.DataFrame:
    # 6 records over 4 sessions; rubric-v1 process-safety failed on 3 records of 2 sessions
    rows = [
        (1, "r1", "s1", "rubric-v1", 4.0, "facts", "fail"),
        (2, "r2", "s1", "rubric-v1", 7.0, "facts", "fail"),
        (3, "r3", "s2", "rubric-v1", 0.0, "v1-prose", "pass"),
        (4, "r4", "s3", "rubric-v1", 2.0, "facts", "fail"),
        (5, "r5", "s3", "rubric-v2", None, "unknown", "pass"),
        (6, "r6", "s4", "rubric-v2", 1.0, "facts", "pass"),
    ]
    cols = ["line", "run_id", "session_id", "rubric_version", "value", "value_source"]
    df = pd.DataFrame([r[:6] for r in rows], columns=cols)
    df["process_safety"] = [r[6] for r in rows]
    df["parse_misses"] = 0
    df.attrs["diagnostics"] = ["line 9: not JSON"]
    df.attrs["fact"] = "guard_blocked"
    return df


# ---------------------------------------------------------------------- threshold study


def test_records_text_counts_and_the_wilson_share_at_the_pages_level() -> None:
    df = _records()
    pub = th.published_table(df)
    assert pub == {
        "records": 6,
        "sessions": 4,
        "v1_records": 4,
        "v1_fail_records": 3,
        "v1_fail_sessions": 2,
        "v1_sessions": 3,
    }
    text = th.records_text(df, pub)
    # the share is of the 3 sessions with a rubric-v1 record: s4 has none, so it cannot fail
    lo, hi = wilson_interval(2, 3)
    assert lo is not None and hi is not None
    assert "**6 records** over **4 sessions**" in text
    assert f"66.7% [{100 * lo:.1f}%, {100 * hi:.1f}%], n = 3 of sessions, Wilson 95% CI" in text
    assert "Unknown `guard_blocked` values (reader found no number): 1." in text
    assert text.endswith("Journal lines skipped: 1.")
    lo90, hi90 = wilson_interval(2, 3, 0.9)
    assert lo90 is not None and hi90 is not None
    assert f"[{100 * lo90:.1f}%, {100 * hi90:.1f}%], n = 3 of sessions, Wilson 90% CI" in (
        th.records_text(df, pub, level=0.9)
    )
    # a journal without a rubric-v1 record has no rubric-v1 fail share (never "0 of n")
    v2 = df[df["rubric_version"] == "rubric-v2"]
    assert "so no rubric-v1 `process-safety` fail share" in th.records_text(
        v2, th.published_table(v2)
    )


def test_one_session_is_a_case_not_a_rate() -> None:
    df = _records().iloc[:2]
    text = th.records_text(df, th.published_table(df))
    assert "100.0% (n = 1, no CI) of sessions" in text


def test_value_sources_and_their_text() -> None:
    sources = th.value_sources(_records())
    assert sources == {"facts": 4, "v1-prose": 1, "unknown": 1}
    text = th.value_sources_text(sources)
    assert "`compute_facts` → 4 records; rubric-v1 prose fallback → 1 records; unknown → 1." in (
        text
    )


def test_preview_bins_gaps_and_caption() -> None:
    df = _records()
    caption, preview = th.records_preview(df, rows=2)
    assert caption == "First 2 of 6 records (all of them: the frame `df`):"
    # never "First 12 of 6": a short frame is shown whole, and says so
    assert th.records_preview(df)[0] == "All 6 records (the frame `df`):"
    assert th.records_preview(df.head(1))[0] == "The one record (the frame `df`):"
    assert list(preview.index) == ["r1", "r2"] and "line" not in preview.columns
    bins = th.distribution_bins(df)
    assert bins == {"0": 1, "1": 1, "2": 1, "3-5": 1, "6+": 1}
    assert th.bins_text(df, bins) == (
        "Records per bin: `0` → 1, `1` → 1, `2` → 1, `3-5` → 1, `6+` → 1 (n = 5)."
    )
    st = th.study(df, n_resamples=100, seed=1, level=0.8)
    assert th.gaps_text(st) == (
        "Gaps in the observed values: between 2 and 4, between 4 and 7. Every threshold inside "
        "one gap gives the same verdicts."
    )
    assert "percentile cluster-bootstrap 80% interval" in th.fire_rate_caption(st)


def test_counterfactual_frame_names_the_studys_level() -> None:
    df = _records()
    st = th.study(df, n_resamples=100, seed=1, level=0.8)
    table = th.counterfactual_frame(th.counterfactual(df, [1, 3]), st)
    assert "record fire rate [80% cluster-bootstrap CI]" in table.columns
    assert "session fail rate [80% Wilson CI]" in table.columns
    st95 = th.study(df, n_resamples=100, seed=1)
    table95 = th.counterfactual_frame(th.counterfactual(df, [1, 3]), st95)
    assert "session fail rate [95% Wilson CI]" in table95.columns
    # threshold 1 fails sessions s1, s3, s4 of the 4 determined ones
    lo, hi = wilson_interval(3, 4)
    assert lo is not None and hi is not None
    assert table95.loc[1, "session fail rate [95% Wilson CI]"] == (
        f"75.0% [{100 * lo:.1f}%, {100 * hi:.1f}%], n = 4"
    )


def test_threshold_figures_are_what_the_page_publishes() -> None:
    df = _records()
    pub = th.published_table(df)
    st = th.study(df, n_resamples=100, seed=1)
    cf = th.counterfactual(df, [1, 3])
    table = th.counterfactual_frame(cf, st)
    bins = th.distribution_bins(df)
    out = th.figures(df, pub, cf, table, bins, st)
    assert list(out) == [
        "fact",
        "value_sources",
        "published_table",
        "counterfactual",
        "counterfactual_detail",
        "distribution_bins",
        "maximum",
        "gaps",
        "threshold_study",
        "unmeasured",
    ]
    assert out["unmeasured"] == {"unmeasured": 0, "of": 6, "reasons": []}
    assert out["fact"] == "guard_blocked" and out["maximum"] == 7.0
    assert "v1_records" not in out["published_table"]
    assert out["counterfactual"] == [
        {"threshold": 1, "records_firing": 4, "sessions_failing": 3},
        {"threshold": 3, "records_firing": 2, "sessions_failing": 1},
    ]
    assert out["gaps"] == [g.to_dict() for g in st.gaps]
    assert len(out["counterfactual_detail"]) == 2


# ---------------------------------------------------------------------- rubric replay


def _scored() -> pd.DataFrame:
    rows = []
    for rubric in ("rubric-v1", "rubric-v2"):
        for sid in ("a", "b", "c"):
            rows.append({"rubric": rubric, "session_id": sid, "dimension": "gate-health"})
    rows.append({"rubric": "rubric-v2", "session_id": "d", "dimension": "gate-health"})
    return pd.DataFrame(rows)


def test_replay_sessions_and_changes() -> None:
    scored = _scored()
    n = replay.sessions_scored(scored)
    assert n == {"rubric-v1": 3, "rubric-v2": 4}
    assert replay.sessions_text(n).endswith("never scored): rubric-v1: n = 3, rubric-v2: n = 4")
    changed = pd.DataFrame(
        [
            ("a", "gate-health", "pass", "fail", "evidence differs"),
            ("b", "guard-friction", "(absent)", "not-applicable", replay.NEW_DIMENSION),
            ("c", "gate-health", "pass", "fail", "evidence differs"),
        ],
        columns=["session_id", "dimension", "rubric-v1", "rubric-v2", "why"],
    )
    assert replay.changed_text(changed, scored) == (
        "3 session × dimension verdicts differ (of 3 v1 verdicts)."
    )
    summary = replay.changed_summary(changed)
    assert summary.loc[("gate-health", "pass", "fail"), "sessions"] == 2
    assert replay.changed_summary(changed.iloc[:0]).empty
    caption, detail = replay.changed_detail(changed)
    assert caption.startswith("Changed verdicts other than the new `guard-friction` dimension: 2 ")
    # one row per reason: the explanation is read once, with the sessions it holds for
    assert list(detail.index) == [("gate-health", "pass", "fail")]
    row = detail.iloc[0]
    assert (row["why"], row["sessions"], row["session ids"]) == ("evidence differs", 2, "a, c")
    # reasons that differ only in a count are one reason: the count reads as its range
    counts = pd.DataFrame(
        [(s, "process-safety", "fail", "pass", f"blocked={n} (prevented); spiral (=0)")
         for s, n in (("d", 11), ("e", 3), ("f", 5))],
        columns=changed.columns,
    )  # fmt: skip
    _, detail = replay.changed_detail(counts)
    assert list(detail["why"]) == ["blocked=3–11 (prevented); spiral (=0)"]
    assert list(detail["sessions"]) == [3]


def test_replay_drift_flags_and_figures() -> None:
    assert replay.drift_text(None).startswith("No journal (`eval.jsonl`)")
    assert replay.drift_summary(None) is None
    empty = pd.DataFrame(columns=["rubric", "session_id", "dimension", "stored", "replayed today"])
    assert replay.drift_text(empty) == (
        "0 stored session × dimension verdicts differ from today's replay (0 sessions)."
    )
    assert replay.drift_summary(empty) is None
    drift = pd.DataFrame(
        [("rubric-v1", "a", "gate-health", "pass", "fail")] * 2, columns=empty.columns
    )
    assert "2 stored" in replay.drift_text(drift) and "(1 sessions)" in replay.drift_text(drift)
    summary = replay.drift_summary(drift)
    assert summary is not None and int(summary["sessions"].iloc[0]) == 2
    flags = pd.DataFrame(columns=["rubric", "dimension", "status", "flag", "detail"])
    assert replay.flags_view(flags) is None
    out = replay.figures({"rubric-v1": 3}, pd.DataFrame(), pd.DataFrame(), None, flags)
    assert out == {
        "sessions": {"rubric-v1": 3},
        "rates": [],
        "changed": [],
        "changed_count": 0,
        "journal_vs_replay": None,
        "flags": [],
        "instruments": None,  # a fleet's page: the facts and the rule judge are per directory
    }


# ---------------------------------------------------------------------- agreement study


def test_agreement_figures() -> None:
    labels = pd.DataFrame(
        {
            "item_id": ["i1", "i1", "i2", "i2"],
            "target": ["t2", "t2", "t1", "t1"],
            "family": "f",
            "rater": ["r1", "r2", "r1", "r2"],
            "label": ["pass", "pass", "fail", "pass"],
        }
    )
    frame = pd.DataFrame({"target": ["t1"], "x": [1.0]}).set_index("target")
    out = ag.figures(labels, frame.reset_index(), frame.reset_index(), frame, frame)
    assert out["n_items"] == 2 and out["targets"] == ["t1", "t2"]
    assert out["paradox"] == [{"target": "t1", "x": 1.0}]
    assert out["per_target"] == [{"target": "t1", "x": 1.0}]


# ---------------------------------------------------------------------- the notebooks


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_notebooks", REPO / "notebooks/build_notebooks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["threshold-study", "rubric-replay", "agreement-study"])
def test_notebook_code_cells_only_call_and_show(name: str) -> None:
    cells = _builder().NOTEBOOKS[name]
    for kind, source in cells:
        if kind != "code":
            continue
        assert "95%" not in source and "write_results({" not in source, source
        tree = ast.parse(source)
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)], source
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ListComp | ast.DictComp)]


def test_the_committed_notebooks_are_what_the_builder_writes(tmp_path: Path) -> None:
    builder = _builder()
    builder.HERE = tmp_path
    builder.main()
    for name in ("threshold-study", "rubric-replay", "agreement-study", "judge-calibration"):
        built = (tmp_path / f"{name}.ipynb").read_text(encoding="utf-8")
        committed = (REPO / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8")
        assert re.sub(r"\s+", " ", built) == re.sub(r"\s+", " ", committed), name
