"""The command line on hostile input: clear errors naming file, line and reason, never a
traceback, never a hang; the ledger is never written; output never crashes on a surrogate.

Findings of issue 10 pinned here: 8 (``--journal`` naming a ledger file), 10 (lone surrogates,
non-UTF-8 argv), 11 (deep nesting in a record file), 12 (FIFOs and devices as input files),
13 (invalid UTF-8 in ``stats kappa --labels``), 14 (score never named the unreadable lines),
15 (sessions.jsonl missing / a directory / a FIFO / a dangling symlink said nothing useful).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_shared
from hostile import fifo, main_in_child
from record_factory import TIMESTAMP, make_record

from evalkit.cli.main import main
from evalkit.journal import reader as journal

REPO_ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = "events-20260917T000000Z_20260917T230000Z.jsonl"


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), target)
    return target


def _score(metrics: Path, *extra: str) -> list[str]:
    return ["score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP, *extra]


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# ------------------------------------------------------------------ finding 8: --journal


@pytest.mark.parametrize(
    "target",
    ["sessions.jsonl", "events.jsonl", "link-to-sessions", "hardlink-to-events", "archive", "ring"],
)
def test_journal_may_not_name_a_ledger_file(
    metrics: Path, tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 8: --journal <metrics>/sessions.jsonl appended records into the ledger."""
    (metrics / "_archive").mkdir()
    (metrics / "_archive" / ARCHIVE).write_text("", encoding="utf-8")
    (metrics / "events.jsonl.1").write_text("", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = {
        "sessions.jsonl": metrics / "sessions.jsonl",
        "events.jsonl": metrics / "events.jsonl",
        "link-to-sessions": elsewhere / "eval.jsonl",
        "hardlink-to-events": elsewhere / "hard.jsonl",
        "archive": metrics / "_archive" / ARCHIVE,
        "ring": metrics / "events.jsonl.1",
    }[target]
    if target == "link-to-sessions":
        path.symlink_to(metrics / "sessions.jsonl")
    if target == "hardlink-to-events":
        os.link(metrics / "events.jsonl", path)
    before = _digests(metrics)
    code = main(_score(metrics, "--journal", str(path)))
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"--journal {str(path)!r} is the ledger's " in err
    assert _digests(metrics) == before
    # the default journal beside the ledger is of course fine
    assert main(_score(metrics)) == 0


# --------------------------------------------------------------- finding 14: diagnostics


def test_score_names_the_unreadable_lines_and_lists_all_on_request(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (metrics / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("".join(f"{{oops {i}\n" for i in range(7)) + "[1]\n")
    total = sum(1 for _ in (metrics / "events.jsonl").open(encoding="utf-8"))
    assert main(_score(metrics, "--no-write")) == 0
    err = capsys.readouterr().err
    assert "ledger: 8 line(s) or file(s) skipped or doubted while reading:" in err
    events = metrics / "events.jsonl"
    assert f"  {events}:{total - 7}: malformed line skipped: " in err
    assert err.count(f"  {events}:") == 5
    assert "... and 3 more (--diagnostics lists all)" in err
    for flag in ("--diagnostics", "-v"):
        assert main(_score(metrics, "--no-write", flag)) == 0
        err = capsys.readouterr().err
        assert err.count(f"  {events}:") == 8
        assert f"  {events}:{total}: not a JSON object (array)" in err


def test_score_diagnostics_follow_the_rubric_reading(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rubric-v1 reads only events.jsonl: an archive's bad line is not its diagnostic."""
    (metrics / "_archive").mkdir()
    (metrics / "_archive" / ARCHIVE).write_text("{oops\n", encoding="utf-8")
    assert main(_score(metrics, "--no-write", "--rubric", "rubric-v1")) == 0
    assert ARCHIVE not in capsys.readouterr().err
    assert main(_score(metrics, "--no-write")) == 0
    assert f"{ARCHIVE}:1: malformed line skipped" in capsys.readouterr().err


# ------------------------------------------------------------ finding 15: sessions.jsonl


@pytest.mark.parametrize("state", ["missing", "directory", "fifo", "dangling", "loop"])
def test_an_unusable_sessions_file_is_named_with_its_reason(tmp_path: Path, state: str) -> None:
    """Finding 15: all of these said only 'no session records found in sessions.jsonl'."""
    sessions = tmp_path / "sessions.jsonl"
    if state == "directory":
        sessions.mkdir()
    elif state == "fifo":
        fifo(sessions)
    elif state == "dangling":
        sessions.symlink_to(tmp_path / "moved.jsonl")
    elif state == "loop":
        sessions.symlink_to(sessions)
    outcome = main_in_child(["score", "--metrics-dir", str(tmp_path)], timeout=30)
    assert outcome.kind == "returned", outcome
    code, out, err = outcome.value
    reason = {
        "missing": "no such file",
        "directory": "is a directory",
        "fifo": "is a named pipe (FIFO)",
        "dangling": "a dangling symlink",
        "loop": "a symlink loop",
    }[state]
    assert code == 1 and out == ""
    assert "no session records found in sessions.jsonl" in err
    assert f"sessions.jsonl {str(sessions)!r}: " in err and reason in err


# ------------------------------------------------------------------ finding 10: surrogates


def _surrogate_ledger(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    (root / "sessions.jsonl").write_text(
        '{"session_id":"s\\ud800x","status":"completed","started_at":"2026-09-19T08:00:00.000Z",'
        '"completed_at":"2026-09-19T09:00:00.000Z","total_files_changed":2}\n',
        encoding="utf-8",
    )
    return root


def _evalkit(*argv: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        capture_output=True,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
@pytest.mark.slow
def test_a_lone_surrogate_session_id_is_scored_printed_and_journaled(
    tmp_path: Path, encoding: str
) -> None:
    """Finding 10: UnicodeEncodeError when printing or writing such a record."""
    root = _surrogate_ledger(tmp_path)
    env = {"PYTHONIOENCODING": encoding}
    for extra in ([], ["--json"]):
        proc = _evalkit(
            "score", "--metrics-dir", str(root), "--timestamp", TIMESTAMP, *extra, env=env
        )
        assert proc.returncode == 0, proc.stderr.decode()
        assert b"Traceback" not in proc.stderr
        assert b"s\\ud800x" in proc.stdout
    line = (root / "eval.jsonl").read_bytes().splitlines()[0]
    line.decode("utf-8")
    assert json.loads(line)["session_id"] == "s\ud800x"
    run_id = "s\\ud800x-eval-" + re.sub(r"[-:.]", "", TIMESTAMP)  # as evalkit prints it
    for command in (["journal"], ["verify", run_id], ["report", run_id], ["facts", run_id]):
        proc = _evalkit(*command, "--metrics-dir", str(root), env=env)
        assert proc.returncode == 0, (command, proc.stderr.decode())
        assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("flag", ["--handle", "--model-id", "--session"])
def test_non_utf8_argument_bytes_are_refused_before_anything_is_written(
    metrics: Path, flag: str
) -> None:
    """Finding 10: non-UTF-8 bytes in --handle/--model-id crashed on writing the record."""
    proc = _evalkit(
        "score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP, flag, b"caf\xe9"
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, err
    assert f"{flag}: not valid UTF-8 text (undecodable byte at character 4: 'caf\\udce9')" in err
    assert "Traceback" not in err and proc.stdout == b""
    assert not (metrics / "eval.jsonl").exists()


def test_report_of_a_surrogate_record_writes_an_escaped_page(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    rec = journal.append(path, make_record(session_id="s\udc80x"))
    out = tmp_path / "page.html"
    assert main(["report", rec["run_id"], "--journal", str(path), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "s\\udc80x" in page


# ------------------------------------------------------------ finding 11: deep nesting


def test_facts_record_file_nested_deeply_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 11: RecursionError out of `evalkit facts --record` on '[' x 1000."""
    for i, text in enumerate(
        ["[" * 1000, "[" * 100_000, '{"dimensions":' + "[" * 40 + "]" * 40 + "}"]
    ):
        record = tmp_path / f"deep{i}.json"
        record.write_text(text, encoding="utf-8")
        assert main(["facts", "--record", str(record)]) == 1
        err = capsys.readouterr().err
        assert f"{record}: line 1: " in err and "nested" in err


# ---------------------------------------------------- finding 12: FIFOs and devices as input


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("command", ["facts-record", "kappa-labels", "thresholds-csv"])
def test_a_fifo_or_device_as_an_input_file_is_refused_in_time(
    tmp_path: Path, kind: str, command: str
) -> None:
    path = fifo(tmp_path / "input") if kind == "fifo" else "/dev/zero"
    argv = {
        "facts-record": ["facts", "--record", path],
        "kappa-labels": ["stats", "kappa", "--labels", path],
        "thresholds-csv": ["stats", "thresholds", "--csv", path, "--count-column", "n"],
    }[command]
    outcome = main_in_child(argv, timeout=30)
    assert outcome.kind == "returned", outcome
    code, _, err = outcome.value
    assert code == 1, err
    assert path in err
    assert ("named pipe" if kind == "fifo" else "character device") in err


def test_facts_from_stdin_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_MAX_FILE_BYTES", "64")
    outcome = main_in_child(["facts", "--record", "-"], stdin=b"[" + b" " * 1000 + b"]")
    assert outcome.kind == "returned", outcome
    code, _, err = outcome.value
    assert code == 1 and "exceeds the 64-byte cap" in err


# -------------------------------------------------------------- finding 13: labels CSV


def test_kappa_labels_with_invalid_utf8_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 13: UnicodeDecodeError traceback from `stats kappa --labels`."""
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"item_id,rater,label\ni1,a,pass\ni1,b,f\xe4il\n")
    assert main(["stats", "kappa", "--labels", str(labels)]) == 1
    err = capsys.readouterr().err
    assert f"{labels}" in err and "line 3: invalid UTF-8 at byte column 7" in err


def test_kappa_labels_with_a_huge_field_or_nul_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text('item_id,rater,label\ni1,a,"' + "x" * 200_000 + '"\n', encoding="utf-8")
    assert main(["stats", "kappa", "--labels", str(labels)]) == 1
    assert f"{labels}: line 2: not readable as CSV (field larger than field limit" in (
        capsys.readouterr().err
    )
    labels.write_text("item_id,rater,label\ni\x001,a,pass\ni\x001,b,pass\n", encoding="utf-8")
    assert main(["stats", "kappa", "--labels", str(labels)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_agreement_labels_reader_names_file_and_reason(tmp_path: Path) -> None:
    from evalkit.analyses.agreement import load_labels
    from evalkit.errors import EvalkitError

    bad = tmp_path / "labels.csv"
    bad.write_bytes(b"item_id,target,family,rater,label\ni,t,f,r,\xff\n")
    with pytest.raises(EvalkitError, match=r"line 2: invalid UTF-8"):
        load_labels(str(bad))
    nested = tmp_path / "labels.jsonl"
    nested.write_text("[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(
        EvalkitError, match=r"labels file .*labels\.jsonl.*: cannot be read as jsonl"
    ):
        load_labels(str(nested))
    pipe = fifo(tmp_path / "pipe.csv")
    with pytest.raises(EvalkitError, match=r"named pipe"):
        load_labels(pipe)
