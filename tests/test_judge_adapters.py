"""Judge adapters, judge_record, merge_judge, and the facts/judge command line."""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pytest
from conftest import require_shared

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal
from evalkit.judge import (
    CallableJudge,
    Judge,
    ReplayJudge,
    RulesJudge,
    apply_rules,
    build_prompt,
    judge_record,
    merge_judge,
)
from evalkit.judge.facts import compute_facts
from evalkit.rubrics import evidence as ev

RUN_A = "s-a-eval-20261001T000000000Z"
RUN_B = "s-b-eval-20261001T000000000Z"


def make_record(run_id: str, ve_evidence: str, rubric_version: str = "rubric-v2") -> dict:
    return {
        "schema_version": 1,
        "record_kind": "session-eval",
        "run_id": run_id,
        "session_id": run_id.split("-eval-")[0],
        "standard_version": "aiat-llm-eval/1.0",
        "rubric_version": rubric_version,
        "provenance": {"rubric_sha256": "ab" * 32, "engine_commit": None},
        "model": {"id": "test-model", "source": "config"},
        "harness": {"plugin_version": "1", "platform": "test", "host_class": None,
                    "hostname_hash": None},
        "kpis": {"duration_seconds": 60, "total_waves": 1, "total_agents": 1,
                 "token_input": None, "token_output": None, "carryover": None},
        "dimensions": [
            {"id": "verification-evidence", "method": "deterministic",
             "status": "cannot-determine", "evidence": ve_evidence},
            {"id": "process-safety", "method": "deterministic", "status": "pass",
             "evidence": ev.process_safety_clean(0)},
        ],
        "handle": None,
        "anonymized": True,
        "timestamp": "2026-10-01T00:00:00.000Z",
    }  # fmt: skip


@pytest.fixture
def record_a() -> dict:
    return make_record(RUN_A, ev.verification_unavailable(4))  # files changed, no gate: fail


@pytest.fixture
def record_b() -> dict:
    return make_record(RUN_B, ev.verification_gates_green(2))  # clean: pass


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the judge layer opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_rules_judge_through_judge_record_matches_apply_rules(
    record_a: dict, record_b: dict
) -> None:
    for record, expected in ((record_a, "fail"), (record_b, "pass")):
        (dim,) = judge_record(record, RulesJudge())
        verdict = apply_rules(compute_facts(record["dimensions"]))
        assert dim["status"] == str(verdict.status) == expected
        assert dim["evidence"].startswith(f"rule {verdict.rule}: ")
        assert (dim["advisory"], dim["calibration_status"]) == (True, "uncalibrated")


def test_callable_judge_sees_the_prompt_and_is_hard_stamped(record_b: dict) -> None:
    seen: list[str] = []

    def model(prompt: str) -> str:
        seen.append(prompt)
        body = [{"id": "instruction-adherence", "status": "fail", "evidence": "x",
                 "advisory": False, "calibration_status": "calibrated"}]  # fmt: skip
        return "```json\n" + json.dumps(body) + "\n```"

    judge = CallableJudge(model)
    assert isinstance(judge, Judge)
    (dim,) = judge_record(record_b, judge, nonce="a" * 32)
    assert seen == [build_prompt(record_b, None, "a" * 32)]
    assert dim["status"] == "fail" and dim["advisory"] is True
    assert dim["calibration_status"] == "uncalibrated"


def test_callable_judge_must_return_text(record_b: dict) -> None:
    with pytest.raises(TypeError):
        CallableJudge("not callable")  # type: ignore[arg-type]
    with pytest.raises(EvalkitError, match="not str"):
        judge_record(record_b, CallableJudge(lambda prompt: 42))  # type: ignore[arg-type,return-value]


