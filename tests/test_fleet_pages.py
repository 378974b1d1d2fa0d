"""What the rubric-replay and threshold-study pages show of a fleet (issue 15, item 3), checked
without a kernel: the fleet's figures are those of :mod:`evalkit.analyses.fleet` (never a
second definition), the pooled tables count what the one-directory functions count on each
repository, and session ids that repeat across repositories are never merged.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest
from fleet_support import journaled_fleet

from evalkit.analyses import fleet as af
from evalkit.analyses import fleet_page as fp
from evalkit.analyses import fmt_estimate, replay
from evalkit.analyses import replay_fleet as rf
from evalkit.analyses import threshold as th
from evalkit.analyses import threshold_fleet as tf
from evalkit.errors import EvalkitError
from evalkit.files.escape import markdown_text
from evalkit.fleet.score import MissingExtraError, score_fleet
from evalkit.stats import wilson_interval


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return journaled_fleet(tmp_path_factory.mktemp("fleet"), n_sessions=14, seed=60)


@pytest.fixture(scope="module")
def scored(fleet: list[str]) -> pd.DataFrame:
    return rf.score_both(fleet)


def test_the_fleet_shares_session_ids_and_the_page_keeps_them_apart(
    fleet: list[str], scored: pd.DataFrame
) -> None:
    ids = [set(score_fleet([d])["session_id"]) for d in fleet]
    assert ids[0] & ids[1]  # the same ids in two repositories: merging them would undercount
    n_sessions = replay.sessions_scored(scored)
    assert n_sessions["rubric-v2"] == sum(len(x) for x in ids)
    assert set(scored["repository"]) == {"repo-0", "repo-1", "repo-2"}
    assert (scored["session_id"] == scored["repository"] + "/" + scored["ledger_session_id"]).all()


@pytest.mark.slow
def test_pooled_status_rates_count_as_the_replay_study_and_resample_repositories(
    fleet: list[str], scored: pd.DataFrame
) -> None:
    pooled = rf.status_rates(scored)
    per_dir = [replay.status_rates(replay.score_both(d)) for d in fleet]
    keys = ["rubric", "dimension", "status"]
    summed = pd.concat(per_dir).groupby(keys, sort=False)[["k", "n"]].sum().reset_index()
    merged = pooled.merge(summed, on=keys, suffixes=("", "_sum"))
    assert len(merged) == len(pooled) == len(per_dir[0])
    assert (merged["k"] == merged["k_sum"]).all() and (merged["n"] == merged["n_sum"]).all()
    # every fail interval is fire_rates' pooled interval (same units, seed and resamples), so
    # the page's flag table and its section "Across repositories" can never disagree
    signals = {(s.key["rubric"], s.key["dimension"]): s.rates for s in rf.fire_rates(scored, 0.1)}
    fails = pooled[pooled["status"] == "fail"].set_index(["rubric", "dimension"])
    assert len(signals) == 8  # 4 graded dimensions x 2 rubrics; reported-only ones have none
    for key, rates in signals.items():
        row = fails.loc[key]
        assert (row["k"], row["n"]) == (rates.pooled.k, rates.pooled.n)
        assert (row["ci_low"], row["ci_high"]) == tuple(rates.confidence_interval())
    flags = replay.dead_instrument_flags(pooled, 0.1)
    for key, rates in signals.items():
        mine = flags[(flags["rubric"] == key[0]) & (flags["dimension"] == key[1])]
        assert set(mine.loc[mine["status"] == "fail", "flag"]) == set(rates.flags)


@pytest.mark.slow
def test_the_signals_are_fire_rates_called_directly(fleet: list[str], scored: pd.DataFrame) -> None:
    signals = rf.fire_rates(scored, 0.1)
    frame = score_fleet(fleet, "rubric-v1")
    direct = af.fire_rates(
        af.dimension_units(frame, "process-safety", denominator="scored"),
        label="rubric-v1 process-safety fail", n_resamples=rf.N_RESAMPLES, seed=rf.SEED,
    )  # fmt: skip
    [mine] = [s for s in signals if s.key == {"rubric": "rubric-v1", "dimension": "process-safety",
                                              "status": "fail"}]  # fmt: skip
    assert mine.rates.to_json_dict() == direct.to_json_dict()
    table = fp.per_repository_frame(signals)
    assert list(table.index) == ["pooled (cluster bootstrap)", "repo-0", "repo-1", "repo-2"]
    row = direct.per_repository.iloc[1]
    lo, hi = wilson_interval(int(row["k"]), int(row["n"]))
    cell = table.loc["repo-1", ("rubric-v1", "process-safety")]
    assert (
        cell.startswith(f"{row['k']}/{row['n']} = ")
        and f"[{100 * lo:.1f}%, {100 * hi:.1f}%]" in cell
    )
    summary = fp.summary_frame(signals)
    assert summary.loc["rubric-v1 process-safety fail", "pooled flag"] == "; ".join(direct.flags)
    views = fp.heterogeneity(signals)
    assert [h for h, _, _ in views] == [
        f"### {markdown_text(s.rates.label)}"
        for s in signals
        if s.rates.flags or fp.drivers(s.rates)
    ]
    for _, _, loo in views:
        assert set(loo.index) == {"repo-0", "repo-1", "repo-2"}


@pytest.mark.slow
def test_threshold_sessions_count_as_the_threshold_study_per_repository(fleet: list[str]) -> None:
    df = tf.fact_table(fleet)
    cf = th.counterfactual(df, [1, 3, 6])
    per_dir = [th.counterfactual(th.fact_table(d), [1, 3, 6]) for d in fleet]
    for i, row in enumerate(cf):
        assert row["sessions_failing"] == sum(p[i]["sessions_failing"] for p in per_dir)
        assert row["records_firing"] == sum(p[i]["records_firing"] for p in per_dir)
    signals = tf.fire_rates(df, [6, 1, 3], ceiling=0.1, level=0.95, n_resamples=200, seed=4)
    assert [s.key["threshold"] for s in signals] == [1, 3, 6]
    for row, s in zip(cf, signals, strict=True):
        assert s.rates.pooled.k == row["sessions_failing"]
        assert s.rates.pooled.n == row["sessions"] - row["sessions_undetermined"]
        direct = af.fire_rates(
            af.fact_units(af.fleet_fact_table(fleet), row["threshold"]),
            label=f"guard_blocked ≥ {row['threshold']}", n_resamples=200, seed=4,
        )  # fmt: skip
        assert s.rates.to_json_dict() == direct.to_json_dict()
    st = th.study(df, n_resamples=200, seed=4, cluster_column=tf.cluster_column(fleet))
    assert st.n_clusters == 3  # the curve's interval resamples repositories
    intervals, method = tf.session_intervals(signals)
    table = th.counterfactual_frame(cf, st, sessions=(intervals, method))
    column = f"session fail rate [95% {tf.METHOD} CI]"
    for row, s in zip(cf, signals, strict=True):
        ci = s.rates.confidence_interval()
        assert table.loc[row["threshold"], column] == fmt_estimate(
            s.rates.statistic, (ci.low, ci.high), s.rates.pooled.n, percent=True
        )


def test_one_directory_keeps_its_page(tmp_path: Path) -> None:
    assert fp.resolve("some/dir", [], "") is None
    assert fp.resolve("", "", "") is None
    assert fp.shown({"metrics_dir": "", "ceiling": 0.1}, [], "") == {
        "metrics_dir": "",
        "ceiling": 0.1,
    }
    assert tf.cluster_column(None) == "session_id" and tf.session_intervals(None) is None
    frame = pd.DataFrame({"session_id": ["a"], "value": [1]})
    assert fp.without_paths(frame) is frame
    assert fp.with_fleet({"x": 1}, None) == {"x": 1}


@pytest.mark.parametrize(
    ("metrics_dir", "metrics_dirs", "scheduler", "message"),
    [
        ("one", ["a"], "", "not both"),
        ("", [], "tcp://127.0.0.1:8786", "no fleet was given"),
        ("", [1, 2], "", r"metrics_dirs\[0\]: expected a path"),
        ("", "/nonexistent-*/metrics", "", "matched no directory"),
        ("", ["a"], None, "scheduler must be a string"),
    ],
)
def test_a_fleet_named_wrongly_is_a_clear_error(
    metrics_dir: str, metrics_dirs: object, scheduler: object, message: str
) -> None:
    with pytest.raises(EvalkitError, match=message):
        fp.resolve(metrics_dir, metrics_dirs, scheduler)  # type: ignore[arg-type]


def test_a_scheduler_without_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    with fp.client("") as client:
        assert client is None  # serial: no Dask needed
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails: not installed
    with pytest.raises(MissingExtraError) as raised, fp.client("tcp://127.0.0.1:9"):
        pass
    text = str(raised.value)
    assert "pip install 'evalkit[fleet]'" in text and "leave scheduler empty" in text
