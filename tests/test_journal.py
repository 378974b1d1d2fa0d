"""The eval.jsonl journal: one complete line per append, safe reading of whatever is on disk."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest
from conftest import require_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from record_factory import chained, make_record, reference_record, run_id_for

from evalkit.errors import ValidationError
from evalkit.journal import reader as journal
from evalkit.journal.reader import DiagnosticKind
from evalkit.record.seal import without_seal


def _ts(i: int) -> str:
    return f"2026-10-01T00:{i // 60:02d}:{i % 60:02d}.000Z"


def test_append_writes_exactly_one_compact_line(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    rec = make_record()
    out = journal.append(path, rec)
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    # the line is the record, linked to the line before it (none: null) and sealed:
    # provenance.record_sha256 over everything else, last
    assert json.loads(data) == out == chained(rec, None)
    assert list(out["provenance"]) == [
        "rubric_sha256",
        "engine_commit",
        "previous_line_sha256",
        "record_sha256",
    ]
    assert without_seal(out) == {
        **rec,
        "provenance": {**rec["provenance"], "previous_line_sha256": None},
    }
    got = journal.read(path)
    assert got.records == [out]
    assert got.line_numbers == [1]
    assert got.diagnostics == [] and got.duplicates == {}


def test_append_creates_missing_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "eval.jsonl"
    journal.append(path, make_record())
    assert len(journal.read(path).records) == 1


def test_invalid_record_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record())
    before = path.read_bytes()
    bad = make_record(session_id="other")
    bad["overall"] = 1
    with pytest.raises(ValidationError, match=r"^overall: forbidden"):
        journal.append(path, bad)
    assert path.read_bytes() == before


def test_torn_last_line_is_reported_and_next_append_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    first, second = make_record(timestamp=_ts(1)), make_record(timestamp=_ts(2))
    journal.append(path, first)
    journal.append(path, second)
    intact = path.read_bytes()
    torn_line = json.dumps(make_record(timestamp=_ts(3))).encode()
    with path.open("ab") as fh:  # a writer that died half-way through its line
        fh.write(torn_line[: len(torn_line) // 2])

    got = journal.read(path)
    assert [r["run_id"] for r in got.records] == [first["run_id"], second["run_id"]]
    assert len(got.diagnostics) == 1
    assert got.diagnostics[0].line == 3
    assert got.diagnostics[0].kind is DiagnosticKind.TORN
    assert "cut off mid-write" in got.diagnostics[0].reason

    third = make_record(timestamp=_ts(4))
    journal.append(path, third)
    data = path.read_bytes()
    assert data.startswith(intact)  # earlier bytes never rewritten
    lines = data.split(b"\n")
    assert lines[2] == torn_line[: len(torn_line) // 2]  # the fragment stays on its own line
    # linked to the torn fragment, the line before it: the sha256 of its bytes (no seal)
    assert json.loads(lines[3]) == chained(third, hashlib.sha256(lines[2]).hexdigest())
    got = journal.read(path)
    assert [r["run_id"] for r in got.records] == [
        first["run_id"],
        second["run_id"],
        third["run_id"],
    ]
    assert got.line_numbers == [1, 2, 4]
    assert [(d.line, d.kind) for d in got.diagnostics] == [(3, DiagnosticKind.MALFORMED)]


def test_complete_last_line_without_newline_is_a_record(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    rec = make_record()
    path.write_text(json.dumps(rec), encoding="utf-8")
    got = journal.read(path)
    assert got.records == [rec] and got.diagnostics == []
    second = make_record(timestamp=_ts(9))
    journal.append(path, second)
    assert [r["run_id"] for r in journal.read(path).records] == [rec["run_id"], second["run_id"]]


def test_bad_lines_are_named_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    good = make_record()
    invalid = make_record(timestamp=_ts(5))
    invalid["harness"]["hostname_hash"] = "my-laptop.local"
    lines = [
        "\ufeff" + json.dumps(good),  # BOM on the first line
        "{not json",
        "",
        "[1, 2]",
        json.dumps(invalid),
        '{"kpis": NaN}',
        json.dumps(make_record(timestamp=_ts(6))) + "\r",  # CRLF
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + b"\xff\xfe\n")
    got = journal.read(path)
    assert [r["run_id"] for r in got.records] == [
        good["run_id"],
        run_id_for(good["session_id"], _ts(6)),
    ]
    assert got.line_numbers == [1, 7]
    kinds = [(d.line, d.kind) for d in got.diagnostics]
    assert kinds == [
        (2, DiagnosticKind.MALFORMED),
        (4, DiagnosticKind.NOT_OBJECT),
        (5, DiagnosticKind.INVALID),
        (6, DiagnosticKind.MALFORMED),
        (8, DiagnosticKind.MALFORMED),
    ]
    assert "harness.hostname_hash" in got.diagnostics[2].reason
    assert str(got.diagnostics[2]).startswith("line 5: invalid: harness.hostname_hash")


def test_duplicate_run_ids_are_reported_with_lines(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    rec = make_record()
    journal.append(path, rec)
    journal.append(path, make_record(timestamp=_ts(7)))
    journal.append(path, rec)  # the reference engine can append the same run twice
    got = journal.read(path)
    assert len(got.records) == 3
    assert got.duplicates == {rec["run_id"]: [1, 3]}
    assert [line for line, _ in got.find(rec["run_id"])] == [1, 3]


def test_reference_engine_lines_read_normalized(tmp_path: Path) -> None:
    expected = sorted(require_shared("conformance", "public").glob("*/expected-v2.json"))
    refs = [r for r in (reference_record(p) for p in expected) if r is not None]
    path = tmp_path / "eval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in refs), encoding="utf-8")
    got = journal.read(path)
    assert got.diagnostics == []
    assert len(got.records) == len(refs) > 50
    assert all(r["schema_version"] == 1 and r["anonymized"] is True for r in got.records)


def test_beyond_double_kpi_reads_as_null_never_zero(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    line = json.dumps(make_record()).replace(
        '"duration_seconds": 5400', '"duration_seconds": 1e400'
    )
    assert "1e400" in line
    path.write_text(line + "\n", encoding="utf-8")
    got = journal.read(path)
    assert got.diagnostics == []
    assert got.records[0]["kpis"]["duration_seconds"] is None


def test_missing_journal_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        journal.read(tmp_path / "absent.jsonl")


# -------------------------------------------------------------------------- concurrency

PROCESSES = 8
APPENDS = 250


def _writer(path: str, worker: int, start: multiprocessing.synchronize.Event) -> None:
    # Long evidence makes each line far larger than a pipe buffer, so unlocked writes would
    # interleave or tear.
    start.wait()
    for i in range(APPENDS):
        rec = make_record(session_id=f"worker-{worker}", timestamp=_ts(i))
        rec["dimensions"][0]["evidence"] = f"worker {worker} append {i} " + "x" * 9000
        journal.append(path, rec)


@pytest.mark.slow
def test_concurrent_appends_from_eight_processes(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(path), w, start)) for w in range(PROCESSES)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0] * PROCESSES

    data = path.read_bytes()
    assert data.count(b"\n") == PROCESSES * APPENDS
    got = journal.read(path)
    assert got.diagnostics == []
    assert got.duplicates == {}
    assert len(got.records) == PROCESSES * APPENDS
    expected_ids = {
        run_id_for(f"worker-{w}", _ts(i)) for w in range(PROCESSES) for i in range(APPENDS)
    }
    assert {r["run_id"] for r in got.records} == expected_ids
    for rec in got.records:
        worker = rec["session_id"].removeprefix("worker-")
        assert rec["dimensions"][0]["evidence"].startswith(f"worker {worker} append ")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(garbage=st.binary(min_size=1, max_size=200))
def test_any_torn_tail_never_costs_a_record(tmp_path: Path, garbage: bytes) -> None:
    """Whatever bytes a dying writer left behind, earlier records and the next append survive."""
    path = tmp_path / f"eval-{garbage.hex()[:40]}.jsonl"
    path.unlink(missing_ok=True)
    first = make_record(timestamp=_ts(1))
    journal.append(path, first)
    with path.open("ab") as fh:
        fh.write(garbage)
    last = make_record(timestamp=_ts(2))
    journal.append(path, last)
    got = journal.read(path)
    ids = [r["run_id"] for r in got.records]
    assert ids[0] == first["run_id"] and ids[-1] == last["run_id"]
    assert path.read_bytes().endswith(b"\n")
    for diag in got.diagnostics:
        assert 1 < diag.line < len(path.read_bytes().split(b"\n"))


def test_read_of_a_missing_journal_is_an_evalkit_error_and_a_file_not_found(
    tmp_path: Path,
) -> None:
    """QA: a raw FileNotFoundError escaped; now both an EvalkitError and a FileNotFoundError."""
    from evalkit.errors import EvalkitError

    missing = tmp_path / "missing.jsonl"
    with pytest.raises(journal.JournalNotFoundError, match=r"journal '.*missing\.jsonl': no such"):
        journal.read(missing)
    with pytest.raises(EvalkitError):
        journal.read(missing)
    with pytest.raises(FileNotFoundError) as info:
        journal.read(missing)
    assert info.value.filename == str(missing)


def test_read_of_a_directory_is_an_evalkit_error_and_an_is_a_directory_error(
    tmp_path: Path,
) -> None:
    from evalkit.errors import EvalkitError

    with pytest.raises(journal.JournalIsADirectoryError, match=r"is a directory, not a journal"):
        journal.read(tmp_path)
    with pytest.raises(EvalkitError, match=str(tmp_path)):
        journal.read(tmp_path)
    with pytest.raises(IsADirectoryError):
        journal.read(tmp_path)


def test_append_to_a_directory_is_an_evalkit_error_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "eval.jsonl"
    target.mkdir()
    with pytest.raises(journal.JournalIsADirectoryError, match=r"eval\.jsonl"):
        journal.append(target, make_record())
    assert list(target.iterdir()) == []
