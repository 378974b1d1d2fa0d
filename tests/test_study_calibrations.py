"""The replay and threshold studies count a record whose minted calibration a certificate backs.

...and only then: a claim that a hand-written registry line backs (issue 10, finding 1) stays a
skipped line, whatever the registry file or variable says.

Before, both read journals with ``journal.read(path)``, whose default accepts ``uncalibrated``
judges only: a record carrying a minted ``calibrated:...`` status was skipped as invalid even
when the repository held the verified certificate behind it. They now accept what the
repository's certificates back (as the command line does), or what the caller passes. The
certificate is minted into a temporary copy of the repository layout
(``repo_layout.make_repo``, as ``test_calibration_certificates.py`` does); the repository's own
``calibrations/`` is never written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from record_factory import SESSION_ID, judge_block, make_record
from repo_layout import SET, make_repo, mint_rule_judge

from evalkit.analyses import replay, threshold
from evalkit.calibration import RepositoryCalibrations
from evalkit.files.append import append_lines, encode_line
from evalkit.journal import reader as journal
from evalkit.provenance import repository as repo_module
from evalkit.record.calibration_status import AcceptedCalibrations
from evalkit.record.seal import seal_record

pytestmark = pytest.mark.usefixtures("no_lock_or_registry_env")


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A repository copy with one registered certificate, and a metrics directory whose
    journal holds one record claiming it."""
    repo = make_repo(tmp_path_factory.mktemp("repo"))
    _, cert = mint_rule_judge(repo, n_resamples=300)
    record = make_record()
    judged = record["dimensions"][-1]
    assert judged["id"] == cert.entry[0] and judged["method"] == "judge"
    judged.update(calibration_status=cert.calibration_status, calibration_ref=cert.calibration_ref)
    judged["judge"] = judge_block()  # the identity that earned it: the rule judge's
    metrics = tmp_path_factory.mktemp("metrics")
    journal.append(metrics / journal.JOURNAL_NAME, record, accepted=RepositoryCalibrations(repo))
    return {"repo": repo, "metrics": metrics, "cert": cert}


NOT_SCORED = pd.DataFrame(columns=["rubric", "session_id", "dimension", "status"])


def _replay_sessions(metrics: Path, **kwargs: Any) -> set[str]:
    drift = replay.journal_vs_replay(metrics, NOT_SCORED, **kwargs)
    assert drift is not None
    return set(drift["session_id"])


def test_the_replay_study_counts_a_record_with_a_backed_minted_status(
    minted: dict[str, Any],
) -> None:
    metrics, repo = minted["metrics"], minted["repo"]
    # the stored record is compared with today's replay (which did not score it): it counts
    assert _replay_sessions(metrics, accepted=RepositoryCalibrations(repo)) == {SESSION_ID}
    # uncalibrated-only (the old default): the same record is skipped as invalid
    assert _replay_sessions(metrics, accepted=AcceptedCalibrations()) == set()


def test_the_threshold_study_counts_a_record_with_a_backed_minted_status(
    minted: dict[str, Any],
) -> None:
    metrics, repo = minted["metrics"], minted["repo"]
    table = threshold.fact_table(metrics, accepted=RepositoryCalibrations(repo))
    assert list(table["session_id"]) == [SESSION_ID] and table.attrs["diagnostics"] == []
    skipped = threshold.fact_table(metrics, accepted=AcceptedCalibrations())
    assert len(skipped) == 0
    assert "calibration_status" in skipped.attrs["diagnostics"][0]


def test_by_default_the_studies_accept_what_the_repository_certificates_back(
    minted: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing passed: the certificates of the repository evalkit runs from count (here the
    minted copy stands in for it; its certificate is re-checked from content)."""
    metrics = minted["metrics"]
    monkeypatch.setattr(repo_module, "REPO_ROOT", minted["repo"])
    assert list(threshold.fact_table(metrics)["session_id"]) == [SESSION_ID]
    assert _replay_sessions(metrics) == {SESSION_ID}


FORGED_SESSION = "main-2026-09-20-session-7"


@pytest.fixture
def forged(
    minted: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_lock_or_registry_env: None,
) -> dict[str, Any]:
    """Copies of the minted repository and metrics directory, plus a forgery: a hand-written
    registry line (in ``calibrations/registry.jsonl`` and in the file
    ``$EVALKIT_CALIBRATION_REGISTRY`` names) for a status no certificate backs, and a journal
    line, appended by hand and sealed, of another session's record claiming it."""
    repo = shutil.copytree(minted["repo"], tmp_path / "repo")
    metrics = shutil.copytree(minted["metrics"], tmp_path / "metrics")
    ref = hashlib.sha256(b"forged").hexdigest()
    status = f"calibrated:{SET}-v2:{ref[:8]}"
    line = {"dimension_id": minted["cert"].entry[0], "calibration_status": status,
            "calibration_ref": ref, "graduated": True}  # fmt: skip
    text = json.dumps(line) + "\n"
    (repo / "calibrations" / "registry.jsonl").write_text(text, encoding="utf-8")
    (tmp_path / "registry.jsonl").write_text(text, encoding="utf-8")
    monkeypatch.setenv("EVALKIT_CALIBRATION_REGISTRY", str(tmp_path / "registry.jsonl"))
    record = make_record(session_id=FORGED_SESSION)
    record["dimensions"][-1].update(calibration_status=status, calibration_ref=ref)
    record["dimensions"][-1]["judge"] = judge_block()
    # no evalkit command writes this line (validation refuses the claim): a forger appends it
    append_lines(metrics / journal.JOURNAL_NAME, [encode_line(seal_record(record))], "journal")
    return {"repo": repo, "metrics": metrics, "entry": (line["dimension_id"], status, ref)}


def test_the_studies_skip_a_claim_only_a_hand_written_registry_line_backs(
    forged: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics, repo = forged["metrics"], forged["repo"]
    table = threshold.fact_table(metrics, accepted=RepositoryCalibrations(repo))
    assert list(table["session_id"]) == [SESSION_ID]
    [skipped] = table.attrs["diagnostics"]
    assert skipped.startswith("line 2:") and "calibration_status" in skipped
    assert _replay_sessions(metrics, accepted=RepositoryCalibrations(repo)) == {SESSION_ID}
    # by default (the repository evalkit runs from is the forged copy): skipped all the same
    monkeypatch.setattr(repo_module, "REPO_ROOT", repo)
    assert list(threshold.fact_table(metrics)["session_id"]) == [SESSION_ID]
    assert _replay_sessions(metrics) == {SESSION_ID}
    # the claim is the only thing wrong with the line: accepted as content, it would count
    from evalkit.record.judging import identity_sha256, judge_identity

    earned = {forged["entry"][2]: identity_sha256(judge_identity(judge_block()))}
    trusting = AcceptedCalibrations(entries=frozenset({forged["entry"]}), identities=earned)
    assert set(threshold.fact_table(metrics, accepted=trusting)["session_id"]) == {FORGED_SESSION}
