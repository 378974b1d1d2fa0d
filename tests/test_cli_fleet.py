"""``evalkit score --all --fleet`` (issue 15, item 2): the real command, serially, on a local
Dask cluster (``--workers 2``, a subprocess) and on a running scheduler the test starts
(loopback only); ``--journal-each`` then ``verify --all`` per directory, an incremental rerun,
failing directories among good ones, evalkit without Dask, and ``--help``.

The table is compared row for row (values and their types) with ``score_fleet`` called
directly; each directory's journal byte for byte with what ``score --all --journal`` writes
for that directory alone.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import IN_CI, REPO_ROOT
from fleet_support import bad_directories, make_fleet

from evalkit.cli.main import main
from evalkit.fleet.score import FleetFailureWarning, score_fleet
from evalkit.scoring.engine import LEDGER_COLUMNS, score_ledger

TIMESTAMP = "2026-10-01T00:00:00.000Z"
COLUMNS = [*LEDGER_COLUMNS, "metrics_dir"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three generated ledgers and one of the hostile generator (whitespace ids, bad lines)."""
    return make_fleet(tmp_path_factory.mktemp("fleet"), sizes=(6, 9, 7))


def _copy(dirs: list[str], root: Path) -> list[str]:
    """The fleet copied under ``root`` (journaling tests write into their directories)."""
    out = []
    for d in dirs:
        target = root / Path(d).parent.name / "metrics"
        shutil.copytree(d, target)
        out.append(str(target))
    return out


def _fleet_file(dirs: list[str], path: Path) -> str:
    path.write_text("# the fleet\n" + "".join(f"{d}\n" for d in dirs), encoding="utf-8")
    return str(path)


def _frame_rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Rows with each score's type, so 1 (int) and 1.0 (float) never compare equal."""
    return [
        (r.session_id, r.dimension, r.status, type(r.score).__name__, r.score, r.evidence,
         r.metrics_dir)
        for r in frame.itertuples(index=False)
    ]  # fmt: skip


def _jsonl_rows(path: Path) -> list[tuple[Any, ...]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        assert list(r) == COLUMNS
        score = r["score"]
        out.append(
            (r["session_id"], r["dimension"], r["status"], type(score).__name__, score,
             r["evidence"], r["metrics_dir"])
        )  # fmt: skip
    return out


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _needs_dask() -> None:
    """Skip without Dask (fail under CI: the Makefile installs it), never importing it here.

    Dask's threads in pytest's process would leave the tests that fork a memory-capped child
    (tests/hostile.py) without the address space to import scipy.
    """
    import importlib.util

    if importlib.util.find_spec("distributed") is None:  # pragma: no cover
        if IN_CI:
            raise ImportError("dask is not installed (pip install 'evalkit[fleet]')")
        pytest.skip("dask is not installed (pip install 'evalkit[fleet]')")


@pytest.fixture(autouse=True)
def _dask_stays_out_of_this_process() -> Iterator[None]:
    before = "distributed" in sys.modules
    yield
    assert before or "distributed" not in sys.modules, "a test imported Dask in pytest's process"


def _row(err: str, metrics_dir: str, numbers: int) -> tuple[list[str], str]:
    """A directory's line of the summary table on stderr: its number cells and its result."""
    line = next(x for x in err.splitlines() if x.startswith(f"  {metrics_dir} "))
    *cells, result = line[len(metrics_dir) + 2 :].split(None, numbers)
    return cells, result


def _blank_id_lines(metrics_dir: str) -> list[int]:
    """Lines of sessions.jsonl whose session_id is only whitespace (read here, not by evalkit)."""
    out = []
    text = (Path(metrics_dir) / "sessions.jsonl").read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.split("\n"), start=1):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        sid = value.get("session_id") if isinstance(value, dict) else None
        if isinstance(sid, str) and sid and not sid.strip():
            out.append(number)
    return out


def _journal_alone(metrics_dir: str, root: Path) -> bytes:
    """What ``score --all --journal`` writes for this directory alone (a copy, same run)."""
    alone = root / "alone" / Path(metrics_dir).parent.name
    shutil.copytree(metrics_dir, alone, ignore=shutil.ignore_patterns("eval.jsonl"))
    code = main(
        ["score", "--all", "--journal", "--metrics-dir", str(alone), "--timestamp", TIMESTAMP,
         "--no-progress", "--out", str(root / "alone.csv")]
    )  # fmt: skip
    assert code == 0
    return (alone / "eval.jsonl").read_bytes()


