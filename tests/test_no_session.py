"""The ledger says why nothing was scored; the command line and the fleet only format it.

``evalkit.ledger.nothing_to_score`` names the sessions file's state and every line that gave no
session, from the file as the engine read it. ``score_ledger`` (``attrs["no_session"]``), a
batch (``no_session``) and the fleet's tasks carry that reason; none of them reads
``sessions.jsonl`` a second time to find it (they did, issue 21).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.fleet.tasks import journal_directory, score_directory
from evalkit.journal.batch import journal_ledger
from evalkit.ledger import reader
from evalkit.ledger.nothing_to_score import (
    PROBLEMS_SHOWN,
    NoSession,
    no_session,
    why_none_scored,
)
from evalkit.ledger.reader import read_jsonl
from evalkit.scoring.engine import SAMPLE_METRICS_DIR, score_ledger

TIMESTAMP = "2026-10-01T00:00:00.000Z"

#: sessions.jsonl bodies that give no session, and a fragment of the reason for each
NO_SESSION = {
    "empty": ("", "empty (no non-blank line)"),
    "blank-lines": ("\n  \n", "empty (no non-blank line)"),
    "malformed": ('{"session_id": \n', "1 malformed"),
    "no-id": ('{"started_at": "2026-07-01T00:00:00.000Z"}\n', ":1: session_id: missing"),
    "not-a-string": ('{"session_id": 7}\n', ":1: session_id: not a string (got 7)"),
    "only-whitespace": ('{"session_id": "   "}\n', 'only whitespace (got "   ")'),
    "an-array": ("[1, 2]\n", "not a JSON object (array)"),
}


def _ledger(root: Path, body: str | None) -> Path:
    root.mkdir(parents=True)
    if body is not None:
        (root / "sessions.jsonl").write_text(body, encoding="utf-8")
    return root


@pytest.fixture
def sessions_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``sessions.jsonl`` the ledger reader opens (the real open, counted)."""
    opened: list[str] = []
    real = reader.open_regular

    def counting(path: str, what: str) -> int:
        if os.path.basename(path) == "sessions.jsonl":
            opened.append(path)
        return real(path, what)

    monkeypatch.setattr(reader, "open_regular", counting)
    return opened


@pytest.mark.parametrize("case", sorted(NO_SESSION))
def test_the_reason_names_the_file_its_state_and_the_lines(tmp_path: Path, case: str) -> None:
    body, fragment = NO_SESSION[case]
    root = _ledger(tmp_path / case, body)
    reason = no_session(read_jsonl(root / "sessions.jsonl"))
    assert reason is not None
    text = str(reason)
    assert text.startswith(f"no session to score: sessions.jsonl '{root}/sessions.jsonl': ")
    assert fragment in text
    assert NoSession.from_dict(reason.to_dict()) == reason


def test_no_file_and_a_scorable_line(tmp_path: Path) -> None:
    absent = read_jsonl(tmp_path / "sessions.jsonl")
    assert str(no_session(absent)).endswith("sessions.jsonl': no such file")
    good = _ledger(tmp_path / "good", '{"session_id": "   "}\n{"session_id": "s1"}\n')
    assert no_session(read_jsonl(good / "sessions.jsonl")) is None


def test_the_first_problems_are_named_and_the_rest_counted(tmp_path: Path) -> None:
    n = PROBLEMS_SHOWN + 2
    root = _ledger(tmp_path / "many", '{"session_id": 1}\n' * n)
    text = why_none_scored(read_jsonl(root / "sessions.jsonl")).message("also this")
    assert text.count("session_id: not a string") == PROBLEMS_SHOWN
    assert "; also this; " in text and text.endswith("; and 2 more line(s)")


@pytest.mark.parametrize("case", sorted(NO_SESSION))
def test_score_ledger_carries_the_reason_read_once(
    tmp_path: Path, case: str, sessions_opened: list[str]
) -> None:
    root = _ledger(tmp_path / case, NO_SESSION[case][0])
    frame = score_ledger(root)
    assert frame.empty and len(sessions_opened) == 1
    expected = why_none_scored(read_jsonl(root / "sessions.jsonl"))
    assert NoSession.from_dict(frame.attrs["no_session"]) == expected
    assert score_ledger(SAMPLE_METRICS_DIR).attrs["no_session"] is None


def test_the_cli_formats_the_reason_and_reads_the_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sessions_opened: list[str]
) -> None:
    root = _ledger(tmp_path / "m", NO_SESSION["not-a-string"][0])
    expected = str(why_none_scored(read_jsonl(root / "sessions.jsonl")))
    sessions_opened.clear()
    # a file of its own: an output flag never writes onto a device (docs/CLI.md)
    table = str(tmp_path / "table.csv")
    argv = ["score", "--all", "--metrics-dir", str(root), "--no-progress", "--out", table]
    assert main(argv) == 0
    assert f"evalkit score: warning: {expected}" in capsys.readouterr().err
    assert len(sessions_opened) == 1
    assert main([*argv, "--journal", "--timestamp", TIMESTAMP]) == 0
    assert f"evalkit score: warning: {expected}" in capsys.readouterr().err
    assert len(sessions_opened) == 2  # one more command, one more read


def test_the_fleet_tasks_format_the_reason_and_create_no_journal(
    tmp_path: Path, sessions_opened: list[str]
) -> None:
    root = _ledger(tmp_path / "m", NO_SESSION["only-whitespace"][0])
    reason = no_session(read_jsonl(root / "sessions.jsonl"))
    assert reason is not None
    sessions_opened.clear()
    with pytest.raises(EvalkitError) as raised:
        score_directory(str(root), "rubric-v2")
    assert str(raised.value) == reason.message("1 session id(s) skipped (only whitespace)")
    with pytest.raises(EvalkitError) as raised:
        journal_directory(str(root), timestamp=TIMESTAMP)
    assert str(raised.value) == str(reason)
    assert len(sessions_opened) == 2  # once per task
    assert not (root / "eval.jsonl").exists()


def test_a_batch_can_leave_the_journal_alone_when_nothing_can_be_scored(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "m", "")
    journal = tmp_path / "j" / "eval.jsonl"
    result = journal_ledger(root, journal, timestamp=TIMESTAMP, create_empty=False)
    assert result.appended == () and not journal.parent.exists()
    assert result.no_session == why_none_scored(read_jsonl(root / "sessions.jsonl"))
    journal.parent.mkdir()
    assert journal_ledger(root, journal, timestamp=TIMESTAMP).no_session == result.no_session
    assert journal.exists()  # by default the journal is opened (and created) all the same
