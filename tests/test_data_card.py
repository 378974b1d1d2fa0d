"""The data card says what a page ran on, from the content, never from a marker.

"Synthetic preset" only when the ledger files are byte for byte the preset's; a real ledger is
named by its shown path, content sha256, sessions, dates and events by type; a journal without
a ledger says so instead of a session count of 0. No machine path is in the card.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.analyses import data_card
from evalkit.simulate import PRESET_RUBRIC_V2, build_preset
from evalkit.studies.lock import content_sha256
from tests.real_ledgers import journaled_real_ledger


@pytest.fixture(scope="module")
def preset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("card") / "metrics"
    build_preset(target, score=False)
    return target


def test_the_preset_is_named_only_when_its_bytes_are_the_presets(
    preset: Path, tmp_path: Path
) -> None:
    assert data_card.preset_of(preset) == PRESET_RUBRIC_V2
    card = data_card.ledger_card(preset, "")
    assert card.synthetic and "the **synthetic** preset" in card.markdown()
    # one byte changed in the ledger: not the preset any more, whatever the directory is called
    edited = tmp_path / PRESET_RUBRIC_V2
    shutil.copytree(preset, edited)
    sessions = edited / "sessions.jsonl"
    sessions.write_bytes(sessions.read_bytes() + b"\n")
    assert data_card.preset_of(edited) is None
    assert "synthetic" not in data_card.ledger_card(edited, str(edited)).markdown()


def test_the_april_ledger_card_names_its_content_and_events(tmp_path: Path) -> None:
    metrics = journaled_real_ledger("ledger-2026-04-13", tmp_path / "april" / "metrics")
    card = data_card.ledger_card(metrics, str(metrics), scored=("rubric-v1", "rubric-v2"))
    text = card.markdown()
    assert card.sha256 == content_sha256(metrics)["sha256"]
    assert card.sha256 is not None and card.sha256 in text
    assert "the metrics directory …/april/metrics (not a preset)" in text
    assert "10, from 2026-04-07 to 2026-04-13 (UTC)" in text
    assert "10 records over 10 sessions; rubric versions: `rubric-v2` 10" in text
    assert r"47 events, all subagent\_stop (no quality_gate event: no gate telemetry" in text
    facts = card.to_dict()
    assert facts["ledger"]["events_by_type"] == {"subagent_stop": 47}
    assert facts["ledger"]["has_gate_telemetry"] is False
    assert str(tmp_path) not in str(facts) and str(tmp_path) not in text


def test_a_journal_without_a_ledger_says_so_instead_of_zero_sessions(tmp_path: Path) -> None:
    metrics = journaled_real_ledger("ledger-2026-04-13", tmp_path / "full")
    alone = tmp_path / "journal-only"
    alone.mkdir()
    shutil.copyfile(metrics / "eval.jsonl", alone / "eval.jsonl")
    card = data_card.ledger_card(alone, str(alone))
    text = card.markdown()
    assert "no `sessions.jsonl` beside the journal" in text
    assert "Sessions (canonical reading" not in text and "events.jsonl` holds" not in text
    assert "10 records over 10 sessions" in text
    assert card.to_dict()["ledger"] is None
