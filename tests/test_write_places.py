"""Issue 24, findings 3 and 11: where evalkit writes on a user's word.

Finding 3: a symlinked ``eval.jsonl`` in a metrics directory (a fleet glob over other people's
repositories) made journaling append sealed records to whatever file it pointed at. Finding 11:
output flags overwrote what must never be overwritten (``judge run --out`` into a frozen gold
file or ``sessions.jsonl``, ``report --out`` onto ``eval.jsonl``, ``score --all --out`` onto the
ledger, ``calibrate --out`` onto a gold file). The class: a writer never follows a link into a
file it did not create, never appends to a file whose first line is not its own, and no output
flag writes into ``gold/``, ``calibrations/``, the lock, a ledger or a journal
(:mod:`evalkit.files.output`, :func:`evalkit.cli.common.output_path`). Every refusal exits 1,
names the path and why, and leaves every byte as it was.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared
from record_factory import TIMESTAMP

import evalkit
from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.files.append import append_lines
from evalkit.journal import reader as journal

CASE = ("conformance", "public", "random-20260919-002")
GOLD_V1 = REPO_ROOT / "gold" / "instruction-adherence" / "v1"


def _digests(root: Path) -> dict[str, str]:
    """sha256 of every regular file below ``root`` (links not followed)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "repo" / "metrics"
    shutil.copytree(require_shared(*CASE), target)
    (target / "eval.jsonl").unlink(missing_ok=True)
    return target


def _victim(tmp_path: Path, text: str) -> Path:
    victim = tmp_path / "someone-else" / "notes.txt"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text(text, encoding="utf-8")
    return victim


# ------------------------------------------------------------------ finding 3: no link followed