# -- the table ---------------------------------------------------------------------------------


def test_serial_table_equals_score_fleet_in_every_format(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = score_fleet(fleet, "rubric-v1")
    out = tmp_path / "t.jsonl"
    argv = ["score", "--all", "--fleet", _fleet_file(fleet, tmp_path / "fleet.txt")]
    assert main([*argv, "--rubric", "rubric-v1", "--out", str(out)]) == 0
    assert _jsonl_rows(out) == _frame_rows(expected)
    err = capsys.readouterr().err
    assert "score --all --fleet (rubric-v1)" in err and "100%" in err  # the bar, on stderr
    sessions = expected.attrs["fleet"].sessions
    assert err.splitlines()[-1] == (
        f"evalkit score: fleet of 4 metrics directories (rubric-v1, serially in this process): "
        f"4 scored, 0 failed; {sessions} sessions, {len(expected)} rows"
    )
    # the summary table: one line per directory, its sessions and rows as score_fleet counts them
    assert "  METRICS_DIR" in err and err.index("  METRICS_DIR") > err.index("100%")
    below = err.splitlines()[
        [x.startswith("  METRICS_DIR") for x in err.splitlines()].index(True) :
    ]
    header, *rest = below
    # the table's rows, then each directory's ledger lines skipped (the generator writes some)
    lines = list(itertools.takewhile(lambda x: x.startswith("  ") and ": ledger: " not in x, rest))
    assert header.split() == ["METRICS_DIR", "SESSIONS", "ROWS", "RESULT"]
    assert len(lines) == len(fleet)
    assert rest[len(fleet)].startswith(f"  {fleet[0]}: ledger: ")
    for at in (header.index("SESSIONS") + len("SESSIONS"), header.index("ROWS") + len("ROWS")):
        assert all(x[at - 1] != " " and x[at : at + 2] == "  " for x in lines)  # right-aligned
    assert {x.index(" ok") + 1 for x in lines} == {header.index("RESULT")}
    for d in fleet:
        mine = expected[expected["metrics_dir"] == d]
        cells, result = _row(err, d, 2)
        assert cells == [str(mine["session_id"].nunique()), str(len(mine))], d
        assert result.startswith("ok"), d
    hostile = fleet[-1]
    (line,) = _blank_id_lines(hostile)  # the id skipped, named by file, line and field
    note = f'{hostile}/sessions.jsonl:{line}: session_id: only whitespace ("   "): not scored'
    assert expected.attrs["fleet"].outcomes[-1].notes == (note,)  # score_fleet's own summary
    assert _row(err, hostile, 2)[1] == f"ok; 1 session id(s) not scored: {note}"

    parquet = tmp_path / "t.parquet"
    assert main([*argv, "--rubric", "rubric-v1", "--out", str(parquet), "--no-progress"]) == 0
    back = pd.read_parquet(parquet)
    # parquet stores the score as a nullable double: a null reads back as NaN, not None
    back["score"] = back["score"].astype(object).where(back["score"].notna(), None)
    pd.testing.assert_frame_equal(back, expected, check_dtype=False)

    assert main([*argv, "--rubric", "rubric-v1", "--format", "csv", "--no-progress"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(csv.columns) == COLUMNS
    assert csv["metrics_dir"].tolist() == expected["metrics_dir"].tolist()
    assert csv["evidence"].tolist() == expected["evidence"].tolist()


@pytest.mark.slow
def test_on_a_local_cluster_the_table_is_the_serial_one_and_a_failure_is_listed(
    fleet: list[str], tmp_path: Path
) -> None:
    _needs_dask()
    missing = str(tmp_path / "gone")
    dirs = [*fleet[:2], missing, *fleet[2:]]
    out = tmp_path / "t.jsonl"
    done = _cli(
        "score", "--all", "--fleet", _fleet_file(dirs, tmp_path / "fleet.txt"),
        "--workers", "2", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one directory failed
    with pytest.warns(FleetFailureWarning):
        expected = score_fleet(dirs)  # serially, in this process
    assert _jsonl_rows(out) == _frame_rows(expected)  # the others' table is still written
    assert "(rubric-v2, on a local Dask cluster of 2 workers): 4 scored, 1 failed" in done.stderr
    assert _row(done.stderr, missing, 2) == (
        ["-", "-"],
        f"failed [input]: metrics directory not found: {missing} (expected a folder holding "
        "sessions.jsonl and events.jsonl)",
    )
    assert "score --all --fleet (rubric-v2)" in done.stderr and "5/5" in done.stderr  # the bar
    assert done.stdout == ""


_SCHEDULER = textwrap.dedent(
    """
    import json, sys
    import dask.distributed as dd

    def seen(dask_scheduler):
        return {name: sum(prefix.all_durations.values())
                for name, prefix in dask_scheduler.task_prefixes.items()}

    if __name__ == "__main__":
        cluster = dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0")
        with cluster, dd.Client(cluster) as client:
            print(cluster.scheduler_address, flush=True)
            for line in sys.stdin:  # each line asks for the compute seconds per task prefix
                print(json.dumps(client.run_on_scheduler(seen)), flush=True)
    """
)


class _Scheduler:
    """A running Dask scheduler with 2 worker processes on loopback, in a child process (see
    :func:`_needs_dask`); it closes when its stdin does."""

    def __init__(self, tmp: Path) -> None:
        script = tmp / "scheduler.py"  # a file: spawned workers re-import the main module
        script.write_text(_SCHEDULER, encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.address = self.stdout.readline().strip()

    def task_seconds(self) -> dict[str, float]:
        """Seconds of compute the scheduler has seen, per task prefix."""
        self.stdin.write("prefixes\n")
        self.stdin.flush()
        return dict(json.loads(self.stdout.readline()))

    def close(self) -> int:
        self.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Scheduler]:
    _needs_dask()
    running = _Scheduler(tmp_path_factory.mktemp("scheduler"))
    try:
        assert running.address.startswith("tcp://127.0.0.1:"), running.address
        yield running
    finally:
        code = running.close()
    assert code == 0


@pytest.mark.slow
def test_journal_each_on_a_scheduler_verifies_and_a_rerun_appends_nothing(
    fleet: list[str], scheduler: _Scheduler, tmp_path: Path
) -> None:
    dirs = _copy(fleet, tmp_path / "fleet")
    glob = str(tmp_path / "fleet" / "*" / "metrics")
    argv = ["score", "--all", "--fleet", glob, "--scheduler", scheduler.address, "--journal-each"]
    assert "evalkit-fleet" not in scheduler.task_seconds()
    first = _cli(*argv, "--timestamp", TIMESTAMP, "--format", "jsonl", "--out", str(tmp_path / "t"))
    assert first.returncode == 0, first.stderr
    assert scheduler.task_seconds()["evalkit-fleet"] > 0  # the tasks ran on its workers
    where = f"on the Dask scheduler at {scheduler.address} (2 workers at the start)"
    assert f"(rubric-v2, {where}): " in (first.stderr)
    for d in dirs:
        journal = Path(d) / "eval.jsonl"
        # each directory's journal is what score --all --journal writes for it alone
        assert journal.read_bytes() == _journal_alone(d, tmp_path)
        n = len(journal.read_bytes().splitlines())
        refused = str(len(_blank_id_lines(d)))
        assert _row(first.stderr, d, 4) == (
            [str(n), "0", refused, str(6 * n)],  # rubric-v2: six deterministic rows a record
            f"ok, journal {journal}",
        )
        verify = ["verify", "--all", "--journal", str(journal), "--metrics-dir", d]
        assert main([*verify, "--no-progress"]) == 0, d
    hostile = dirs[-1]
    assert f"  {hostile}: refused '   ': session_id: must be a non-empty string" in first.stderr
    assert f"  {hostile}: ledger: " in first.stderr  # its bad lines, each as file:line
    assert f"    {hostile}/events.jsonl:" in first.stderr
    # the table holds the rows of the records appended, with their directory
    table = _jsonl_rows(tmp_path / "t")
    assert [r[-1] for r in table] == score_fleet(dirs)["metrics_dir"].tolist()

    before = {d: (Path(d) / "eval.jsonl").read_bytes() for d in dirs}
    again = _cli(*argv, "--no-progress")
    assert again.returncode == 0, again.stderr
    assert {d: (Path(d) / "eval.jsonl").read_bytes() for d in dirs} == before
    assert again.stdout == ",".join(COLUMNS) + "\n"  # nothing appended, an empty table
    assert "4 journaled, 0 failed; 0 scored and appended" in again.stderr
    assert "--rescore scores unchanged sessions again" in again.stderr

    rescored = _cli(*argv, "--rescore", "--no-progress", "--out", str(tmp_path / "t.csv"))
    assert rescored.returncode == 0, rescored.stderr
    for d in dirs:
        assert len((Path(d) / "eval.jsonl").read_bytes().splitlines()) == 2 * len(
            before[d].splitlines()
        )


def test_serial_journal_each_equals_the_one_directory_journal(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = _copy(fleet[:2], tmp_path / "fleet")
    argv = ["score", "--all", "--fleet", str(tmp_path / "fleet" / "*" / "metrics")]
    assert main([*argv, "--journal-each", "--timestamp", TIMESTAMP, "--no-progress"]) == 0
    for d in dirs:
        assert (Path(d) / "eval.jsonl").read_bytes() == _journal_alone(d, tmp_path)
    assert "2 journaled, 0 failed" in capsys.readouterr().err


# -- failures ----------------------------------------------------------------------------------


def test_failing_directories_are_reported_and_the_others_written(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _copy(fleet[:2], tmp_path / "good")
    bad = bad_directories(tmp_path / "bad")
    linked = tmp_path / "bad" / "journal-is-the-ledger"
    shutil.copytree(good[0], linked)
    (linked / "eval.jsonl").symlink_to(linked / "sessions.jsonl")
    dirs = [good[0], *bad, good[1]]
    out = tmp_path / "t.jsonl"
    argv = ["score", "--all", "--fleet", _fleet_file(dirs, tmp_path / "fleet.txt"), "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    with pytest.warns(FleetFailureWarning):
        assert _jsonl_rows(out) == _frame_rows(score_fleet(dirs))
    assert f"2 scored, {len(bad)} failed" in err
    failed = {}
    for d, reason in bad.items():
        cells, failed[d] = _row(err, d, 2)
        assert cells == ["-", "-"] and failed[d].startswith("failed [input]: "), (d, failed[d])
        assert reason in failed[d], (d, failed[d])
    blank = str(tmp_path / "bad" / "only-blank-ids")
    field = f'{blank}/sessions.jsonl:1: session_id: empty or only whitespace (got "   ")'
    assert failed[blank].endswith(field)  # the file, the line and the field

    dirs.append(str(linked))
    sessions_before = (linked / "sessions.jsonl").read_bytes()
    assert main([*argv[:3], _fleet_file(dirs, tmp_path / "fleet.txt"), "--no-progress",
                 "--journal-each", "--out", str(out)]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert f"2 journaled, {len(bad) + 1} failed" in err
    for d in bad:  # the same reasons (no id was scored, so none was skipped by scoring)
        result = _row(err, d, 4)[1]
        assert result == failed[d] if d != blank else result.endswith(field), (d, result)
    assert _row(err, str(linked), 4)[1] == (
        f"failed [input]: {linked}/eval.jsonl is the ledger's sessions.jsonl: records are never "
        "appended to the ledger"
    )
    assert (linked / "sessions.jsonl").read_bytes() == sessions_before  # never appended to
    for d in good:
        assert (Path(d) / "eval.jsonl").stat().st_size > 0
    for d in bad:
        assert not (Path(d) / "eval.jsonl").exists()  # no journal started where nothing is scored
    assert _jsonl_rows(out) == _frame_rows(score_fleet(good))


def _write_lines(path: Path, lines: list[str]) -> str:
    path.mkdir(parents=True)
    (path / "sessions.jsonl").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


def test_bad_ledgers_are_named_by_file_line_and_field_and_the_others_kept(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _copy(fleet[:2], tmp_path / "good")
    start = '"started_at": "2026-01-01T00:00:00Z"'
    lines = _write_lines(
        tmp_path / "bad" / "lines",
        [f'{{"session_id": 12, {start}}}', "{bad json", "[1, 2]", f"{{{start}}}",
         '{"session_id": null}'],
    )  # fmt: skip
    fields = _write_lines(
        tmp_path / "bad" / "fields",
        [f"{{{start}}}", '{"session_id": ""}', '{"session_id": 1e999}'],
    )
    dirs = [good[0], lines, fields, good[1]]
    p, q = f"{lines}/sessions.jsonl", f"{fields}/sessions.jsonl"
    expected = {
        lines: (
            f"failed [input]: no session to score: sessions.jsonl {p!r}: 5 non-blank line(s), "
            f"3 JSON object(s), 1 malformed; {p}:1: session_id: not a string (got 12); {p}:2: "
            "malformed line skipped: invalid JSON: Expecting property name enclosed in double "
            f"quotes at column 2; {p}:3: not a JSON object (array); and 2 more line(s)"
        ),
        fields: (
            f"failed [input]: no session to score: sessions.jsonl {q!r}: 3 non-blank line(s), "
            f"3 JSON object(s), 0 malformed; {q}:1: session_id: missing; {q}:2: session_id: "
            f'empty or only whitespace (got ""); {q}:3: session_id: not a string (got Infinity)'
        ),
    }
    argv = ["score", "--all", "--fleet", _fleet_file(dirs, tmp_path / "fleet.txt"), "--no-progress"]
    out = tmp_path / "t.jsonl"
    assert main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    for d, result in expected.items():
        assert _row(err, d, 2) == (["-", "-"], result)
    assert _jsonl_rows(out) == _frame_rows(score_fleet(good))  # the others' rows, all of them
    assert "2 scored, 2 failed" in err

    assert main([*argv, "--journal-each", "--timestamp", TIMESTAMP, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    for d, result in expected.items():
        assert _row(err, d, 4) == (["-", "-", "-", "-"], result)
        assert not (Path(d) / "eval.jsonl").exists()  # nothing to score: no journal started
    for d in good:
        assert (Path(d) / "eval.jsonl").read_bytes() == _journal_alone(d, tmp_path)
    assert "2 journaled, 2 failed" in err


def test_the_ledger_lines_a_scored_directory_skipped_are_named_in_table_mode(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: only --journal-each listed them; the table modes (fleet and one directory) were
    # silent about a line of a directory that still scored
    noisy = _copy(fleet[:1], tmp_path / "noisy")[0]
    before = len(score_ledger(noisy).attrs["diagnostics"])  # the generator's own bad lines
    sessions = Path(noisy) / "sessions.jsonl"
    n = len(sessions.read_text(encoding="utf-8").splitlines())
    with sessions.open("a", encoding="utf-8") as fh:
        fh.write("{bad json\n")
    where = f"{sessions}:{n + 1}"
    out = tmp_path / "t.jsonl"
    fleet_argv = ["score", "--all", "--fleet", noisy, "--no-progress", "--out", str(out)]
    assert main(fleet_argv) == 0
    err = capsys.readouterr().err
    said = f"ledger: {before + 1} line(s) or file(s) skipped or doubted while reading:"
    assert f"{noisy}: {said}" in err
    assert where in err and "invalid JSON" in err.split(where, 1)[1].splitlines()[0]
    assert _jsonl_rows(out) == _frame_rows(score_fleet([noisy]))  # the rows are all there
    one_argv = ["score", "--all", "--metrics-dir", noisy, "--no-progress", "--out", str(out)]
    assert main(one_argv) == 0
    err = capsys.readouterr().err
    assert f"evalkit score: {said}" in err and where in err


_FSIZE = textwrap.dedent(
    """
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    from evalkit.cli.main import main
    sys.exit(main(sys.argv[2:]))
    """
)


@pytest.mark.slow
def test_an_append_that_fails_exits_2_says_what_is_on_disk_and_the_others_finish(
    fleet: list[str], tmp_path: Path
) -> None:
    """A disk that fills up, through the real kernel: RLIMIT_FSIZE lets the larger journal
    grow past no byte of the limit (EFBIG mid-record, as a full disk does)."""
    small, large = _copy(fleet[:2], tmp_path / "fleet")
    alone = {d: _journal_alone(d, tmp_path) for d in (small, large)}
    limit = len(alone[small]) + 100
    assert len(alone[large]) > limit
    argv = [
        "score",
        "--all",
        "--fleet",
        str(tmp_path / "fleet" / "*" / "metrics"),
        "--journal-each",
        "--timestamp",
        TIMESTAMP,
        "--format",
        "jsonl",
        "--no-progress",
    ]
    done = subprocess.run(
        [sys.executable, "-c", _FSIZE, str(limit), *argv],
        capture_output=True, text=True, timeout=240, cwd=REPO_ROOT, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr  # an I/O failure, SPEC section 3
    assert (Path(small) / "eval.jsonl").read_bytes() == alone[small]
    held = (Path(large) / "eval.jsonl").read_bytes()
    n = len(held.splitlines())
    assert 0 < n < len(alone[large].splitlines())
    assert held == b"".join(alone[large].splitlines(keepends=True)[:n])  # whole records only
    cells, result = _row(done.stderr, large, 4)
    assert cells == ["-", "-", "-", "-"]
    journal = f"{large}/eval.jsonl"
    assert result.startswith(f"failed [io]: journal {journal!r}: appending the record failed ("), (
        result
    )
    assert "File too large" in result and "nothing of the record is on disk" in result, result
    assert result.endswith(f"the {n} record(s) appended before it in this batch are on disk")
    assert "1 journaled, 1 failed" in done.stderr
    table = [json.loads(x) for x in done.stdout.splitlines()]
    assert {r["metrics_dir"] for r in table} == {small}  # the rows of the journal that finished


@pytest.mark.slow
def test_a_table_that_cannot_be_written_exits_2_after_the_summary(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A disk that fills up while the table is written (RLIMIT_FSIZE, through the real kernel):
    exit 2 after the summary, the file named, and the old table left as it was (the write is
    atomic). A folder as --out is refused before any scoring (exit 1)."""
    out = tmp_path / "table.csv"
    out.write_text("the old table\n", encoding="utf-8")
    argv = ["score", "--all", "--fleet", fleet[0], "--no-progress", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", _FSIZE, "200", *argv, "--format", "csv"],
        capture_output=True, text=True, timeout=240, cwd=REPO_ROOT, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "1 scored, 0 failed" in done.stderr
    assert f"the table could not be written to {out}: --out {str(out)!r}: could not be " in (
        done.stderr
    )
    assert out.read_text(encoding="utf-8") == "the old table\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]  # no temporary file left
    folder = ["score", "--all", "--fleet", fleet[0], "--no-progress", "--out", str(tmp_path)]
    assert main(folder) == 1
    err = capsys.readouterr().err
    assert f"--out {str(tmp_path)!r}: is a directory, not a regular file" in err
    assert "scored" not in err


@pytest.mark.slow
def test_an_unreachable_scheduler_exits_2_and_a_malformed_address_1(fleet: list[str]) -> None:
    _needs_dask()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free now, and nothing listens on it
    address = f"tcp://127.0.0.1:{port}"
    quick = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    done = _cli("score", "--all", "--fleet", fleet[0], "--scheduler", address, env=quick)
    assert done.returncode == 2, done.stderr
    assert f"cannot reach the Dask scheduler at {address}: Timed out" in done.stderr
    assert done.stdout == ""
    bad = _cli("score", "--all", "--fleet", fleet[0], "--scheduler", "nonsense")
    assert bad.returncode == 1, bad.stderr
    assert "--scheduler 'nonsense': " in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metrics-dir", "x"], "--fleet names the metrics directories: it cannot be combined"),
        (["--session", "s1"], "--session cannot be combined with --fleet"),
        (["--journal"], "with --fleet use --journal-each"),
        (["--journal", "j.jsonl"], "with --fleet use --journal-each"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--timestamp", TIMESTAMP], "--timestamp only applies to --all --fleet with --journal-"),
        (["--rescore"], "--rescore only applies to --all --fleet with --journal-each"),
        (["--journal-each", "--no-write"], "--no-write cannot be combined with --journal-each"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "not allowed with argument"),
    ],
)
def test_conflicting_arguments_are_clear_errors(
    fleet: list[str], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["score", "--all", "--fleet", fleet[0], *extra])
    except SystemExit as exc:  # argparse's own (mutually exclusive options)
        code = exc.code
    assert code == 1
    assert message in capsys.readouterr().err
    assert not (Path(fleet[0]) / "eval.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fleet", "x"], "--fleet only applies to --all"),
        (["--all", "--workers", "2"], "--workers only applies to --all --fleet"),
        (["--all", "--journal-each"], "--journal-each only applies to --all --fleet"),
        (["--all", "--fleet", "no-such-*"], "fleet glob 'no-such-*' matched no directory"),
    ],
)
def test_fleet_options_need_all_and_a_fleet(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", *argv]) == 1
    assert message in capsys.readouterr().err


# -- without Dask, without pyarrow -------------------------------------------------------------

_HIDE = textwrap.dedent(
    """
    import importlib.abc, runpy, sys

    HIDDEN = set(sys.argv[1].split(","))

    class _NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)")
            return None

    sys.meta_path.insert(0, _NotInstalled())
    if sys.argv[2] == "--python":  # a library call instead of the command line
        exec(sys.argv[3])
    else:
        sys.argv = ["evalkit", *sys.argv[2:]]
        runpy.run_module("evalkit", run_name="__main__")
    """
)


def _without(hidden: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _HIDE, hidden, *argv],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO_ROOT,
        check=False,
    )


@pytest.mark.slow
def test_without_dask_the_fleet_runs_serially_and_a_cluster_names_the_extra(
    fleet: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    serial = _without("dask,distributed", "score", "--all", "--fleet", fleet[0], "--out", str(out))
    assert serial.returncode == 0, serial.stderr
    assert _jsonl_rows(out) == _frame_rows(score_fleet(fleet[0]))
    for flag in (["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:1"]):
        done = _without("dask,distributed", "score", "--all", "--fleet", fleet[0], *flag)
        assert done.returncode == 1, done.stderr
        assert f"{flag[0]} needs dask, which is not installed" in done.stderr
        assert "pip install 'evalkit[fleet]'" in done.stderr
        assert "--fleet scores serially in this process" in done.stderr
        assert done.stdout == ""


@pytest.mark.slow
def test_without_pyarrow_the_fleet_names_the_extra_instead_of_failing_every_directory(
    fleet: list[str],
) -> None:
    # before: every directory's task failed ("internal error ModuleNotFoundError"), then
    # decoding the tables raised it again: a traceback; now nothing is scored and the message
    # says what to install
    needs = "--fleet (each directory's table travels as an Arrow stream) needs pyarrow"
    for flag in ([], ["--workers", "2"], ["--journal-each"]):  # checked before a cluster starts
        done = _without("pyarrow", "score", "--all", "--fleet", fleet[0], "--no-progress", *flag)
        assert done.returncode == 1, done.stderr
        assert done.stderr == (
            f"evalkit score: error: {needs}, which is not installed; install the 'fleet' "
            "extra: pip install 'evalkit[fleet]'\n"
        )
        assert not (Path(fleet[0]) / "eval.jsonl").exists()
    call = "import evalkit; evalkit.score_fleet(sys.argv[4])"
    library = _without("pyarrow", "--python", call, fleet[0])
    assert library.returncode == 1
    assert library.stderr.rstrip().endswith(
        "MissingExtraError: score_fleet (each directory's table is an Arrow stream) needs "
        "pyarrow, which is not installed; install the 'fleet' extra: pip install "
        "'evalkit[fleet]'"
    )


def test_without_dask_and_pyarrow_one_message_names_both_extras(fleet: list[str]) -> None:
    done = _without("dask,distributed,pyarrow", "score", "--all", "--fleet", fleet[0],
                    "--workers", "2")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        "evalkit score: error: --workers needs dask, which is not installed; install the "
        "'fleet' extra: pip install 'evalkit[fleet]'; --fleet (each directory's table travels "
        "as an Arrow stream) needs pyarrow, which is not installed; install the 'fleet' "
        "extra: pip install 'evalkit[fleet]'\n"
    )


def test_help_says_how_a_fleet_runs_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in (
        "--fleet GLOB|FILE|DIR",
        "--workers N | --scheduler ADDRESS",
        "--journal-each",
        "Serially in this process unless --workers or --scheduler",
        "scored one after the other in this process (no Dask needed)",
        "pip install 'evalkit[fleet]'",
        "every run needs pyarrow (also in the 'fleet' extra)",
        "then a summary table, one line per directory",
        "the table of those that scored is still written (a partial result is kept",
        "exit codes with --fleet: 0 every directory scored; 1 a directory that cannot be scored",
        "2 a directory that could not be read or journaled (an append failed: the reason says",
        "a task lost with its worker, the table could not be written",
        "--journal FILE is refused with --fleet",
    ):
        assert phrase in text, phrase
