"""The journal is a chain (issue 24, finding 6): a deleted, inserted or moved line is a drift.

Every record the writer appends names the line before it (``provenance.previous_line_sha256``:
that line's seal, or the sha256 of its bytes), and its seal covers the link. ``verify --all``,
``verify RUN_ID`` and ``journal`` name the line whose link no longer holds. Journals written
before the chain still read and verify: their records are "unchained", a note, as long as no
record of the journal carries a link yet. Records printed without a journal
(``score --json --no-write``) are unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.journal.reader import read
from evalkit.record.seal import seal_record, without_seal
from evalkit.simulate.hostile_ledgers import generate_ledger
from evalkit.verify.diff import DriftKind
from evalkit.verify.rescore import verify_journal, verify_record

TS = "2026-10-01T00:00:00.000Z"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    metrics = tmp_path_factory.mktemp("chain") / "metrics"
    generate_ledger(metrics, n_sessions=12, n_events=400, seed=9)
    argv = ["score", "--all", "--journal", "--metrics-dir", str(metrics), "--timestamp", TS,
            "--no-progress", "--out", str(metrics.parent / "t.csv")]  # fmt: skip
    assert main(argv) == 0
    return metrics


def _copy(scored: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    metrics = tmp_path / "metrics"
    shutil.copytree(scored, metrics)
    return metrics, (metrics / "eval.jsonl").read_text("utf-8").splitlines()


def _write(metrics: Path, lines: list[str]) -> None:
    (metrics / "eval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _chain_drifts(metrics: Path) -> dict[str, list[str]]:
    """run id -> the details of its chain drifts, over the whole journal."""
    found = verify_journal(None, metrics)
    return {
        e.run_id: [d.detail for d in e.result.drifts if d.kind is DriftKind.CHAIN]
        for e in found.entries
        if e.result is not None and any(d.kind is DriftKind.CHAIN for d in e.result.drifts)
    }


def test_an_untouched_chained_journal_verifies_clean(scored: Path) -> None:
    chain = read(scored / "eval.jsonl").chain
    assert chain.started == 1 and chain.unchained == () and chain.intact
    assert verify_journal(None, scored).exit_code == 0


def test_a_deleted_line_is_a_drift_naming_where(scored: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    metrics, lines = _copy(scored, tmp_path)
    after = json.loads(lines[5])["run_id"]
    _write(metrics, lines[:4] + lines[5:])  # line 5 deleted
    drifts = _chain_drifts(metrics)
    assert list(drifts) == [after]
    assert "does not follow line 4" in drifts[after][0]
    # the same drift, one record at a time, and exit 1 from both commands
    one = verify_record(after, metrics)
    assert one.exit_code == 1 and any(d.kind is DriftKind.CHAIN for d in one.drifts)
    assert main(["verify", "--all", "--metrics-dir", str(metrics), "--no-progress"]) == 1
    assert main(["verify", after, "--metrics-dir", str(metrics)]) == 1
    assert "chain" in capsys.readouterr().out
    assert main(["journal", "--metrics-dir", str(metrics)]) == 0
    out = capsys.readouterr().out
    assert "chain     BROKEN" in out and "line 5: it does not follow line 4" in out


def test_an_inserted_line_is_a_drift(scored: Path, tmp_path: Path) -> None:
    metrics, lines = _copy(scored, tmp_path)
    # a record forged and sealed as a writer would, slipped in between lines 3 and 4
    forged = json.loads(lines[2])
    forged["run_id"] = forged["run_id"].replace("-eval-", "-forged-eval-")
    forged = seal_record(forged)
    _write(metrics, [*lines[:3], json.dumps(forged, separators=(",", ":")), *lines[3:]])
    drifts = _chain_drifts(metrics)
    assert forged["run_id"] in drifts  # links to line 2, follows line 3
    assert json.loads(lines[3])["run_id"] in drifts  # line 5 no longer follows the line before
    assert "does not follow line 4" in drifts[json.loads(lines[3])["run_id"]][0]


def test_a_reordered_pair_is_a_drift_on_both(scored: Path, tmp_path: Path) -> None:
    metrics, lines = _copy(scored, tmp_path)
    lines[3], lines[4] = lines[4], lines[3]
    _write(metrics, lines)
    drifts = _chain_drifts(metrics)
    # both moved lines, and the one after them (it no longer follows the line it named)
    assert set(drifts) == {json.loads(lines[i])["run_id"] for i in (3, 4, 5)}
    assert verify_journal(None, metrics).exit_code == 1


def test_cutting_the_head_is_named(scored: Path, tmp_path: Path) -> None:
    metrics, lines = _copy(scored, tmp_path)
    _write(metrics, lines[2:])
    drifts = _chain_drifts(metrics)
    assert list(drifts) == [json.loads(lines[2])["run_id"]]
    assert "deleted from the head" in drifts[json.loads(lines[2])["run_id"]][0]


def _unchained(line: str) -> str:
    rec = json.loads(line)
    bare = without_seal(rec)
    bare["provenance"] = {
        k: v for k, v in bare["provenance"].items() if k != "previous_line_sha256"
    }
    return json.dumps(seal_record(bare), separators=(",", ":"), ensure_ascii=False)


def test_a_journal_written_before_the_chain_still_verifies(scored: Path, tmp_path: Path) -> None:
    """Records without a link, and no record with one: unchained, a note, never a drift."""
    metrics, lines = _copy(scored, tmp_path)
    _write(metrics, [_unchained(x) for x in lines])
    chain = read(metrics / "eval.jsonl").chain
    assert chain.started is None and len(chain.unchained) == len(lines) and chain.intact
    found = verify_journal(None, metrics)
    assert found.exit_code == 0
    assert all(any("unchained" in n for n in e.result.notes) for e in found.entries if e.result)
    # appending to it starts the chain: the new record links to the last unchained line
    argv = ["score", "--all", "--journal", "--metrics-dir", str(metrics), "--rescore",
            "--timestamp", "2026-10-02T00:00:00.000Z", "--no-progress",
            "--out", str(tmp_path / "t.csv")]  # fmt: skip
    assert main(argv) == 0
    chain = read(metrics / "eval.jsonl").chain
    assert chain.started == len(lines) + 1 and chain.intact
    assert verify_journal(None, metrics).exit_code == 0


def test_an_unchained_record_after_the_chain_started_is_a_drift(
    scored: Path, tmp_path: Path
) -> None:
    metrics, lines = _copy(scored, tmp_path)
    lines[6] = _unchained(lines[6])
    _write(metrics, lines)
    drifts = _chain_drifts(metrics)
    assert "after the chain started at line 1" in drifts[json.loads(lines[6])["run_id"]][0]


def test_a_record_outside_a_journal_is_unchanged(scored: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 19's constraint: score --json --no-write prints the record as before (no link)."""
    sid = json.loads((scored / "eval.jsonl").read_text("utf-8").splitlines()[0])["session_id"]
    argv = ["score", "--metrics-dir", str(scored), "--session", sid, "--json", "--no-write",
            "--timestamp", TS]  # fmt: skip
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert list(record["provenance"]) == [
        "rubric_sha256",
        "engine_commit",
        "inputs_sha256",
        "record_sha256",
    ]
    assert record == seal_record(without_seal(record))
