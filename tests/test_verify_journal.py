"""verify --all: every record of the journal in one pass, each with verify RUN_ID's outcome.

Issue 13 item 3: a journal written by ``score --all --journal`` verifies clean (exit 0); among
untouched records, every tampered one is found and named, each with the outcome (and the very
result) the single-record ``verify_record`` gives; exit 1 for any drift, 3 when the only
findings are version mismatches; csv and jsonl output.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.record.seal import seal_record
from evalkit.simulate.hostile_ledgers import generate_ledger
from evalkit.verify.rescore import verify_journal, verify_record
from evalkit.verify.result import EntryOutcome

Record = dict[str, Any]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated ledger and its journal, written by score --all --journal (both rubrics)."""
    metrics = tmp_path_factory.mktemp("verify-all") / "metrics"
    generate_ledger(metrics, n_sessions=40, n_events=3000, seed=5)
    for rubric, ts in (
        ("rubric-v2", "2026-10-01T00:00:00.000Z"),
        ("rubric-v1", "2026-10-02T00:00:00.000Z"),
    ):
        argv = ["score", "--all", "--journal", "--metrics-dir", str(metrics), "--rubric", rubric,
                "--timestamp", ts, "--no-progress", "--out", str(metrics.parent / "t.csv")]  # fmt: skip
        assert main(argv) == 0
    return metrics