def write_labels(path: Path, rows: list[tuple[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "label"])
        writer.writerows(rows)
    return path


def test_replay_judge(tmp_path: Path, record_a: dict, record_b: dict) -> None:
    labels = write_labels(tmp_path / "labels.csv", [(RUN_A, "cannot-determine")])
    judge = ReplayJudge(labels)
    (dim,) = judge_record(record_a, judge)
    assert dim["status"] == "cannot-determine"
    assert "labels.csv" in dim["evidence"]
    assert judge_record(record_b, judge) == []  # no label: no dimension, never a guess


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("x", "excellent")], "line 2: field label"),
        ([("", "pass")], "line 2: field item_id"),
        ([("x", "pass"), ("x", "fail")], "line 3: item_id 'x' has two different labels"),
    ],
)
def test_replay_judge_rejects_bad_label_files(tmp_path: Path, rows: list, message: str) -> None:
    path = write_labels(tmp_path / "labels.csv", rows)
    with pytest.raises(EvalkitError, match=message):
        ReplayJudge(path)


def test_replay_judge_names_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("run,verdict\nx,pass\n", encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"labels\.csv: line 1: missing column"):
        ReplayJudge(path)


def judge_dim(dim_id: str, status: str = "pass") -> dict:
    return {"id": dim_id, "status": status, "evidence": "e", "score": None}


def test_merge_judge_v2_takes_only_instruction_adherence(record_b: dict) -> None:
    before = json.dumps(record_b)
    merged = merge_judge(
        record_b,
        [judge_dim("report-quality"), judge_dim("instruction-adherence"),
         judge_dim("verification-evidence", "fail")],
    )  # fmt: skip
    assert json.dumps(record_b) == before  # input untouched
    assert merged["dimensions"][:2] == record_b["dimensions"]  # deterministic dims untouched
    assert [d["id"] for d in merged["dimensions"][2:]] == ["instruction-adherence"]
    assert merged["dimensions"][2]["advisory"] is True
    assert merged["dimensions"][2]["method"] == "judge"


def test_merge_judge_v1_takes_both_v1_judge_dimensions() -> None:
    record = make_record(RUN_A, ev.verification_gates_green(1), "rubric-v1")
    merged = merge_judge(record, [judge_dim("report-quality"), judge_dim("instruction-adherence")])
    assert [d["id"] for d in merged["dimensions"][2:]] == [
        "report-quality",
        "instruction-adherence",
    ]


def test_merge_judge_never_adds_an_id_twice(record_b: dict) -> None:
    once = merge_judge(record_b, [judge_dim("instruction-adherence", "pass")])
    twice = merge_judge(once, [judge_dim("instruction-adherence", "fail")])
    assert [d["status"] for d in twice["dimensions"] if d["id"] == "instruction-adherence"] == [
        "pass"
    ]


def test_merged_record_still_validates(record_b: dict) -> None:
    from evalkit.record.contract import validate_record

    merged = merge_judge(record_b, judge_record(record_b, RulesJudge()))
    assert validate_record(merged)["dimensions"][-1]["id"] == "instruction-adherence"


# --- command line -------------------------------------------------------------------------------


@pytest.fixture
def journal_file(tmp_path: Path, record_a: dict, record_b: dict) -> Path:
    path = tmp_path / "eval.jsonl"
    journal.append(path, record_a)
    journal.append(path, record_b)
    return path


def test_cli_facts_by_run_id(journal_file: Path, record_a: dict, capsys) -> None:
    assert main(["facts", RUN_A, "--journal", str(journal_file)]) == 0
    assert json.loads(capsys.readouterr().out) == compute_facts(record_a["dimensions"])


