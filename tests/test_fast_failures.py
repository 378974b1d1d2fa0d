"""A wrong path fails fast and loud: ``score --all``, ``study run`` and ``calibrate``.

``score --all`` on a directory without ``sessions.jsonl`` exits 1 as ``score`` does (a CI job
with a mistyped path must not pass), and writes nothing; an existing empty ledger stays 0.
``study run`` and ``calibrate`` refuse a path that names nothing before a kernel starts or the
numeric stack is imported: each is run in a fresh interpreter that reports what it imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli.main import main

HEAVY = ("numpy", "pandas", "scipy", "papermill", "nbformat", "matplotlib", "jupyter_client")


def _run_fresh(argv: list[str]) -> tuple[int, list[str], str]:
    """``evalkit argv`` in a new interpreter: exit code, heavy modules imported, stderr."""
    code = (
        "import json, sys\n"
        "from evalkit.cli.main import main\n"
        f"rc = main({argv!r})\n"
        f"print(json.dumps([rc, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    rc, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    return rc, heavy, done.stderr


@pytest.mark.parametrize("journal", [False, True], ids=["table", "journal"])
def test_score_all_without_sessions_jsonl_exits_1_and_writes_nothing(
    tmp_path: Path, journal: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", "--all", "--metrics-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--journal"] if journal else argv) == 1
    err = capsys.readouterr().err
    assert f"no sessions.jsonl in {str(tmp_path)!r}" in err
    assert list(tmp_path.iterdir()) == []  # no journal started in a directory that is no ledger
    # as for one session
    assert main(["score", "--metrics-dir", str(tmp_path), "--no-write"]) == 1


@pytest.mark.parametrize("journal", [False, True], ids=["table", "journal"])
def test_score_all_on_an_existing_empty_ledger_stays_0(
    tmp_path: Path, journal: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sessions.jsonl").write_text("", encoding="utf-8")
    argv = ["score", "--all", "--metrics-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--journal"] if journal else argv) == 0
    assert "warning: no session to score" in capsys.readouterr().err


def test_score_all_on_a_missing_directory_exits_1(tmp_path: Path) -> None:
    argv = ["score", "--all", "--metrics-dir", str(tmp_path / "nope"), "--no-progress"]
    assert main(argv) == 1 and main([*argv, "--journal"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["-p", "metrics_dir", "{missing}"],
            "parameter metrics_dir: '{missing}' is not a directory",
        ),
        (["-p", "metrics_dirs", "{missing}/*/m"], "parameter metrics_dirs: fleet glob"),
    ],
)
@pytest.mark.slow
def test_study_run_refuses_a_bad_path_before_any_kernel_or_heavy_import(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    missing = str(tmp_path / "no-such-dir")
    args = [a.replace("{missing}", missing) for a in argv]
    rc, heavy, err = _run_fresh(["study", "run", "rubric-replay", *args, "--out", str(tmp_path)])
    assert rc == 1 and heavy == []
    assert message.replace("{missing}", missing) in err
    assert not (tmp_path / "index.html").exists()


@pytest.mark.slow
def test_study_run_refuses_a_labels_path_that_matches_nothing(tmp_path: Path) -> None:
    pattern = str(tmp_path / "runs" / "*.jsonl")
    rc, heavy, err = _run_fresh(["study", "run", "agreement-study", "-p", "labels_path", pattern])
    assert rc == 1 and heavy == []
    assert (
        f"parameter labels_path: {pattern!r} does not exist (no file, folder or glob match)" in err
    )


@pytest.mark.parametrize(
    ("flag", "message"),
    [("--labels", "--labels {path}: does not exist"), ("--gold", "--gold {path}: does not exist")],
)
@pytest.mark.slow
def test_calibrate_refuses_a_bad_path_before_any_heavy_import(
    tmp_path: Path, flag: str, message: str
) -> None:
    path = str(tmp_path / "nothing-here")
    argv = (
        ["calibrate", flag, path]
        if flag == "--labels"
        else ["calibrate", "--rule-judge", flag, path]
    )
    rc, heavy, err = _run_fresh(argv)
    assert rc == 1 and heavy == []
    assert message.replace("{path}", path) in err


@pytest.mark.slow
def test_calibrate_names_a_folder_given_as_labels(tmp_path: Path) -> None:
    rc, heavy, err = _run_fresh(["calibrate", "--labels", str(tmp_path)])
    assert rc == 1 and heavy == [] and "is a directory, not a regular file" in err
