"""The record's seal (provenance.record_sha256) and the scored inputs' hash (inputs_sha256).

Issue 10, finding 5 finished: a run input (model, handle, harness) changed after the record was
written is caught, because the engine seals every record it writes; the seal is recomputable
offline from the documented canonical form (checked here with an independent recipe), and a
record changed after it was written is refused by validation, with that reason.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared
from record_factory import TIMESTAMP, make_record

import evalkit
from evalkit.errors import ValidationError
from evalkit.journal import reader as journal
from evalkit.journal.reader import DiagnosticKind
from evalkit.record.contract import project_submission, validate_record
from evalkit.record.seal import SealMismatchError, record_sha256, seal_record, without_seal


def _offline_seal(rec: dict[str, Any]) -> str:
    """The recipe of evalkit.record.seal's docstring, written out independently."""
    body = copy.deepcopy(rec)
    del body["provenance"]["record_sha256"]
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), target)
    return target


def test_the_engine_seals_last_over_everything_else(metrics: Path) -> None:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP, handle="ada").to_dict()
    assert list(rec["provenance"]) == [
        "rubric_sha256",
        "engine_commit",
        "inputs_sha256",
        "record_sha256",
    ]
    assert rec["provenance"]["record_sha256"] == _offline_seal(rec) == record_sha256(rec)
    assert validate_record(rec) == rec


def test_a_sealed_record_changed_afterwards_is_refused_with_that_reason() -> None:
    rec = seal_record(make_record())
    validate_record(rec)
    for change in (
        lambda r: r["model"].update(id="another-model"),
        lambda r: r.update(handle="someone", anonymized=False),
        lambda r: r["harness"].update(platform="win32"),
        lambda r: r["provenance"].update(inputs_sha256="a" * 64),
        lambda r: r.pop("schema_version"),  # a defaulted key: still part of what was sealed
    ):
        changed = copy.deepcopy(rec)
        change(changed)
        with pytest.raises(SealMismatchError, match=r"^provenance\.record_sha256: the record was "):
            validate_record(changed)


@pytest.mark.parametrize("seal", ["", "ABC", "a" * 63, 42, None])
def test_a_seal_that_is_no_sha256_is_refused(seal: Any) -> None:
    rec = make_record()
    rec["provenance"]["record_sha256"] = seal
    with pytest.raises(ValidationError, match=r"^provenance\.record_sha256: must be the 64"):
        validate_record(rec)


def test_records_without_a_seal_stay_valid() -> None:
    rec = make_record()  # as the reference engine writes them: no seal, no inputs hash
    assert "record_sha256" not in validate_record(rec)["provenance"]


@pytest.mark.parametrize("inputs", ["", "xyz", "A" * 64, 1, None])
def test_an_inputs_hash_that_is_no_sha256_is_refused(inputs: Any) -> None:
    rec = make_record()
    rec["provenance"]["inputs_sha256"] = inputs
    with pytest.raises(ValidationError, match=r"^provenance\.inputs_sha256: must be"):
        validate_record(rec)


def test_lone_surrogates_are_sealed_as_escapes() -> None:
    rec = make_record(session_id="s\ud800x")
    sealed = seal_record(rec)
    body = without_seal(sealed)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    escaped = text.replace("\ud800", "\\ud800")  # what evalkit.files.input.dumps writes
    assert sealed["provenance"]["record_sha256"] == hashlib.sha256(escaped.encode()).hexdigest()
    validate_record(sealed)


def test_a_non_finite_number_cannot_be_sealed() -> None:
    rec = make_record()
    rec["kpis"]["token_input"] = float("inf")
    assert record_sha256(rec) is None
    assert "record_sha256" not in seal_record(rec)["provenance"]


def test_the_projection_keeps_the_inputs_hash_and_drops_the_seal(metrics: Path) -> None:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    out = project_submission(rec)
    assert out["provenance"] == {
        "rubric_sha256": rec["provenance"]["rubric_sha256"],
        "engine_commit": rec["provenance"]["engine_commit"],
        "inputs_sha256": rec["provenance"]["inputs_sha256"],
    }


def test_a_journal_line_edited_after_it_was_written_is_read_as_changed(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    stored = journal.append(path, make_record())
    edited = copy.deepcopy(stored)
    edited["model"]["id"] = "another-model"
    path.write_text(json.dumps(edited) + "\n", encoding="utf-8")
    got = journal.read(path)
    assert got.records == []
    [diag] = got.diagnostics
    assert diag.kind is DiagnosticKind.CHANGED and diag.run_id == stored["run_id"]
    assert "changed after it was written" in diag.reason


def test_append_seals_what_it_writes_whatever_seal_it_was_given(tmp_path: Path) -> None:
    """A record changed before it is appended (a judge merged in) is sealed as written."""
    rec = seal_record(make_record(judge=False))
    rec["dimensions"].append(make_record()["dimensions"][-1])  # the judge dimension
    out = journal.append(tmp_path / "eval.jsonl", rec)
    assert out["provenance"]["record_sha256"] == _offline_seal(out)
    assert journal.read(tmp_path / "eval.jsonl").records == [out]


def test_inputs_hash_equal_iff_the_scored_inputs_are(metrics: Path) -> None:
    one = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    other_run = evalkit.score_session(
        metrics, timestamp="2026-10-02T00:00:00.000Z", model_id="m", handle="h"
    ).to_dict()
    # run inputs (timestamp, model, handle) are not scored inputs
    assert one["provenance"]["inputs_sha256"] == other_run["provenance"]["inputs_sha256"]
    v1 = evalkit.score_session(metrics, rubric="rubric-v1", timestamp=TIMESTAMP).to_dict()
    assert v1["provenance"]["inputs_sha256"] != one["provenance"]["inputs_sha256"]  # v1 reads less
    lines = (metrics / "sessions.jsonl").read_text("utf-8").splitlines()
    record = [json.loads(x) for x in lines if one["session_id"] in x][-1]
    with (metrics / "sessions.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({**record, "total_agents": 41}) + "\n")  # the session rewritten
    again = evalkit.score_session(metrics, one["session_id"], timestamp=TIMESTAMP).to_dict()
    assert again["provenance"]["inputs_sha256"] != one["provenance"]["inputs_sha256"]
