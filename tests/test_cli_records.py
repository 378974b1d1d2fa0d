"""The record commands from the outside: evalkit score / verify / journal / report."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import require_shared
from record_factory import TIMESTAMP

import evalkit
from evalkit.cli.main import main
from evalkit.record.seal import seal_record

CASE = "random-20260919-002"


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", CASE), target)
    return target


def _score(metrics: Path, *extra: str) -> list[str]:
    return ["score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP, *extra]


def _json_line(out: str) -> dict:
    lines = out.splitlines()
    assert len(lines) == 1, out
    return json.loads(lines[0])


# ----------------------------------------------------------------------------- score


@pytest.mark.slow
def test_score_json_matches_the_reference_exit_code_and_record_for_every_public_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`score --json --no-write` behaves like the reference `eval-session --json --no-write`."""
    root = require_shared("conformance", "public")
    checked = 0
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        args = json.loads((case / "args.json").read_text(encoding="utf-8"))
        for rubric in ("rubric-v1", "rubric-v2"):
            expected = json.loads((case / f"expected-{rubric[-2:]}.json").read_text("utf-8"))
            argv = _score(case, "--rubric", rubric, "--json", "--no-write")
            if args.get("session") is not None:
                argv += ["--session", args["session"]]
            code = main(argv)
            out, err = capsys.readouterr()
            assert code == expected["exit_code"], (case.name, rubric, err)
            if expected["record"] is None:
                assert out == "" and expected["resolved"]["error"] in err
                continue
            rec = _json_line(out)
            assert rec["session_id"] == expected["resolved"]["session_id"]
            assert rec["kpis"] == expected["record"]["kpis"], case.name
            assert rec["dimensions"] == expected["record"]["dimensions"], case.name
            assert not (case / "eval.jsonl").exists()  # --no-write wrote nothing
            checked += 1
    assert checked == 124