def test_cli_facts_by_metrics_dir(journal_file: Path, record_b: dict, capsys) -> None:
    assert main(["facts", RUN_B, "--metrics-dir", str(journal_file.parent), "--compact"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == compute_facts(record_b["dimensions"])


def test_cli_facts_from_a_record_file(tmp_path: Path, record_a: dict, capsys) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record_a), encoding="utf-8")
    assert main(["facts", "--record", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == compute_facts(record_a["dimensions"])


def test_cli_facts_user_errors(journal_file: Path, tmp_path: Path, capsys) -> None:
    assert main(["facts", "nope", "--journal", str(journal_file)]) == 1
    assert "no valid record with run id 'nope'" in capsys.readouterr().err
    assert main(["facts", "x", "--journal", str(tmp_path / "missing.jsonl")]) == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["facts", "--record", str(bad)]) == 1
    assert "bad.json: line 1" in capsys.readouterr().err


def test_cli_judge_rules_writes_long_format_labels(journal_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    assert main(["judge", "--rules", "--journal", str(journal_file), "--out", str(out)]) == 0
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [
        {"item_id": RUN_A, "rater": "rule-judge", "label": "fail", "rule": "6"},
        {"item_id": RUN_B, "rater": "rule-judge", "label": "pass", "rule": "6"},
    ]


def test_cli_judge_requires_rules(journal_file: Path, capsys) -> None:
    assert main(["judge", "--journal", str(journal_file)]) == 1
    assert "--rules" in capsys.readouterr().err


def test_cli_judge_labels_the_conformance_records(tmp_path: Path, capsys) -> None:
    """Every expected-v2 record of the public corpus, written to a journal, gets one label."""
    cases = sorted(require_shared("conformance", "public").glob("*/expected-v2.json"))
    path = tmp_path / "eval.jsonl"
    expected = []
    for index, case in enumerate(cases):
        rec = json.loads(case.read_text(encoding="utf-8"))["record"]
        if rec is None:
            continue
        run_id = f"case{index}-eval-20261001T000000000Z"
        record = make_record(run_id, "") | {"dimensions": rec["dimensions"], "kpis": rec["kpis"]}
        journal.append(path, record)
        verdict = apply_rules(compute_facts(rec["dimensions"]))
        expected.append([run_id, "rule-judge", str(verdict.status), str(verdict.rule)])
    assert main(["judge", "--rules", "--journal", str(path)]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0] == ["item_id", "rater", "label", "rule"]
    assert rows[1:] == expected


def test_replay_judge_missing_or_directory_file_is_an_evalkit_error_naming_it(
    tmp_path: Path,
) -> None:
    """QA: ReplayJudge('/missing.csv') raised a raw FileNotFoundError."""
    missing = tmp_path / "missing.csv"
    with pytest.raises(EvalkitError, match=r"replay labels file '.*missing\.csv': no such file"):
        ReplayJudge(missing)
    with pytest.raises(FileNotFoundError):
        ReplayJudge(missing)
    with pytest.raises(EvalkitError, match=r"is a directory"):
        ReplayJudge(tmp_path)
    with pytest.raises(IsADirectoryError):
        ReplayJudge(tmp_path)


@pytest.mark.parametrize("wrap", [CallableJudge, lambda fn: fn], ids=["CallableJudge", "bare"])
def test_a_judge_that_raises_is_wrapped_naming_it_and_adds_no_dimension(
    record_b: dict, wrap
) -> None:
    """QA: a RuntimeError from the judge callable escaped judge_record unwrapped."""
    from evalkit.judge import JudgeDispatchError

    calls = []

    def flaky_model(prompt: str) -> str:
        calls.append(prompt)
        raise RuntimeError("connection reset by the model server")

    with pytest.raises(JudgeDispatchError) as info:
        judge_record(record_b, wrap(flaky_model))
    exc = info.value
    assert isinstance(exc, EvalkitError)
    assert "flaky_model" in exc.judge and exc.run_id == RUN_B
    assert str(exc).startswith(f"judge {exc.judge} failed on record {RUN_B!r}: RuntimeError: ")
    assert str(exc).endswith("no judge dimension was added")
    assert isinstance(exc.__cause__, RuntimeError)
    assert len(calls) == 1  # dispatched once, not retried
    assert [d["method"] for d in record_b["dimensions"]] == ["deterministic"] * 2


def test_cli_judge_rules_on_a_journal_without_a_valid_record_exits_1(
    tmp_path: Path, capsys
) -> None:
    """QA: exit 0 with only a CSV header when no line of the journal was a valid record."""
    path = tmp_path / "eval.jsonl"
    path.write_text('{"run_id": "x"}\nnot json\n', encoding="utf-8")
    out = tmp_path / "labels.csv"
    assert main(["judge", "--rules", "--journal", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: no valid record to label (2 line(s) skipped, listed above); nothing " in err
    assert "line 1: invalid" in err and "line 2: malformed" in err
    assert not out.exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["judge", "--rules", "--journal", str(empty)]) == 1
    cap = capsys.readouterr()
    assert cap.out == "" and "(0 line(s) skipped, the journal is empty)" in cap.err
