"""The journal under failure and hostile input: all-or-nothing appends, readers that never crash.

Findings of issue 10 pinned here: 9 (a full disk or a failed fsync during an append), 10 (a
lone surrogate in a record), 11 (a deeply nested line), 12 (a FIFO or a device as a journal).
Failures are injected at the OS boundary: ``os.write``/``os.fsync``/``os.ftruncate`` replaced
for the journal's own descriptor only, and, with no root needed, a real kernel limit
(``RLIMIT_FSIZE``: the kernel writes part of the line, then refuses with ``EFBIG``, just as a
full disk does with ``ENOSPC``). A real small filesystem would need root to mount; not used.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared
from faults import only_for
from hostile import fifo, in_child, main_in_child
from record_factory import TIMESTAMP, make_record

from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal
from evalkit.journal.reader import DiagnosticKind, JournalWriteError

REPO_ROOT = Path(__file__).resolve().parents[1]


def _ts(i: int) -> str:
    return f"2026-10-01T00:00:{i:02d}.000Z"


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, bytes]:
    """A journal holding one record, and its bytes."""
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(1)))
    return path, path.read_bytes()


def _disk_fills_mid_write(real_write: Any) -> Any:
    """The first write goes half through, the next fails with ENOSPC (a disk filling up)."""
    calls = []

    def write(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return int(real_write(fd, bytes(data[: len(data) // 2])))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return write


def _fails(code: int) -> Any:
    def fail(fd: int, *args: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return fail


def _fsync_fails_once(real_fsync: Any) -> Any:
    failed: list[int] = []

    def fsync(fd: int) -> None:
        if not failed:
            failed.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    return fsync


# (name, injected failures, errno, bytes remain?, what the message says)
FAILURES = [
    (
        "enospc-mid-write",  # finding 9: a torn half record stayed while the CLI said NOT appended
        {"write": lambda: _disk_fills_mid_write(os.write)},
        errno.ENOSPC,
        False,
        ["truncated back to its previous {size} bytes", "nothing of the record is on disk"],
    ),
    (
        "fsync-eio-after-full-write",  # finding 9: the line stayed while the CLI said NOT appended
        {"fsync": lambda: _fsync_fails_once(os.fsync)},
        errno.EIO,
        False,
        ["nothing of the record is on disk"],
    ),
    (
        "truncation-fails",
        {
            "write": lambda: _disk_fills_mid_write(os.write),
            "ftruncate": lambda: _fails(errno.EROFS),
        },
        errno.ENOSPC,
        True,
        [
            "truncating the journal back to its previous {size} bytes failed",
            "{partial} of the record line's",
            "from byte offset {size}",
        ],
    ),
    (
        "truncation-unsyncable",
        {"fsync": lambda: _fails(errno.EIO)},
        errno.EIO,
        True,
        ["that truncation could not be synced", "from byte offset {size}"],
    ),
]


@pytest.mark.parametrize(
    ("injected", "code", "remains", "says"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES]
)
def test_a_failed_append_leaves_the_journal_as_it_was_or_says_where(
    filled: tuple[Path, bytes],
    monkeypatch: pytest.MonkeyPatch,
    injected: dict[str, Any],
    code: int,
    remains: bool,
    says: list[str],
) -> None:
    path, before = filled
    for name, make in injected.items():
        monkeypatch.setattr(os, name, only_for(path, make(), getattr(os, name)))
    with pytest.raises(JournalWriteError) as info:
        journal.append(path, make_record(timestamp=_ts(2)))
    monkeypatch.undo()
    data = path.read_bytes()
    error = info.value
    assert error.errno == code and error.remains is remains and error.offset == len(before)
    for text in says:
        assert text.format(size=len(before), partial=len(data) - len(before)) in str(error)
    assert data.startswith(before)
    got = journal.read(path)
    assert len(got.records) == 1  # a fragment that remains is one unreadable line, no record
    if data == before:
        assert got.diagnostics == []
    else:
        assert [d.kind for d in got.diagnostics] == [DiagnosticKind.TORN]
    journal.append(path, make_record(timestamp=_ts(3)))  # the next append is whole
    assert len(journal.read(path).records) == 2


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), target)
    return target


_FSIZE_CHILD = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
from evalkit.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def test_a_real_kernel_refusal_mid_line_leaves_the_journal_as_it_was(metrics: Path) -> None:
    """Finding 9 through the real OS: RLIMIT_FSIZE lets the kernel write 40 bytes of the line,
    then refuse (EFBIG), as a disk that fills up does; evalkit score must leave no fragment."""
    target = metrics / "eval.jsonl"
    journal.append(target, make_record(timestamp=_ts(1)))
    before = target.read_bytes()
    argv = ["score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP, "--json"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _FSIZE_CHILD, str(len(before) + 40), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert target.read_bytes() == before
    assert "the record was NOT appended to" in proc.stderr
    assert "nothing of the record is on disk" in proc.stderr
    assert json.loads(proc.stdout)["timestamp"] == TIMESTAMP  # still printed


def test_cli_says_when_the_record_may_be_partly_on_disk(
    metrics: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli.main import main

    target = metrics / "eval.jsonl"
    journal.append(target, make_record(timestamp=_ts(1)))
    monkeypatch.setattr(os, "write", only_for(target, _disk_fills_mid_write(os.write), os.write))
    monkeypatch.setattr(os, "ftruncate", only_for(target, _fails(errno.EIO), os.ftruncate))
    code = main(["score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 2
    assert f"the record may be PARTLY on disk in {target}" in err
    assert "NOT appended" not in err


# ------------------------------------------------------------------------------ non-files


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "dev-null"])
def test_a_fifo_or_device_is_never_a_journal(tmp_path: Path, kind: str) -> None:
    """Finding 12: a FIFO as a journal hung the reader; /dev/zero was read without bound."""
    if kind == "fifo":
        path = fifo(tmp_path / "eval.jsonl")
    else:
        path = "/dev/zero" if kind == "dev-zero" else "/dev/null"
    for call in (journal.read, lambda p: journal.append(p, make_record())):
        outcome = in_child(call, path, timeout=20)
        assert outcome.kind == "raised", outcome
        assert outcome.evalkit_error, outcome.traceback
        assert path in outcome.message and "not a regular file" in outcome.message


@pytest.mark.parametrize("command", ["journal", "verify", "report", "facts", "judge"])
def test_every_journal_command_refuses_a_fifo_in_time(tmp_path: Path, command: str) -> None:
    path = fifo(tmp_path / "eval.jsonl")
    argv = {
        "journal": ["journal", "--journal", path],
        "verify": ["verify", "r-eval-1", "--metrics-dir", str(tmp_path), "--journal", path],
        "report": ["report", "r-eval-1", "--journal", path],
        "facts": ["facts", "r-eval-1", "--journal", path],
        "judge": ["judge", "--rules", "--journal", path],
    }[command]
    outcome = main_in_child(argv, timeout=30)
    assert outcome.kind == "returned", outcome
    code, _, err = outcome.value
    assert code == 1 and "named pipe" in err, err


# --------------------------------------------------------------------------- hostile lines


def test_a_deeply_nested_line_is_a_diagnostic_naming_its_line(tmp_path: Path) -> None:
    """Finding 11: one line of '[' x 1000 raised RecursionError out of journal.read."""
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(1)))
    with path.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "\n")
        fh.write('{"a":' * 500 + "1" + "}" * 500 + "\n")  # parses, far deeper than a record
    got = journal.read(path)
    assert len(got.records) == 1
    assert [(d.line, d.kind) for d in got.diagnostics] == [
        (2, DiagnosticKind.MALFORMED),
        (3, DiagnosticKind.MALFORMED),
    ]
    assert "nested too deeply" in got.diagnostics[0].reason
    assert "nested more than 32 levels" in got.diagnostics[1].reason


@pytest.mark.parametrize("command", ["journal", "verify", "report", "facts", "judge"])
def test_every_journal_command_survives_a_deeply_nested_line(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli.main import main

    path = tmp_path / "eval.jsonl"
    rec = journal.append(path, make_record(timestamp=_ts(1)))
    with path.open("a", encoding="utf-8") as fh:
        fh.write("[" * 1000 + "\n")
    run_id = rec["run_id"]
    argv = {
        "journal": ["journal", "--journal", str(path)],
        "verify": ["verify", "nope-eval-1", "--metrics-dir", str(tmp_path), "--journal", str(path)],
        "report": ["report", run_id, "--journal", str(path)],
        "facts": ["facts", run_id, "--journal", str(path)],
        "judge": ["judge", "--rules", "--journal", str(path)],
    }[command]
    # with the recursion limit raised, as a test earlier in an xdist worker may leave it:
    # the reader's bound is fixed, so the reason is the same whatever the limit
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        code = main(argv)
    finally:
        sys.setrecursionlimit(limit)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "RecursionError" not in out + err
    nested = (
        "line 2: malformed: not a JSON line "
        "(JSON nested too deeply for this reader (more than 512 levels))"
    )
    if command == "journal":
        assert code == 0 and "line 2: malformed" in out
    elif command == "verify":  # the run id is unknown; the skipped line is counted
        assert code == 1 and "unknown run id 'nope-eval-1'; 1 unreadable line(s)" in err
    elif command == "report":  # the record on line 1 is still found and rendered
        assert code == 0 and run_id in out
    else:  # facts and judge read the whole journal and name the line they skip
        assert code == 0 and nested in err


def test_invalid_utf8_and_encoded_surrogates_are_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    good = json.dumps(make_record(timestamp=_ts(1))).encode()
    cesu = json.dumps(make_record(timestamp=_ts(2))).replace("main-", "m\u00e9-").encode()
    cesu = cesu.replace("é".encode(), b"\xed\xa0\x80")  # a UTF-8-encoded lone surrogate
    path.write_bytes(good + b"\n" + cesu + b"\n" + b"\x00\x00\xff\n")
    got = journal.read(path)
    assert len(got.records) == 1
    assert [(d.line, d.kind) for d in got.diagnostics] == [
        (2, DiagnosticKind.MALFORMED),
        (3, DiagnosticKind.MALFORMED),
    ]
    assert "invalid UTF-8" in got.diagnostics[0].reason


def test_a_line_over_the_line_cap_is_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record(timestamp=_ts(1)))
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"x": "y" * 5000}) + "\n")
    monkeypatch.setenv("EVALKIT_MAX_LINE_BYTES", "4096")
    got = journal.read(path)
    assert len(got.records) == 1
    assert got.diagnostics[0].line == 2 and "exceeds the line cap" in got.diagnostics[0].reason
    monkeypatch.setenv("EVALKIT_MAX_FILE_BYTES", "1000")
    with pytest.raises(EvalkitError, match="exceeds the 1000-byte cap"):
        journal.read(path)


def test_a_lone_surrogate_is_written_escaped_and_read_back(tmp_path: Path) -> None:
    """Finding 10: UnicodeEncodeError when writing a record whose session id holds one."""
    path = tmp_path / "eval.jsonl"
    rec = make_record(session_id="s\ud800x")
    stored = journal.append(path, rec)
    line = path.read_bytes()
    assert b"s\\ud800x" in line
    line.decode("utf-8")  # valid UTF-8 on disk
    got = journal.read(path)
    assert got.records == [stored] and got.records[0]["session_id"] == "s\ud800x"


def test_an_invalid_line_with_a_run_id_is_named_by_a_lookup(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    rec = make_record()
    rec["kpis"]["total_waves"] = -1
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    got = journal.read(path)
    assert got.records == []
    assert got.diagnostics[0].run_id == rec["run_id"]
    assert got.diagnostics[0].kind is DiagnosticKind.INVALID


def test_a_dangling_symlink_journal_is_named_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "eval.jsonl"
    link.symlink_to(tmp_path / "elsewhere" / "eval.jsonl")
    for call in (journal.read, lambda p: journal.append(p, make_record())):
        with pytest.raises(EvalkitError, match="a dangling symlink"):
            call(link)
    assert not (tmp_path / "elsewhere").exists()