def test_score_writes_the_journal_and_prints_a_table(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(_score(metrics, "--model-id", "m-1", "--model-source", "config", "--handle", "me"))
    out, err = capsys.readouterr()
    assert code == 0, err
    from evalkit.journal import reader as journal

    stored = journal.read(metrics / "eval.jsonl").records
    assert len(stored) == 1
    rec = stored[0]
    assert rec["model"] == {"id": "m-1", "source": "config"}
    assert rec["handle"] == "me" and rec["anonymized"] is False
    assert rec["timestamp"] == TIMESTAMP
    assert f"run_id    {rec['run_id']}" in out
    for dim in rec["dimensions"]:
        assert any(
            line.split()[:1] == [dim["id"]] and dim["status"] in line for line in out.splitlines()
        )
    assert f"journal   appended to {metrics / 'eval.jsonl'}" in out


def test_record_that_cannot_be_appended_is_printed_and_exits_2(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "a-directory"
    blocked.mkdir()
    code = main(_score(metrics, "--json", "--journal", str(blocked)))
    out, err = capsys.readouterr()
    assert code == 2
    rec = _json_line(out)
    assert rec["run_id"].endswith("-eval-20261201T000000000Z")
    assert "NOT appended" in err and str(blocked) in err


def test_score_never_creates_the_journal_directory(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """QA: --journal /nonexistent/dir/eval.jsonl silently created the directories.

    Decided: refuse (a mistyped --journal would start a second journal); the record is still
    printed and the exit code is 2 (SPEC section 3); --help says so.
    """
    target = tmp_path / "nonexistent" / "dir" / "eval.jsonl"
    for extra in (["--json"], []):
        code = main(_score(metrics, *extra, "--journal", str(target)))
        out, err = capsys.readouterr()
        assert code == 2
        assert not (tmp_path / "nonexistent").exists()
        assert f"the record was NOT appended to {target}: directory " in err
        assert f"{str(target.parent)!r} does not exist" in err
        if extra:
            assert _json_line(out)["run_id"].endswith("-eval-20261201T000000000Z")
        else:
            assert "run_id    " in out and "journal   appended" not in out
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "its directory must exist: it is never created" in help_text


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rubric", "rubric-v9"], "--rubric: unknown rubric version 'rubric-v9'"),
        (["--model-source", "guess"], "--model-source: must be one of"),
        (["--session", "main-nope"], "session not found: main-nope"),
        (["--all", "--session", "x"], "--session cannot be combined with --all"),
        (["--format", "csv"], "--format only applies to --all"),
    ],
)
def test_user_errors_exit_1_on_stderr(
    metrics: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(_score(metrics, *extra))
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert message in err
    assert not (metrics / "eval.jsonl").exists()


def test_missing_metrics_dir_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--metrics-dir", str(tmp_path / "absent")]) == 1
    assert "is not a directory" in capsys.readouterr().err


def test_bad_timestamp_is_a_user_error(metrics: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", "--metrics-dir", str(metrics), "--timestamp", "yesterday"])
    assert code == 1
    assert "--timestamp: must be ISO-8601" in capsys.readouterr().err


def test_whitespace_session_id_is_an_evaluation_error_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reference resolves a whitespace-only id, then its record validation refuses it.
    (tmp_path / "sessions.jsonl").write_text(
        json.dumps(
            {
                "session_id": "   ",
                "status": "completed",
                "started_at": "2026-09-19T08:00:00.000Z",
                "completed_at": "2026-09-19T09:00:00.000Z",
                "total_files_changed": 2,
                "agent_summary": {"complete": 1},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    code = main(["score", "--metrics-dir", str(tmp_path), "--json", "--no-write"])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and "session_id" in err


# ----------------------------------------------------------------------------- --all


def test_score_all_formats_match_score_ledger(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = evalkit.score_ledger(metrics)
    assert main(["score", "--all", "--metrics-dir", str(metrics)]) == 0
    out, err = capsys.readouterr()
    assert "score --all (rubric-v2)" in err and "100%" in err  # the progress bar, on stderr
    csv = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert list(csv.columns) == ["session_id", "dimension", "status", "score", "evidence"]
    assert csv["evidence"].tolist() == expected["evidence"].tolist()
    assert csv["status"].tolist() == expected["status"].tolist()

    out_jsonl = tmp_path / "t.jsonl"
    assert main(["score", "--all", "--metrics-dir", str(metrics), "--out", str(out_jsonl)]) == 0
    rows = [json.loads(line) for line in out_jsonl.read_text("utf-8").splitlines()]
    assert [r["dimension"] for r in rows] == expected["dimension"].tolist()
    assert "writing 24 rows as jsonl" in capsys.readouterr().err  # format from --out's suffix

    out_parquet = tmp_path / "t.parquet"
    argv = [
        "score",
        "--all",
        "--metrics-dir",
        str(metrics),
        "--format",
        "parquet",
        "--out",
        str(out_parquet),
    ]
    assert main([*argv, "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
    back = pd.read_parquet(out_parquet)
    # parquet stores the score as a nullable double: a null reads back as NaN, not None
    back["score"] = back["score"].astype(object).where(back["score"].notna(), None)
    pd.testing.assert_frame_equal(back, expected.reset_index(drop=True), check_dtype=False)
    assert not (metrics / "eval.jsonl").exists()  # the batch table is not the journal


# ----------------------------------------------------------------------------- verify


def test_verify_cli_agreement_drift_and_version_mismatch(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_score(metrics, "--json")) == 0
    run_id = _json_line(capsys.readouterr().out)["run_id"]

    assert main(["verify", run_id, "--metrics-dir", str(metrics)]) == 0
    assert capsys.readouterr().out.startswith(f"agreement: {run_id}")

    journal_file = metrics / "eval.jsonl"
    rec = json.loads(journal_file.read_text("utf-8"))
    gate = next(d for d in rec["dimensions"] if d["id"] == "gate-health")
    gate["status"] = "fail" if gate["status"] != "fail" else "pass"
    journal_file.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert main(["verify", run_id, "--metrics-dir", str(metrics)]) == 1
    lines = capsys.readouterr().out.splitlines()
    # the first line says whether a verdict changed; then one classified line per difference,
    # and the seal the edit broke
    assert lines[0].endswith("[verdict, seal]; VERDICT CHANGED: gate-health")
    assert lines[1].startswith("drift [verdict]: dimension gate-health field status: stored ")
    assert lines[2].startswith("drift [seal]: dimension record field provenance.record_sha256:")
    assert "the record was changed after it was written" in lines[2]

    rec["rubric_version"] = "rubric-v7"
    rec["provenance"]["rubric_sha256"] = "7" * 64  # a text this evalkit does not have
    journal_file.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    # edited after it was written: drift, whatever version it now claims
    assert main(["verify", run_id, "--metrics-dir", str(metrics), "--json"]) == 1
    assert [d["kind"] for d in json.loads(capsys.readouterr().out)["drifts"]] == ["seal"]
    # as written (and sealed) by an evalkit that knew rubric-v7: a version mismatch
    journal_file.write_text(json.dumps(seal_record(rec)) + "\n", encoding="utf-8")
    assert main(["verify", run_id, "--metrics-dir", str(metrics), "--json"]) == 3
    result = json.loads(capsys.readouterr().out)
    assert result["outcome"] == "version-mismatch" and result["drifts"] == []

    assert main(["verify", "no-such-eval-1", "--metrics-dir", str(metrics)]) == 1
    assert "unknown run id 'no-such-eval-1'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- journal, report


def test_journal_cli_lists_and_summarizes(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_score(metrics, "--json")) == 0
    assert main(_score(metrics, "--json")) == 0  # the same run twice
    # run_id names session + timestamp only, so the v1 run gets its own timestamp
    v1 = ["score", "--metrics-dir", str(metrics), "--json", "--rubric", "rubric-v1"]
    assert main([*v1, "--timestamp", "2026-10-02T00:00:00.000Z"]) == 0
    run_id = _json_line(capsys.readouterr().out.splitlines()[0])["run_id"]
    with (metrics / "eval.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"torn": ')

    assert main(["journal", "--metrics-dir", str(metrics), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["records"] == 3
    assert summary["by_rubric_version"] == {"rubric-v1": 1, "rubric-v2": 2}
    assert summary["duplicates"] == {run_id: [1, 2]}
    assert summary["diagnostics"][0]["line"] == 4 and summary["diagnostics"][0]["kind"] == "torn"
    assert [e["line"] for e in summary["entries"]] == [1, 2, 3]

    assert main(["journal", "--journal", str(metrics / "eval.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "rubrics   rubric-v1: 1, rubric-v2: 2" in out
    assert f"duplicate {run_id} on lines 1, 2" in out
    assert "skipped   line 4: torn:" in out

    assert main(["journal", "--metrics-dir", str(metrics / "nowhere")]) == 1
    assert "no journal file there" in capsys.readouterr().err


def test_report_cli_writes_the_html(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_score(metrics, "--json")) == 0
    run_id = _json_line(capsys.readouterr().out)["run_id"]
    out_file = tmp_path / "report.html"
    assert main(["report", run_id, "--metrics-dir", str(metrics), "--out", str(out_file)]) == 0
    page = out_file.read_text("utf-8")
    assert run_id in page and "What this does not prove" in page
    assert f"evalkit verify {run_id} --metrics-dir {metrics}" in page
    assert (
        main(["report", "missing-eval-1", "--metrics-dir", str(metrics), "--out", str(out_file)])
        == 1
    )


@pytest.mark.parametrize("command", ["score", "verify", "journal", "report"])
def test_every_record_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"usage: evalkit {command}" in capsys.readouterr().out


# ----------------------------------------------------------------------------- console script


@pytest.mark.slow
def test_console_script_scores_and_verifies(metrics: Path) -> None:
    script = Path(sys.executable).parent / "evalkit"
    assert script.exists(), f"console script missing at {script} (pip install -e .)"
    done = subprocess.run(
        [str(script), *_score(metrics, "--json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    run_id = _json_line(done.stdout)["run_id"]
    verified = subprocess.run(
        [str(script), "verify", run_id, "--metrics-dir", str(metrics)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("agreement:")
