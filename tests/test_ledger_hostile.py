"""The ledger reader on hostile metrics folders: devices, FIFOs, broken symlinks, huge lines.

Findings of issue 10 pinned here: 12 (``/dev/zero`` as ``events.jsonl``/``sessions.jsonl`` was
read without bound), 15 (a dangling symlink or a symlink loop for ``events.jsonl`` or an
archive read as "absent" instead of unreadable), 8 (which files are the ledger's).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile import fifo, in_child

import evalkit
from evalkit.files.input import InputTooLargeError
from evalkit.ledger.files import describe_sessions_file, ledger_role
from evalkit.ledger.reader import read_jsonl, read_metrics_dir

SESSION = (
    '{"session_id":"s1","status":"completed","started_at":"2026-09-19T08:00:00.000Z",'
    '"completed_at":"2026-09-19T09:00:00.000Z","total_files_changed":2,'
    '"agent_summary":{"complete":1,"spiral":0}}\n'
)
EV = '{"timestamp":"2026-09-19T08:30:00.000Z","event":"orchestrator.quality_gate.passed","exit_code":0}\n'
ARCHIVE = "events-20260917T000000Z_20260917T230000Z.jsonl"


def _ledger(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "sessions.jsonl").write_text(SESSION, encoding="utf-8")
    return tmp_path


def _summary(path: str) -> tuple[str, str | None, int]:
    f = read_jsonl(path)
    return f.state, f.error, len(f.lines)


@pytest.mark.parametrize("name", ["events.jsonl", "sessions.jsonl", f"_archive/{ARCHIVE}"])
def test_dev_zero_is_an_unreadable_source_not_an_endless_read(tmp_path: Path, name: str) -> None:
    """Finding 12: /dev/zero as a ledger file was read until memory ran out."""
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to("/dev/zero")
    outcome = in_child(_summary, str(target), timeout=20)
    assert outcome.kind == "returned", outcome
    state, error, lines = outcome.value
    assert state == "unreadable" and lines == 0
    assert "character device" in (error or "")


def test_a_fifo_sessions_file_is_unreadable_in_time(tmp_path: Path) -> None:
    fifo(tmp_path / "sessions.jsonl")
    outcome = in_child(_summary, str(tmp_path / "sessions.jsonl"), timeout=20)
    assert outcome.kind == "returned" and outcome.value[0] == "unreadable", outcome
    assert "named pipe" in (outcome.value[1] or "")


@pytest.mark.parametrize("broken", ["dangling", "loop"])
def test_a_broken_events_symlink_is_unreadable_never_absent(tmp_path: Path, broken: str) -> None:
    """Finding 15: a dangling symlink or a symlink loop for events.jsonl read as absent."""
    root = _ledger(tmp_path)
    events = root / "events.jsonl"
    if broken == "dangling":
        events.symlink_to(root / "gone.jsonl")
    else:
        events.symlink_to(root / "events.jsonl")  # a link to itself: ELOOP
    ledger = read_metrics_dir(root)
    assert ledger.events.state == "unreadable"
    why = "dangling symlink" if broken == "dangling" else "symlink loop"
    assert why in (ledger.events.error or "")
    assert [g.kind for g in ledger.gaps] == ["unreadable-source"]
    assert any(d.file == str(events) and why in d.reason for d in ledger.diagnostics)


def test_the_unreadable_events_file_is_in_the_evidence_not_silent_absence(tmp_path: Path) -> None:
    """Absent and unreadable are different evidence states: rubric-v2 says LEDGER INCOMPLETE
    for the unreadable one; the statuses stay those of "no events" (a gap never decides)."""
    absent = _ledger(tmp_path / "absent")
    broken = _ledger(tmp_path / "broken")
    (broken / "events.jsonl").symlink_to(broken / "gone.jsonl")
    a = evalkit.score_session(absent, timestamp="2026-10-01T00:00:00Z").to_dict()
    b = evalkit.score_session(broken, timestamp="2026-10-01T00:00:00Z").to_dict()
    assert [d["status"] for d in a["dimensions"]] == [d["status"] for d in b["dimensions"]]
    gap = "LEDGER INCOMPLETE: 1 gap(s) [unreadable-source×1]"
    flagged = [d["id"] for d in b["dimensions"] if gap in d["evidence"]]
    assert flagged and not any(gap in d["evidence"] for d in a["dimensions"])


@pytest.mark.parametrize("broken", ["dangling", "loop"])
def test_a_broken_archive_symlink_is_a_gap(tmp_path: Path, broken: str) -> None:
    root = _ledger(tmp_path)
    (root / "events.jsonl").write_text(EV, encoding="utf-8")
    archive = root / "_archive" / ARCHIVE
    archive.parent.mkdir()
    archive.symlink_to(archive if broken == "loop" else root / "nowhere.jsonl")
    ledger = read_metrics_dir(root)
    assert [(g.kind, g.archived_as) for g in ledger.gaps] == [("unreadable-source", str(archive))]
    assert len(ledger.events_v2) == 1


def test_a_dangling_archive_folder_is_a_gap(tmp_path: Path) -> None:
    root = _ledger(tmp_path)
    (root / "events.jsonl").write_text(EV, encoding="utf-8")
    (root / "_archive").symlink_to(root / "moved-away")
    ledger = read_metrics_dir(root)
    assert [g.kind for g in ledger.gaps] == ["unreadable-source"]
    assert "cannot list the archive folder" in (ledger.gaps[0].detail or "")


def test_a_plain_file_named_archive_is_still_no_archive(tmp_path: Path) -> None:
    root = _ledger(tmp_path)
    (root / "events.jsonl").write_text(EV, encoding="utf-8")
    (root / "_archive").write_text("not a folder", encoding="utf-8")
    assert read_metrics_dir(root).gaps == ()


def test_a_dangling_ring_slot_is_unreadable_not_a_hole(tmp_path: Path) -> None:
    root = _ledger(tmp_path)
    (root / "events.jsonl").write_text(EV, encoding="utf-8")
    (root / "events.jsonl.1").symlink_to(root / "gone")
    (root / "events.jsonl.2").write_text(EV, encoding="utf-8")
    ledger = read_metrics_dir(root)
    assert [g.kind for g in ledger.gaps] == ["unreadable-source"]


def test_a_line_over_the_line_cap_is_a_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(EV + '{"event":"' + "x" * 5000 + '"}\n' + EV, encoding="utf-8")
    f = read_jsonl(path, max_line_bytes_=4096)
    assert f.unreadable_lines == (2,)
    assert len(f.event_records) == 2
    assert "exceeds the 4096-byte line cap" in f.diagnostics[0].reason
    # the same file under the default cap: every line read
    assert read_jsonl(path).unreadable_lines == ()


def test_a_file_over_the_byte_cap_is_refused_loudly(tmp_path: Path) -> None:
    """Issue 25: an over-cap file is an error naming it, its size and the setting, never
    "unreadable" (which made every event-derived verdict cannot-determine with exit 0)."""
    path = tmp_path / "events.jsonl"
    path.write_text(EV * 100, encoding="utf-8")
    with pytest.raises(InputTooLargeError) as caught:
        read_jsonl(path, max_bytes=1000)
    message = str(caught.value)
    assert str(path) in message and f"{len(EV) * 100} bytes" in message
    assert "exceeds the 1000-byte cap" in message and "$EVALKIT_MAX_FILE_BYTES" in message


# --------------------------------------------------------------------------- ledger roles


def test_ledger_role_by_resolved_path_and_inode(tmp_path: Path) -> None:
    """Finding 8 (ledger side): which paths are files of the ledger, by path and inode."""
    root = _ledger(tmp_path / "m")
    (root / "events.jsonl").write_text(EV, encoding="utf-8")
    (root / "_archive").mkdir()
    (root / "_archive" / ARCHIVE).write_text(EV, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "eval.jsonl"
    link.symlink_to(root / "sessions.jsonl")
    hard = elsewhere / "hard.jsonl"
    os.link(root / "events.jsonl", hard)
    assert ledger_role(root, root / "sessions.jsonl") == "sessions.jsonl"
    assert ledger_role(root, link) == "sessions.jsonl"
    assert ledger_role(root, hard) == "events.jsonl"
    assert ledger_role(root, root / "events.jsonl.7") == "events.jsonl.7"  # not there yet
    assert ledger_role(root, root / "_archive" / ARCHIVE) == f"archive {ARCHIVE}"
    future = "events-20260918T000000Z_20260918T230000Z.jsonl"
    assert ledger_role(root, root / "_archive" / future) == f"archive {future}"
    assert ledger_role(root, root / "sub" / ".." / "events.jsonl") == "events.jsonl"
    assert ledger_role(root, root / "eval.jsonl") is None
    assert ledger_role(root, elsewhere / "sessions.jsonl") is None  # the name alone is not it
    assert ledger_role(root, root / "_archive" / "notes.jsonl") is None


def test_describe_sessions_file_names_path_and_state(tmp_path: Path) -> None:
    where = f"sessions.jsonl {str(tmp_path / 'sessions.jsonl')!r}"
    assert describe_sessions_file(tmp_path) == f"{where}: no such file"
    (tmp_path / "sessions.jsonl").mkdir()
    assert describe_sessions_file(tmp_path).startswith(f"{where}: cannot read file: is a directory")
    (tmp_path / "sessions.jsonl").rmdir()
    (tmp_path / "sessions.jsonl").symlink_to(tmp_path / "gone")
    assert "a dangling symlink" in describe_sessions_file(tmp_path)
    (tmp_path / "sessions.jsonl").unlink()
    (tmp_path / "sessions.jsonl").write_text("\n\n", encoding="utf-8")
    assert describe_sessions_file(tmp_path) == f"{where}: empty (no non-blank line)"
    (tmp_path / "sessions.jsonl").write_text('{"x":1}\n{oops\n', encoding="utf-8")
    assert describe_sessions_file(tmp_path) == (
        f"{where}: 2 non-blank line(s), 1 JSON object(s), 1 malformed"
    )


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["score", "--all", "--no-progress"], 1),
        (["score", "--all", "--journal", "--no-progress"], 1),
        (["score", "--no-write"], 2),  # one session: its "evaluation error"
    ],
)
def test_an_over_cap_events_file_fails_the_command_loudly(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    code: int,
) -> None:
    """Issue 25: with a small cap, the events file over it is an exit-1 error naming it, its
    size and the setting; nothing is scored as if the events were not there."""
    from evalkit.cli.main import main
    from evalkit.simulate.hostile_ledgers import generate_ledger

    root = tmp_path / "m"
    generate_ledger(root, n_sessions=8, n_events=300, seed=3)
    events = root / "events.jsonl"
    size = events.stat().st_size
    cap = (root / "sessions.jsonl").stat().st_size + 1  # sessions fit, events do not
    assert size > cap
    monkeypatch.setenv("EVALKIT_MAX_FILE_BYTES", str(cap))
    assert main([*command, "--metrics-dir", str(root)]) == code
    err = capsys.readouterr().err
    assert str(events) in err and f"{size} bytes" in err and "$EVALKIT_MAX_FILE_BYTES" in err
    assert not (root / "eval.jsonl").exists()
