"""A whole ledger into the journal: one lock, one write per line, one fsync, each record whole;
incremental by default (issue 13, items 2 and 3's round trip).

``score --all --journal`` appends exactly the records ``score_session`` builds; a rerun with
nothing new appends nothing; a rewritten session record, or a new event attributed to one
session, rescores exactly that session; ``verify --all`` then agrees with every record.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared
from faults import only_for
from record_factory import chained, make_record

from evalkit.cli.main import main
from evalkit.journal import reader as journal
from evalkit.journal.batch import journal_ledger
from evalkit.journal.reader import JournalWriteError
from evalkit.record.seal import without_seal
from evalkit.scoring.engine import score_session

TIMESTAMP = "2026-10-01T00:00:00.000Z"


def _ts(i: int) -> str:
    return f"2026-10-01T00:{i // 60:02d}:{i % 60:02d}.000Z"


# ------------------------------------------------------------------------------ append_many


def test_append_many_syncs_once_for_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(0)))
    calls = {"write": 0, "fsync": 0}
    real_write, real_fsync = os.write, os.fsync

    def counting(name: str, real: Any) -> Any:
        def call(fd: int, *args: Any) -> Any:
            calls[name] += 1
            return real(fd, *args)

        return call

    monkeypatch.setattr(os, "write", only_for(path, counting("write", real_write), real_write))
    monkeypatch.setattr(os, "fsync", only_for(path, counting("fsync", real_fsync), real_fsync))
    written = journal.append_many(path, [make_record(timestamp=_ts(i)) for i in range(1, 6)])
    monkeypatch.undo()
    assert calls == {"write": 5, "fsync": 1}  # one write per line, one fsync at the end
    read = journal.read(path)
    assert read.records == [journal.read(path).records[0], *written]
    previous = read.records[0]["provenance"]["record_sha256"]
    for i, rec in enumerate(written, start=1):  # each linked to the seal of the one before
        assert rec == chained(make_record(timestamp=_ts(i)), previous)
        previous = rec["provenance"]["record_sha256"]


def test_a_failed_write_mid_batch_keeps_the_records_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(0)))
    real_write = os.write
    seen: list[int] = []

    def third_fails_half_way(fd: int, data: Any) -> int:
        seen.append(len(data))
        if len(seen) == 3:
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return int(real_write(fd, data))

    monkeypatch.setattr(os, "write", only_for(path, third_fails_half_way, real_write))
    with pytest.raises(JournalWriteError) as info:
        journal.append_many(path, [make_record(timestamp=_ts(i)) for i in range(1, 6)])
    monkeypatch.undo()
    error = info.value
    assert error.appended == 2 and not error.remains
    assert "nothing of the record is on disk" in str(error)
    assert "the 2 record(s) appended before it in this batch are on disk" in str(error)
    read = journal.read(path)
    assert [r["timestamp"] for r in read.records] == [_ts(0), _ts(1), _ts(2)]
    assert read.diagnostics == []  # no fragment of the third


def test_a_failed_final_sync_takes_the_whole_batch_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(0)))
    before = path.read_bytes()
    real_fsync = os.fsync
    failed: list[int] = []

    def first_fails(fd: int) -> None:
        if not failed:
            failed.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", only_for(path, first_fails, real_fsync))
    with pytest.raises(JournalWriteError) as info:
        journal.append_many(path, [make_record(timestamp=_ts(i)) for i in range(1, 4)])
    monkeypatch.undo()
    assert "nothing of 3 records is on disk" in str(info.value)
    assert info.value.offset == len(before) and not info.value.remains
    assert path.read_bytes() == before


# --------------------------------------------------------------------- score --all --journal


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    """Three sessions with separate windows; s1 and s2 stamped with raw ids (dual stamp)."""
    root = tmp_path / "metrics"
    root.mkdir()
    sessions = [
        {"session_id": f"s{i}", "status": "completed", "total_waves": 1, "total_agents": 2,
         "started_at": f"2026-09-19T0{2 * i}:00:00.000Z",
         "completed_at": f"2026-09-19T0{2 * i + 1}:00:00.000Z"}
        for i in range(1, 4)
    ]  # fmt: skip
    events = [
        {"timestamp": "2026-09-19T00:00:00.000Z", "event": "orchestrator.session.lock.acquired",
         "session_id": f"raw-{i}", "semantic_session_id": f"s{i}"}
        for i in (1, 2)
    ]  # fmt: skip
    events += [
        {"timestamp": f"2026-09-19T0{2 * i}:30:00.000Z", "event": "orchestrator.quality_gate.passed",
         "variant": "full-gate", "exit_code": 0}
        for i in range(1, 4)
    ]  # fmt: skip
    (root / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sessions))
    (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return root


def _score_all(metrics: Path, *extra: str) -> int:
    return main(
        ["score", "--all", "--journal", "--metrics-dir", str(metrics), "--no-progress",
         "--out", str(metrics.parent / "table.csv"), *extra]
    )  # fmt: skip


def _lines(metrics: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (metrics / "eval.jsonl").read_text("utf-8").splitlines()]


def test_score_all_journal_appends_what_score_session_builds(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _score_all(metrics, "--timestamp", TIMESTAMP, "--model-id", "m", "--handle", "h") == 0
    lines = _lines(metrics)
    assert [r["session_id"] for r in lines] == ["s1", "s2", "s3"]
    for rec in lines:
        one = score_session(
            metrics, rec["session_id"], timestamp=TIMESTAMP, model_id="m", handle="h"
        )
        linked = rec["provenance"].pop("previous_line_sha256")
        assert (
            rec["provenance"].pop("record_sha256")
            == chained(one.to_dict(), linked)["provenance"]["record_sha256"]
        )
        assert rec == without_seal(one.to_dict())  # the same record, placed in the journal
    err = capsys.readouterr().err
    assert "3 scored and appended to" in err and "0 unchanged (skipped), 0 refused" in err
    table = (metrics.parent / "table.csv").read_text("utf-8").splitlines()
    assert table[0] == "session_id,dimension,status,score,evidence"
    assert len(table) == 1 + sum(len(r["dimensions"]) for r in lines)
    assert main(["verify", "--all", "--metrics-dir", str(metrics), "--no-progress"]) == 0


def test_the_rerun_with_nothing_new_appends_nothing(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _score_all(metrics) == 0
    before = (metrics / "eval.jsonl").read_bytes()
    assert _score_all(metrics) == 0
    assert (metrics / "eval.jsonl").read_bytes() == before
    assert "0 scored and appended" in capsys.readouterr().err
    assert _score_all(metrics, "--rescore") == 0  # --rescore scores every session again
    assert len(_lines(metrics)) == 6
    assert _score_all(metrics, "--model-id", "another") == 0  # other run inputs: new records
    assert len(_lines(metrics)) == 9


def test_a_rewritten_session_record_rescores_exactly_that_session(metrics: Path) -> None:
    assert _score_all(metrics) == 0
    with (metrics / "sessions.jsonl").open("a", encoding="utf-8") as fh:
        first = json.loads((metrics / "sessions.jsonl").read_text("utf-8").splitlines()[2])
        fh.write(json.dumps({**first, "total_agents": 7}) + "\n")  # s3 rewritten
    assert _score_all(metrics) == 0
    assert [r["session_id"] for r in _lines(metrics)[3:]] == ["s3"]


def test_a_new_attributed_event_rescores_exactly_that_session(metrics: Path) -> None:
    assert _score_all(metrics) == 0
    event = {"timestamp": "2026-09-19T04:40:00.000Z", "session_id": "raw-2",
             "event": "orchestrator.destructive_guard.blocked"}  # fmt: skip
    with (metrics / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")
    assert _score_all(metrics) == 0
    new = _lines(metrics)[3:]
    assert [r["session_id"] for r in new] == ["s2"]
    guard = next(d for d in new[0]["dimensions"] if d["id"] == "guard-friction")
    assert "destructive_guard.blocked=1" in guard["evidence"]


def test_the_journal_may_not_be_a_ledger_file_nor_in_a_missing_folder(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = metrics / "sessions.jsonl"
    before = sessions.read_bytes()
    assert main(["score", "--all", "--journal", str(sessions), "--metrics-dir", str(metrics)]) == 1
    assert "is the ledger's sessions.jsonl" in capsys.readouterr().err
    assert sessions.read_bytes() == before
    missing = metrics / "nowhere" / "eval.jsonl"
    assert main(["score", "--all", "--journal", str(missing), "--metrics-dir", str(metrics)]) == 1
    assert "does not exist (evalkit score never creates it" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_a_library_caller_gets_the_summary(metrics: Path) -> None:
    result = journal_ledger(metrics, metrics / "eval.jsonl", "rubric-v1", timestamp=TIMESTAMP)
    assert result.scored == 3 and result.rubric_version == "rubric-v1"
    again = journal_ledger(metrics, metrics / "eval.jsonl", "rubric-v1", timestamp=TIMESTAMP)
    assert again.scored == 0 and again.unchanged == ("s1", "s2", "s3")
    # a journal of the other rubric version knows nothing for this one
    assert journal_ledger(metrics, metrics / "eval.jsonl", "rubric-v2").scored == 3


@pytest.mark.parametrize("case", ["random-20260919-002", "gf-dual-stamp-resolves"])
def test_round_trip_on_conformance_ledgers(tmp_path: Path, case: str) -> None:
    metrics = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", case), metrics)
    for rubric in ("rubric-v1", "rubric-v2"):
        assert _score_all(metrics, "--rubric", rubric) == 0
    assert main(["verify", "--all", "--metrics-dir", str(metrics), "--no-progress"]) == 0


@pytest.mark.parametrize("journaled", [False, True], ids=["table", "journal"])
def test_a_batch_with_nothing_to_score_says_why_on_stderr(
    tmp_path: Path, journaled: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: an empty table (and an empty journal) with exit 0 and not a word on stderr
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "sessions.jsonl").write_text(
        '{"started_at": "2026-01-01T00:00:00Z"}\n{"session_id": 7}\n', encoding="utf-8"
    )
    argv = ["score", "--all", "--metrics-dir", str(metrics), "--no-progress"]
    assert main([*argv, "--journal"] if journaled else argv) == 0  # an empty batch, not an error
    out, err = capsys.readouterr()
    assert out == "session_id,dimension,status,score,evidence\n"
    sessions = metrics / "sessions.jsonl"
    assert f"evalkit score: warning: no session to score: sessions.jsonl {str(sessions)!r}" in err
    assert f"{sessions}:1: session_id: missing" in err
    assert f"{sessions}:2: session_id: not a string (got 7)" in err
