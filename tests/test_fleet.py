"""score_fleet without a cluster: naming a fleet, failures among good directories, the Arrow
trip of a table, progress, and evalkit without Dask installed.

The same scoring on a Dask LocalCluster is checked in tests/test_fleet_cluster.py.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO_ROOT
from fleet_support import (
    assert_matches_score_ledger,
    bad_directories,
    classify,
    make_fleet,
    rows,
)

import evalkit
from evalkit.errors import EvalkitError, VersionMismatchError
from evalkit.fleet.arrow import decode_ledger_tables, encode_ledger_table
from evalkit.fleet.score import (
    DirectoryOutcome,
    FleetFailureWarning,
    MissingExtraError,
    fleet_summary,
    resolve_fleet,
    run_fleet,
    score_fleet,
)
from evalkit.scoring.engine import SAMPLE_METRICS_DIR, score_ledger


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return make_fleet(tmp_path_factory.mktemp("fleet"))


# -- serial scoring --------------------------------------------------------------------------


@pytest.mark.parametrize("rubric", ["rubric-v1", "rubric-v2"])
@pytest.mark.slow
def test_serial_fleet_equals_score_ledger_per_directory(fleet: list[str], rubric: str) -> None:
    frame = score_fleet(fleet, rubric)
    assert assert_matches_score_ledger(frame, fleet, rubric) == set()
    summary = fleet_summary(frame)
    assert summary.failures == ()
    assert summary.scored == tuple(fleet)
    assert summary.sessions == sum(score_ledger(d)["session_id"].nunique() for d in fleet)
    assert frame.attrs["rubric_version"] == rubric
    assert isinstance(evalkit.score_fleet, type(score_fleet))  # the lazy public name


def test_hostile_ledger_skips_whitespace_ids_as_score_ledger_does(fleet: list[str]) -> None:
    hostile = fleet[-1]
    skipped = tuple(score_ledger(hostile).attrs["skipped"])
    summary = fleet_summary(score_fleet(fleet))
    assert skipped  # the generator writes whitespace-only ids: the check below is not vacuous
    assert summary.skipped == {hostile: skipped}


def test_failing_directories_are_listed_and_the_others_finish(
    fleet: list[str], tmp_path: Path
) -> None:
    bad = bad_directories(tmp_path)
    mixed = [fleet[0], *list(bad)[:3], fleet[1], *list(bad)[3:], fleet[2]]
    with pytest.warns(FleetFailureWarning, match="5 of 8 metrics directories failed"):
        frame = score_fleet(mixed)
    assert assert_matches_score_ledger(frame, mixed, "rubric-v2") == set(bad)
    summary = fleet_summary(frame)
    assert [f.metrics_dir for f in summary.failures] == [d for d in mixed if d in bad]
    for failure in summary.failures:
        assert failure.kind == "input"
        assert bad[failure.metrics_dir] in failure.reason, failure.reason
        assert failure.metrics_dir in summary.text()
    assert summary.scored == (fleet[0], fleet[1], fleet[2])
    assert "scored 3 of 8 metrics directories" in summary.text()


def test_a_fleet_where_every_directory_fails_is_an_empty_frame(tmp_path: Path) -> None:
    with pytest.warns(FleetFailureWarning, match="1 of 1"):
        frame = score_fleet([tmp_path / "nothing-here"])
    assert frame.empty and list(frame.columns)[-1] == "metrics_dir"
    assert fleet_summary(frame).failures[0].kind == "input"


def test_run_fleet_classifies_each_failure_and_keeps_fleet_order(tmp_path: Path) -> None:
    names = ["a-ok", "b-input", "c-io", "d-bug", "e-ok"]
    out = run_fleet([str(tmp_path / n) for n in names], classify)
    assert [v for v, _ in out] == ["scored a-ok", None, None, None, "scored e-ok"]
    kinds = [f.kind if f else None for _, f in out]
    assert kinds == [None, "input", "io", "internal", None]
    assert "internal error KeyError" in str(out[3][1])


def test_an_unknown_rubric_fails_before_any_directory_is_read(tmp_path: Path) -> None:
    with pytest.raises(VersionMismatchError):
        score_fleet([tmp_path / "never-read"], rubric="rubric-v9")


def test_a_client_that_is_not_a_dask_client_is_refused(fleet: list[str]) -> None:
    with pytest.raises(EvalkitError, match=r"client must be None \(serial\)"):
        score_fleet(fleet[:1], client=object())


def test_progress_callback_sees_every_directory_once(fleet: list[str], tmp_path: Path) -> None:
    seen: list[tuple[DirectoryOutcome, int, int]] = []
    with pytest.warns(FleetFailureWarning):
        score_fleet(
            [*fleet[:2], tmp_path / "gone"], progress=lambda o, d, t: seen.append((o, d, t))
        )
    assert [(o.metrics_dir, d, t) for o, d, t in seen] == [
        (fleet[0], 1, 3),
        (fleet[1], 2, 3),
        (str(tmp_path / "gone"), 3, 3),
    ]
    assert [o.ok for o, _, _ in seen] == [True, True, False]
    assert seen[0][0].rows == len(score_ledger(fleet[0])) and seen[0][0].payload_bytes > 0


def test_progress_bar_goes_to_stderr(fleet: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    score_fleet(fleet[:2], progress=True)
    captured = capsys.readouterr()
    assert "score_fleet (rubric-v2)" in captured.err and "2/2" in captured.err
    assert captured.out == ""


def test_summary_survives_pandas_operations(fleet: list[str]) -> None:
    frame = score_fleet(fleet[:2])
    part = frame[frame["status"] == "pass"].copy()
    assert fleet_summary(part) is fleet_summary(frame)  # immutable: never deep-copied
    with pytest.raises(EvalkitError, match="no fleet summary"):
        fleet_summary(score_ledger(fleet[0]))


# -- naming a fleet --------------------------------------------------------------------------


def test_glob_list_file_and_list_name_the_same_fleet(fleet: list[str]) -> None:
    root = Path(fleet[0]).parents[1]
    simulated = [d for d in fleet if "hostile" not in d]
    by_glob = resolve_fleet(str(root / "repo-[0-9]*" / "metrics"))
    assert by_glob == sorted(simulated)
    listing = root / "fleet.txt"
    # relative lines are read from the list's folder; comments and blank lines are skipped
    lines = ["# the fleet", "", *(os.path.relpath(d, root) for d in simulated[:-1]), simulated[-1]]
    listing.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by_file = resolve_fleet(listing)
    assert [os.path.normpath(d) for d in by_file] == simulated
    assert resolve_fleet([Path(d) for d in simulated]) == simulated
    assert resolve_fleet(simulated[0]) == [simulated[0]]  # one directory
    frames = [score_fleet(spec) for spec in (str(root / "repo-[0-9]*" / "metrics"), listing)]
    assert rows(frames[0]) == rows(frames[1])
    pd.testing.assert_frame_equal(frames[0], score_fleet(sorted(simulated)))


def test_a_recursive_glob_finds_nested_metrics_directories(tmp_path: Path) -> None:
    for name in ("a/x/metrics", "b/metrics", "c/d/e/metrics"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "b" / "metrics.txt").write_text("not a directory\n", encoding="utf-8")
    found = resolve_fleet(str(tmp_path / "**" / "metrics*"))
    assert [os.path.relpath(d, tmp_path) for d in found] == [
        "a/x/metrics",
        "b/metrics",
        "c/d/e/metrics",
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([], "metrics_dirs is empty"),
        (["a", "b", "./a"], r"names './a' twice \(entries 1 and 3\)"),
        ([1], r"metrics_dirs\[0\]: expected a path"),
        (42, "must be a list of paths"),
        (b"bytes/*", "must be a list of paths"),
        ({"a": 1}, "must be a list of paths"),
    ],
)
def test_bad_fleet_names_are_clear_errors(spec: object, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        resolve_fleet(spec)  # type: ignore[arg-type]


def test_bad_fleet_paths_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalkitError, match="matched no directory"):
        resolve_fleet(str(tmp_path / "*" / "metrics"))
    (tmp_path / "file.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"1 match\(es\), none a directory"):
        resolve_fleet(str(tmp_path / "*.jsonl"))
    with pytest.raises(EvalkitError, match="no such file or directory, and not a glob"):
        resolve_fleet(tmp_path / "missing")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(EvalkitError, match="FIFO"):  # refused at once, never blocks
        resolve_fleet(tmp_path / "fifo")
    (tmp_path / "empty.txt").write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(EvalkitError, match="names no directory"):
        resolve_fleet(tmp_path / "empty.txt")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9/metrics\n")
    with pytest.raises(EvalkitError, match="line 1: invalid UTF-8"):
        resolve_fleet(tmp_path / "latin1.txt")
    (tmp_path / "twice.txt").write_text("x\n./x\n", encoding="utf-8")
    with pytest.raises(EvalkitError, match="twice"):
        resolve_fleet(tmp_path / "twice.txt")


# -- the table's trip ------------------------------------------------------------------------


def _table(scores: list[object]) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame(
        {
            "session_id": pd.Series([f"s{i % 2}" for i in range(n)], dtype=object),
            "dimension": pd.Series(["plan-fidelity"] * n, dtype=object),
            "status": pd.Series(["pass"] * n, dtype=object),
            "score": pd.Series(scores, dtype=object),
            "evidence": pd.Series([f"e{i % 3} ünïcode \ud83d" for i in range(n)], dtype=object),
        }
    )


def test_scores_come_back_with_their_value_and_type() -> None:
    scores = [None, 0, 1, -3, 2**70, 0.1, 1 / 3, -0.0, 1e300, 5e-324, 0.5, None, 7]
    frame = _table(scores)
    back = decode_ledger_tables([("d", encode_ledger_table(frame))], "metrics_dir")
    assert [(type(s).__name__, repr(s)) for s in back["score"]] == [
        (type(s).__name__, repr(s)) for s in scores
    ]
    assert rows(back.drop(columns="metrics_dir")) == rows(frame)
    assert back["metrics_dir"].tolist() == ["d"] * len(scores)


@pytest.mark.parametrize("bad", [True, "0.5", float("nan")])
def test_a_score_that_is_not_a_json_number_is_refused(bad: object) -> None:
    frame = _table([bad])
    if isinstance(bad, float):
        # NaN is a float: it travels as 'nan' and comes back NaN; score_ledger never writes it
        back = decode_ledger_tables([("d", encode_ledger_table(frame))], "metrics_dir")
        assert back["score"][0] != back["score"][0]
        return
    with pytest.raises(EvalkitError, match="is not a JSON number"):
        encode_ledger_table(frame)


def test_the_arrow_stream_is_far_smaller_than_a_pickled_frame(fleet: list[str]) -> None:
    frame = score_ledger(fleet[3])
    payload = encode_ledger_table(frame)
    pickled = len(pickle.dumps(frame, protocol=5))
    assert len(payload) * 4 < pickled, (len(payload), pickled)  # measured: ~20x on 57 sessions
    empty = decode_ledger_tables([], "metrics_dir")
    assert empty.empty and list(empty.columns)[-1] == "metrics_dir"


# -- without Dask ----------------------------------------------------------------------------

_HIDE_DASK = textwrap.dedent(
    """
    import importlib.abc, sys

    class _NoDask(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("dask", "distributed"):
                raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)")
            return None

    sys.meta_path.insert(0, _NoDask())
    """
)

_WITHOUT_DASK = textwrap.dedent(
    """
    import json, pkgutil, importlib, sys
    try:
        import dask
        print("dask still importable", file=sys.stderr); sys.exit(9)
    except ImportError:
        pass
    import evalkit
    from evalkit.fleet.score import MissingExtraError, fleet_client
    modules = [m.name for m in pkgutil.walk_packages(evalkit.__path__, "evalkit.")
               if not m.name.endswith("__main__")]  # importing __main__ runs the CLI
    for name in modules:
        importlib.import_module(name)
    frame = evalkit.score_fleet([sys.argv[1]])
    from evalkit.cli.main import main
    cli = main(["score", "--all", "--metrics-dir", sys.argv[1], "--no-progress",
                "--format", "jsonl", "--out", sys.argv[2]])
    messages = {}
    for label, call in [
        ("address", lambda: evalkit.score_fleet([sys.argv[1]], client="tcp://127.0.0.1:1")),
        ("local", lambda: fleet_client(workers=2).__enter__()),
    ]:
        try:
            call()
        except MissingExtraError as exc:
            messages[label] = [str(exc), isinstance(exc, ImportError)]
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
    print(json.dumps({"modules": len(modules), "rows": len(frame), "messages": messages, "cli": cli,
                      "loaded": loaded}))
    """
)


@pytest.mark.slow
def test_without_dask_everything_imports_and_serial_scoring_runs(tmp_path: Path) -> None:
    code = _HIDE_DASK + _WITHOUT_DASK
    table = tmp_path / "table.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", code, str(SAMPLE_METRICS_DIR), str(table)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["modules"] > 50  # every evalkit module imported
    assert out["rows"] == len(score_ledger(SAMPLE_METRICS_DIR))
    assert out["loaded"] == []
    assert out["cli"] == 0 and len(table.read_text(encoding="utf-8").splitlines()) == out["rows"]
    for label in ("address", "local"):
        message, is_import_error = out["messages"][label]
        assert "pip install 'evalkit[fleet]'" in message and is_import_error, label


def test_missing_extra_error_is_both_evalkit_and_import_error() -> None:
    assert issubclass(MissingExtraError, EvalkitError) and issubclass(
        MissingExtraError, ImportError
    )


def test_a_ledger_with_lone_surrogates_scores_the_same_in_a_fleet(tmp_path: Path) -> None:
    # JSON may escape a lone surrogate; Arrow's string type cannot hold one, the fleet must
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    line = (
        '{"session_id": "s-\\ud83d-1", "started_at": "2026-09-01T10:00:00.000Z", '
        '"completed_at": "2026-09-01T11:00:00.000Z", "plan_fidelity": {"planned": 3}}\n'
    )
    (metrics / "sessions.jsonl").write_text(line, encoding="utf-8")
    expected = score_ledger(metrics)
    assert expected["session_id"][0] == "s-\ud83d-1"
    assert assert_matches_score_ledger(score_fleet([metrics]), [str(metrics)], "rubric-v2") == set()