@pytest.mark.parametrize("content", ["their notes\n", ""])
def test_a_symlinked_journal_in_a_fleet_is_refused_and_its_target_untouched(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    """A fleet glob over two repositories, one of whose eval.jsonl is a link to a file of
    someone else's (with content, or empty): that directory fails naming the link, the other
    is journaled, the target keeps every byte."""
    other = tmp_path / "repo2" / "metrics"
    shutil.copytree(metrics, other)
    victim = _victim(tmp_path, content)
    (metrics / "eval.jsonl").symlink_to(victim)
    argv = ["score", "--all", "--fleet", str(tmp_path / "repo*" / "metrics"), "--journal-each"]
    code = main([*argv, "--timestamp", TIMESTAMP, "--no-progress", "--format", "jsonl"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert victim.read_text(encoding="utf-8") == content
    assert f"journal {str(metrics / 'eval.jsonl')!r}: is a symbolic link" in err
    assert "1 journaled, 1 failed" in err
    assert journal.read(other / "eval.jsonl").records  # the other directory was journaled


def test_a_symlinked_journal_or_run_log_is_never_appended_through(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same for one directory's ``score --all --journal``, one record's ``score``, a
    record appended through the library, and a run log."""
    victim = _victim(tmp_path, "")
    link = metrics / "eval.jsonl"
    link.symlink_to(victim)
    record = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    for argv in (
        ["score", "--all", "--metrics-dir", str(metrics), "--journal", "--no-progress"],
        ["score", "--metrics-dir", str(metrics), "--timestamp", TIMESTAMP],
    ):
        assert main(argv) == 1
        assert f"{str(link)!r}: is a symbolic link" in capsys.readouterr().err
    with pytest.raises(EvalkitError, match="is a symbolic link"):
        journal.append(link, record)
    with pytest.raises(EvalkitError, match="is a symbolic link"):
        append_lines(link, ['{"a":1}'], "run log")
    assert victim.read_bytes() == b""


# --------------------------------------------------------- appends only to the writer's own file


def test_a_file_whose_first_line_is_not_a_journal_record_is_never_appended_to(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = _victim(tmp_path, '{"item_id": "a", "label": "pass"}\nmore\n')
    before = notes.read_bytes()
    argv = ["score", "--all", "--metrics-dir", str(metrics), "--journal", str(notes)]
    assert main([*argv, "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"journal {str(notes)!r}: its first line is not one of evalkit's journal records" in err
    assert notes.read_bytes() == before
    # an empty file is its own, and so is a journal whose first line is a record torn by a
    # writer killed mid-line (the reference engine's key order: record_kind second)
    torn = b'{"schema_version":1,"record_kind":"session-eval","run_id":"x-eval-2'
    for start in (b"", torn):
        fresh = tmp_path / f"j{len(start)}.jsonl"
        fresh.write_bytes(start)
        assert main([*argv[:-1], str(fresh), "--no-progress"]) == 0
        assert fresh.read_bytes().startswith(start) and len(journal.read(fresh).records) == 4
    capsys.readouterr()


def test_a_run_log_is_appended_to_only_when_its_first_line_is_a_run_log_line(
    tmp_path: Path,
) -> None:
    from evalkit.files.append import LineAppender
    from evalkit.judge.runlog import RUNLOG_LINES

    items = tmp_path / "gold-copy" / "v1" / "items.jsonl"
    items.parent.mkdir(parents=True)
    shutil.copyfile(GOLD_V1 / "items.jsonl", items)
    before = items.read_bytes()
    with pytest.raises(EvalkitError, match="its first line is not one of evalkit's run-log lines"):
        LineAppender(items, "run log", RUNLOG_LINES)
    assert items.read_bytes() == before
    log = tmp_path / "log.jsonl"
    line = '{"schema":"evalkit-judge-runlog/1","item_id":"x"}'
    append_lines(log, [line], "run log", RUNLOG_LINES)
    append_lines(log, [line], "run log", RUNLOG_LINES)
    assert log.read_text(encoding="utf-8") == f"{line}\n{line}\n"


# ------------------------------------------------------------- finding 11: never written here


def _record(metrics: Path) -> str:
    stored = journal.append(
        metrics / "eval.jsonl", evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    )
    return str(stored["run_id"])


def _refused(argv: list[str], target: Path, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"{str(target)!r}: is {why}" in err, err
    assert "nothing was written" in err


def test_report_and_judge_never_write_onto_the_journal_or_the_ledger(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _record(metrics)
    before = _digests(metrics)
    report = ["report", run_id, "--metrics-dir", str(metrics), "--out"]
    _refused(
        [*report, str(metrics / "eval.jsonl")], metrics / "eval.jsonl", "this command's", capsys
    )
    for name in ("sessions.jsonl", "events.jsonl"):
        _refused([*report, str(metrics / name)], metrics / name, f"{name} of the ledger", capsys)
    rules = ["judge", "--rules", "--metrics-dir", str(metrics), "--out"]
    _refused(
        [*rules, str(metrics / "sessions.jsonl")], metrics / "sessions.jsonl", "sessions", capsys
    )
    assert _digests(metrics) == before


def test_score_all_never_writes_its_table_onto_the_ledger(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digests(metrics)
    for name in ("sessions.jsonl", "events.jsonl"):
        argv = ["score", "--all", "--metrics-dir", str(metrics), "--no-progress", "--out"]
        _refused([*argv, str(metrics / name)], metrics / name, f"{name} of the ledger", capsys)
        fleet = ["score", "--all", "--fleet", str(metrics), "--no-progress", "--out"]
        _refused([*fleet, str(metrics / name)], metrics / name, f"{name} of the ledger", capsys)
    # through a link to the folder, or a hard link to the file: the same file, the same refusal
    alias = tmp_path / "alias"
    alias.symlink_to(metrics)
    argv = ["score", "--all", "--metrics-dir", str(metrics), "--no-progress", "--out"]
    _refused([*argv, str(alias / "sessions.jsonl")], alias / "sessions.jsonl", "sessions", capsys)
    assert _digests(metrics) == before


def test_judge_run_and_calibrate_never_write_into_a_gold_set(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The repository's frozen gold files, a gold copy outside it, and the ledger of the
    journal judged: refused before any call or any computation."""
    repo_gold = _digests(REPO_ROOT / "gold")
    copy = tmp_path / "gold-copy"
    shutil.copytree(GOLD_V1.parent, copy)
    copied = _digests(copy)
    items = GOLD_V1 / "items.jsonl"
    replay = tmp_path / "none.jsonl"
    judge = ["judge", "run", "--judge", f"replay:{replay}", "--out"]
    _refused([*judge, str(items), "--gold", str(GOLD_V1)], items, "inside", capsys)
    _refused(
        [*judge, str(copy / "v1" / "items.jsonl"), "--gold", str(copy / "v1")],
        copy / "v1" / "items.jsonl",
        "inside",
        capsys,
    )
    _record(metrics)
    sessions = metrics / "sessions.jsonl"
    journal_file = str(metrics / "eval.jsonl")
    _refused([*judge, str(sessions), "--journal", journal_file], sessions, "sessions", capsys)
    calibrate = ["calibrate", "--rule-judge", "--gold", str(copy), "--out"]
    _refused(
        [*calibrate, str(copy / "v1" / "items.jsonl")],
        copy / "v1" / "items.jsonl",
        "inside",
        capsys,
    )
    _refused(
        [*calibrate, str(copy / "DECISION_RULE.json")],
        copy / "DECISION_RULE.json",
        "inside",
        capsys,
    )
    lock = REPO_ROOT / "preregistration.lock.json"
    _refused([*calibrate, str(lock)], lock, "the pre-registration lock", capsys)
    assert _digests(REPO_ROOT / "gold") == repo_gold
    assert _digests(copy) == copied


def test_an_output_flag_never_writes_through_a_link_and_writes_atomically(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _record(metrics)
    victim = _victim(tmp_path, "keep me\n")
    link = tmp_path / "page.html"
    link.symlink_to(victim)
    report = ["report", run_id, "--metrics-dir", str(metrics), "--out"]
    _refused([*report, str(link)], link, "a symbolic link", capsys)
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    page = tmp_path / "out" / "page.html"
    page.parent.mkdir()
    hard = tmp_path / "hard.html"
    page.write_text("old\n", encoding="utf-8")
    hard.hardlink_to(page)
    assert main([*report, str(page)]) == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert hard.read_text(encoding="utf-8") == "old\n"  # a new file was renamed over it
    assert [p.name for p in page.parent.iterdir()] == ["page.html"]


def test_a_study_folder_or_a_lock_is_never_written_into_a_protected_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``study run --out`` and ``demo --out`` into calibrations/ or a gold set, and
    ``preregister --out`` into gold/: refused before any kernel starts or anything is locked."""
    before = _digests(REPO_ROOT / "gold"), _digests(REPO_ROOT / "calibrations")
    inside = REPO_ROOT / "calibrations" / "study"
    code = main(["study", "run", "agreement-study", "--no-lock", "--out", str(inside)])
    assert code == 1
    assert "is inside the repository's calibration certificates" in capsys.readouterr().err
    assert main(["demo", "--out", str(GOLD_V1 / "reports")]) == 1
    assert "is inside the repository's gold sets" in capsys.readouterr().err
    lock = GOLD_V1.parent / "preregistration.lock.json"
    assert main(["preregister", "--out", str(lock)]) == 1
    assert "is inside the repository's gold sets" in capsys.readouterr().err
    assert not inside.exists() and not (GOLD_V1 / "reports").exists() and not lock.exists()
    assert (_digests(REPO_ROOT / "gold"), _digests(REPO_ROOT / "calibrations")) == before


def test_writing_the_lock_never_follows_a_planted_link(tmp_path: Path) -> None:
    """The lock was written through ``<lock>.tmp``: a link planted there was followed."""
    from evalkit.prereg.lock import write_lock

    root = tmp_path / "repo"
    (root / "rubrics").mkdir(parents=True)
    (root / "rubrics" / "rubric-v9.md").write_text("# a rubric\n", encoding="utf-8")
    victim = _victim(tmp_path, "keep me\n")
    lock = root / "preregistration.lock.json"
    lock.with_name(lock.name + ".tmp").symlink_to(victim)
    write_lock(lock, root, date="2026-12-02")
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert '"rubric-v9"' in lock.read_text(encoding="utf-8")


def test_explore_never_writes_its_page_onto_a_journal_a_ledger_or_through_a_link(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``explore --out`` (merged from the explorer branch) passes the same check: the journal
    it reads, the ledger beside it, a link, gold/; refused before the page is built."""
    _record(metrics)
    before = _digests(metrics)
    explore = ["explore", "--metrics-dir", str(metrics), "--no-verify", "--no-progress", "--out"]
    journal_file = metrics / "eval.jsonl"
    _refused([*explore, str(journal_file)], journal_file, "this command's", capsys)
    for name in ("sessions.jsonl", "events.jsonl"):
        _refused([*explore, str(metrics / name)], metrics / name, f"{name} of the ledger", capsys)
    victim = _victim(tmp_path, "keep me\n")
    link = tmp_path / "explorer.html"
    link.symlink_to(victim)
    _refused([*explore, str(link)], link, "a symbolic link", capsys)
    inside = GOLD_V1 / "explorer.html"
    _refused([*explore, str(inside)], inside, "inside", capsys)
    fleet = ["explore", "--fleet", str(metrics), "--no-verify", "--no-progress", "--out"]
    _refused([*fleet, str(metrics / "sessions.jsonl")], metrics / "sessions.jsonl", "sess", capsys)
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert _digests(metrics) == before and not inside.exists()
    page = tmp_path / "ok.html"
    assert main([*explore, str(page)]) == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", ["results.json", "threshold-study.ipynb", "index.html"])
def test_a_link_planted_in_a_study_folder_is_refused_before_any_kernel(
    name: str, tmp_path: Path, kernel_calls: list[object], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each of the three files a study writes, planted as a link to someone's file in the
    folder ``--out`` names: refused before the kernel starts, the target untouched."""
    out = tmp_path / "out"
    out.mkdir()
    victim = _victim(tmp_path, "keep me\n")
    (out / name).symlink_to(victim)
    argv = ["study", "run", "threshold-study", "--no-lock", "-p", "n_resamples", "60"]
    assert main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{str(out / name)!r}: is a symbolic link" in err, err
    assert kernel_calls == [] and victim.read_text(encoding="utf-8") == "keep me\n"


def test_no_output_flag_writes_onto_the_ledger_or_journal_of_a_directory_not_in_play(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --out`` and ``explore --out`` onto another repository's ``eval.jsonl`` or
    ledger (a metrics directory this command does not read): refused the same way."""
    run_id = _record(metrics)
    other = tmp_path / "other" / "metrics"
    shutil.copytree(metrics, other)
    before = _digests(other)
    report = ["report", run_id, "--metrics-dir", str(metrics), "--out"]
    explore = ["explore", "--metrics-dir", str(metrics), "--no-verify", "--no-progress", "--out"]
    for argv in (report, explore):
        _refused([*argv, str(other / "eval.jsonl")], other / "eval.jsonl", "the journal", capsys)
        for name in ("sessions.jsonl", "events.jsonl"):
            _refused([*argv, str(other / name)], other / name, f"{name} of the ledger", capsys)
    assert _digests(other) == before
    beside = other / "page.html"  # beside them is fine: only their files are protected
    assert main([*report, str(beside)]) == 0 and beside.is_file()