def _copy(scored: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    import shutil

    metrics = tmp_path / "metrics"
    shutil.copytree(scored, metrics)
    return metrics, (metrics / "eval.jsonl").read_text("utf-8").splitlines()


def _dim(rec: Record, dim_id: str) -> Record:
    return next(d for d in rec["dimensions"] if d["id"] == dim_id)


def _flip(rec: Record) -> None:
    dim = rec["dimensions"][0]
    dim["status"] = "fail" if dim["status"] != "fail" else "pass"


def _reword(rec: Record) -> None:
    dim = _dim(rec, "efficiency-kpis")
    dim["evidence"] = dim["evidence"].replace("REPORTED, not graded", "Reported only")


# (line index, change, reseal, the outcome verify gives)
def _rubric(rec: Record, version: str, sha256: str) -> None:
    rec["rubric_version"] = version
    rec["provenance"]["rubric_sha256"] = sha256


TAMPERINGS: list[tuple[int, Callable[[Record], Any], bool, EntryOutcome]] = [
    (1, _flip, False, EntryOutcome.DRIFT),  # a verdict, the seal broken
    (4, lambda r: r["model"].update(id="another-model"), False, EntryOutcome.DRIFT),  # run input
    (7, _reword, True, EntryOutcome.DRIFT),  # resealed: re-scoring alone catches the wording
    (11, lambda r: r["provenance"].pop("record_sha256"), False, EntryOutcome.DRIFT),  # no seal
    (15, lambda r: r["kpis"].update(total_agents=-1), True, EntryOutcome.ERROR),  # not a record
    (20, lambda r: r.update(handle="someone", anonymized=False), False, EntryOutcome.DRIFT),
    # written by an evalkit that knew rubric-v9 and its text (sealed as such): a mismatch
    (50, lambda r: _rubric(r, "rubric-v9", "9" * 64), True, EntryOutcome.VERSION_MISMATCH),
    # a known text under an unknown label (rubric-v2's hash, labelled v3): a drift (issue 24)
    (55, lambda r: r.update(rubric_version="rubric-v3"), True, EntryOutcome.DRIFT),
]


def _tamper(
    lines: list[str], plan: list[tuple[int, Callable[[Record], Any], bool, Any]]
) -> list[str]:
    out = list(lines)
    for index, change, reseal, _ in plan:
        rec = json.loads(out[index])
        change(rec)
        out[index] = json.dumps(seal_record(rec) if reseal else rec)
    return out


def _assert_same_as_one_at_a_time(metrics: Path) -> None:
    found = verify_journal(None, metrics)
    for entry in found.entries:
        if entry.run_id is None:
            continue
        try:
            one = verify_record(entry.run_id, metrics)
        except EvalkitError as exc:
            assert entry.result is None and entry.error == str(exc), entry.run_id
        else:
            assert entry.result is not None, (entry.run_id, entry.error)
            assert entry.result.to_dict() == one.to_dict(), entry.run_id


def test_a_journal_written_by_score_all_verifies_clean(scored: Path) -> None:
    found = verify_journal(None, scored)
    assert found.exit_code == 0 and len(found.entries) >= 70
    assert {e.outcome for e in found.entries} == {EntryOutcome.AGREEMENT}
    assert main(["verify", "--all", "--metrics-dir", str(scored), "--no-progress"]) == 0


@pytest.mark.slow
def test_every_tampered_record_is_found_and_named_among_untouched_ones(
    scored: Path, tmp_path: Path
) -> None:
    metrics, lines = _copy(scored, tmp_path)
    tampered = _tamper(lines, TAMPERINGS)
    # a copy of line 25 that differs (sealed as its writer would), a line that is no record
    copy = json.loads(lines[25])
    _flip(copy)
    tampered += [json.dumps(seal_record(copy)), '{"run_id": 7, "torn":']
    (metrics / "eval.jsonl").write_text("\n".join(tampered) + "\n", encoding="utf-8")
    found = verify_journal(None, metrics)
    by_run = {e.run_id: e for e in found.entries}
    expected = {json.loads(lines[i])["run_id"]: outcome for i, _, _, outcome in TAMPERINGS}
    expected[json.loads(lines[25])["run_id"]] = EntryOutcome.DRIFT  # its copies differ
    # the record after a line resealed (or stripped of its seal) no longer follows it: the
    # chain names that line, and nothing but the chain differs in it
    after = [i + 1 for i, change, reseal, _ in TAMPERINGS if reseal or i == 11]
    for i in after:
        expected[json.loads(lines[i])["run_id"]] = EntryOutcome.DRIFT
        kinds = {d.kind.value for d in by_run[json.loads(lines[i])["run_id"]].result.drifts}
        assert kinds == {"chain"}, (i, kinds)
    flagged = {
        rid: e.outcome for rid, e in by_run.items() if e.outcome is not EntryOutcome.AGREEMENT
    }
    assert flagged == {**expected, None: EntryOutcome.UNREADABLE}
    assert found.exit_code == 1
    unreadable = by_run[None]
    assert unreadable.line == len(tampered) and "line" in (unreadable.error or "")
    _assert_same_as_one_at_a_time(metrics)


def test_only_version_mismatches_exit_3(scored: Path, tmp_path: Path, capsys: Any) -> None:
    metrics, lines = _copy(scored, tmp_path)
    # on the last line: a resealed line before another would break that one's link (drift)
    mismatch = [
        (len(lines) - 1, *t[1:]) for t in TAMPERINGS if t[3] is EntryOutcome.VERSION_MISMATCH
    ]
    (metrics / "eval.jsonl").write_text("\n".join(_tamper(lines, mismatch)) + "\n", "utf-8")
    assert main(["verify", "--all", "--metrics-dir", str(metrics), "--no-progress"]) == 3
    out = capsys.readouterr()
    assert "version-mismatch" in out.out and "1 version-mismatch" in out.err


def test_csv_and_jsonl_name_what_differs(scored: Path, tmp_path: Path, capsys: Any) -> None:
    metrics, lines = _copy(scored, tmp_path)
    (metrics / "eval.jsonl").write_text("\n".join(_tamper(lines, TAMPERINGS[:1])) + "\n", "utf-8")
    base = ["verify", "--all", "--metrics-dir", str(metrics), "--no-progress"]
    assert main([*base, "--format", "csv"]) == 1
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    bad = [r for r in rows if r["outcome"] != "agreement"]
    assert [r["run_id"] for r in bad] == [json.loads(lines[1])["run_id"]]
    assert bad[0]["exit_code"] == "1" and "[verdict,seal]" in bad[0]["what_differs"]
    assert main([*base, "--format", "jsonl"]) == 1
    entries = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(entries) == len(rows)
    [drift] = [e for e in entries if e["outcome"] == "drift"]
    assert {d["kind"] for d in drift["result"]["drifts"]} == {"verdict", "seal"}


def test_arguments(scored: Path, capsys: Any) -> None:
    assert main(["verify", "--metrics-dir", str(scored)]) == 1
    assert "give either RUN_ID or --all" in capsys.readouterr().err
    assert main(["verify", "x", "--all", "--metrics-dir", str(scored)]) == 1
    assert main(["verify", "--all", "--json", "--metrics-dir", str(scored)]) == 1
    assert main(["verify", "--all", "--journal", str(scored / "none.jsonl")]) == 1
    assert "no journal" in capsys.readouterr().err
