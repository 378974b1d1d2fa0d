"""Issue 10, findings 1, 2, 3, 4 (calibrate side) and 16, through the command line.

Each test runs the ``evalkit`` command line of a package copied into a temporary repository
layout (``repo_layout``), so ``--register`` writes into that copy's ``calibrations/`` and never
into the repository's. The attacks are written with the command line as it was before the
certificates (a registry line, ``--register`` of a relabelled copy, a journal line read in two
processes), so each test fails on the code that had the hole.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared
from record_factory import JUDGE_DIM, TIMESTAMP
from repo_layout import SET, clean_env, make_repo, relabelled_copy_outside, run_evalkit

import evalkit
from evalkit.cli.main import main
from evalkit.record.seal import seal_record

V2 = f"gold/{SET}/v2"


@pytest.fixture(scope="module")
def package_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("pkg") / "repo", package=True)


@pytest.fixture
def repo(package_repo: Path, tmp_path: Path) -> Path:
    """A private copy of the repository layout with the evalkit package, free to change."""
    dest = tmp_path / "repo"
    shutil.copytree(package_repo, dest)
    return dest


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    source = require_shared("conformance", "public", "random-20260919-002")
    return Path(shutil.copytree(source, tmp_path / "metrics"))


def _scored_with_judge(metrics: Path, status: str, ref: str | None) -> dict[str, Any]:
    """A record scored from ``metrics`` plus a judge dimension claiming ``status``/``ref``."""
    rec = evalkit.score_session(
        metrics, rubric="rubric-v2", timestamp=TIMESTAMP, model_id="m", model_source="config"
    ).to_dict()
    rec["dimensions"].append({**JUDGE_DIM, "calibration_status": status, "calibration_ref": ref})
    return seal_record(rec)  # as the journal's writer seals a record with a judge merged in


def _write_journal(path: Path, *records: dict[str, Any]) -> Path:
    """Journal lines written as they are (no validation): what a file on disk can hold."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _journal_count(repo: Path, journal: Path, env: dict[str, str] | None = None) -> int:
    out = run_evalkit(repo, "journal", "--journal", str(journal), "--json", env=env)
    assert out.returncode == 0, out.stderr
    return int(json.loads(out.stdout)["records"])


def _certificates(repo: Path) -> list[Path]:
    folder = repo / "calibrations"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


# --------------------------------------------------------------------------- positive path


@pytest.mark.slow
def test_register_then_journal_verify_and_report_show_the_judge_calibrated(
    repo: Path, metrics: Path, tmp_path: Path
) -> None:
    out = run_evalkit(repo, "calibrate", "--rule-judge", "--gold", V2, "--register",
                      "--n-resamples", "200", "--out", str(tmp_path / "r.json"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    [cert] = _certificates(repo)
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    ref, status = result["calibration_ref"], result["calibration_status"]
    assert cert.name == f"{ref}.json" and status == f"calibrated:{SET}-v2:{ref[:8]}"
    assert f"registered calibrations/{ref}.json (verified)" in out.stderr

    # the record gets its judge dimension from the judge that earned the calibration
    journal = tmp_path / "eval.jsonl"
    scored = run_evalkit(repo, "score", "--metrics-dir", str(metrics), "--journal", str(journal),
                         "--judge", "rules", "--json")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    rec = json.loads(scored.stdout)
    [judged] = [d for d in rec["dimensions"] if d["method"] == "judge"]
    assert (judged["calibration_status"], judged["calibration_ref"]) == (status, ref)
    assert _journal_count(repo, journal) == 1
    run_id = rec["run_id"]
    verify = run_evalkit(repo, "verify", run_id, "--metrics-dir", str(metrics),
                         "--journal", str(journal))  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "re-derived from their run log" in verify.stdout
    assert f"instruction-adherence: {status}: certificate calibrations/{ref}.json" in verify.stdout
    page = tmp_path / "page.html"
    report = run_evalkit(repo, "report", run_id, "--journal", str(journal), "--out", str(page))
    assert report.returncode == 0, report.stderr
    html = page.read_text(encoding="utf-8")
    assert f"{status}<br>" in html and f"calibrations/{ref}.json" in html

    # one edited byte of the certificate: refused everywhere, and said why
    data = bytearray(cert.read_bytes())
    data[data.index(b'"graduates": true') + 13] ^= 0x20  # true -> True
    cert.write_bytes(bytes(data))
    assert _journal_count(repo, journal) == 0
    verify = run_evalkit(repo, "verify", run_id, "--metrics-dir", str(metrics),
                         "--journal", str(journal))  # fmt: skip
    assert verify.returncode == 1 and "is not a valid record" in verify.stderr
    assert "refused: its name is not the sha256 of its bytes" in verify.stderr
    assert run_evalkit(repo, "report", run_id, "--journal", str(journal)).returncode == 1
    cert.unlink()  # deleted: refused too
    assert _journal_count(repo, journal) == 0
    assert run_evalkit(repo, "report", run_id, "--journal", str(journal)).returncode == 1


# --------------------------------------------------------------------------- finding 1


@pytest.mark.slow
def test_a_hand_written_registry_line_is_never_a_calibration(
    repo: Path, metrics: Path, tmp_path: Path
) -> None:
    ref = "c0ffee" + "0" * 58
    status = f"calibrated:{SET}-v2:{ref[:8]}"
    line = {"dimension_id": "instruction-adherence", "calibration_status": status,
            "calibration_ref": ref, "gold_set": f"{SET}-v2", "graduated": True}  # fmt: skip
    (repo / "calibrations").mkdir()
    (repo / "calibrations" / "registry.jsonl").write_text(json.dumps(line) + "\n", "utf-8")
    registry = tmp_path / "registry.jsonl"
    registry.write_text(json.dumps(line) + "\n", encoding="utf-8")
    rec = _scored_with_judge(metrics, status, ref)
    journal = _write_journal(tmp_path / "eval.jsonl", rec)
    for env in (clean_env(), clean_env(EVALKIT_CALIBRATION_REGISTRY=str(registry))):
        assert _journal_count(repo, journal, env) == 0
        verify = run_evalkit(repo, "verify", rec["run_id"], "--metrics-dir", str(metrics),
                             "--journal", str(journal), env=env)  # fmt: skip
        assert verify.returncode == 1 and "is not a valid record" in verify.stderr
        assert "not an accepted calibration status" in verify.stderr
        report = run_evalkit(repo, "report", rec["run_id"], "--journal", str(journal), env=env)
        assert report.returncode == 1


# --------------------------------------------------------------------------- finding 2


@pytest.mark.slow
def test_a_relabelled_gold_copy_outside_the_repository_never_registers(
    repo: Path, tmp_path: Path
) -> None:
    copy = relabelled_copy_outside(repo, tmp_path)
    out = run_evalkit(repo, "calibrate", "--rule-judge", "--gold", str(copy), "--register",
                      "--n-resamples", "200", "--out", str(tmp_path / "r.json"))  # fmt: skip
    assert out.returncode == 1
    assert "cannot be registered: the gold set lies outside the repository" in out.stderr
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))  # computed, shown
    assert result["graduates"] is True and result["kappa"]["statistic"] == pytest.approx(1.0)
    assert result["mintable"] is False and "outside the repository" in result["mintable_reason"]
    assert result["calibration_status"] == "uncalibrated"
    assert not (repo / "calibrations").exists()


# --------------------------------------------------------------------------- finding 3

_READ = """
import json, sys
from evalkit.cli.main import main
sys.exit(main(["journal", "--journal", sys.argv[1], "--json"]))
"""


def _count_in_a_fresh_process(journal: Path, env: dict[str, str]) -> int:
    code = [sys.executable, "-c", _READ, str(journal)]
    env = {**env, "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run(code, capture_output=True, text=True, env=env, check=True, timeout=300)
    return int(json.loads(out.stdout)["records"])


@pytest.mark.slow
def test_a_journal_line_is_equally_valid_in_every_process(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A graduating calibrate() in this process, or a registry variable in another, once
    made the same line valid in one process and invalid in the next."""
    from evalkit.calibration import calibrate
    from evalkit.gold.sets import load

    gold = load(REPO_ROOT / V2)
    res = calibrate(gold.items[["item_id", "label"]], gold, n_resamples=200)
    assert res.graduates and res.calibration_ref  # the repository's gold and lock: mintable
    rec = _scored_with_judge(metrics, res.calibration_status, res.calibration_ref)
    journal = _write_journal(tmp_path / "eval.jsonl", rec)
    capsys.readouterr()
    assert main(["journal", "--journal", str(journal), "--json"]) == 0
    here = json.loads(capsys.readouterr().out)["records"]
    registry = tmp_path / "registry.jsonl"
    registry.write_text(json.dumps({"dimension_id": "instruction-adherence", "graduated": True,
                                    "calibration_status": res.calibration_status,
                                    "calibration_ref": res.calibration_ref}) + "\n")  # fmt: skip
    fresh = _count_in_a_fresh_process(journal, clean_env())
    with_variable = _count_in_a_fresh_process(
        journal, clean_env(EVALKIT_CALIBRATION_REGISTRY=str(registry))
    )
    assert here == fresh == with_variable == 0  # never registered: invalid everywhere


# --------------------------------------------------------------------------- finding 4


@pytest.mark.slow
def test_calibrate_refuses_without_a_lock_unless_no_lock_and_never_registers_then(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "preregistration.lock.json").unlink()
    args = ("calibrate", "--rule-judge", "--gold", V2, "--n-resamples", "200")
    out = run_evalkit(repo, *args, "--out", str(tmp_path / "r.json"))
    assert out.returncode == 1 and "no pre-registration lock" in out.stderr
    assert "--no-lock" in out.stderr and not (tmp_path / "r.json").exists()
    out = run_evalkit(repo, *args, "--no-lock", "--out", str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert result["preregistration"] == "none (--no-lock)" and result["mintable"] is False
    assert "preregistration none (--no-lock)" in out.stderr
    out = run_evalkit(repo, *args, "--no-lock", "--register", "--out", str(tmp_path / "r2.json"))
    assert out.returncode == 1
    assert "did not graduate (not pre-registered: run with --no-lock" in out.stderr
    assert _certificates(repo) == []


# --------------------------------------------------------------------------- finding 16


def test_the_summary_says_which_interval_is_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["calibrate", "--rule-judge", "--gold", str(REPO_ROOT / V2), "--n-resamples", "200",
            "--out", str(tmp_path / "r.json")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    shown, decision = result["kappa"], result["graduation"]["kappa"]
    assert (
        f"kappa {shown['statistic']:.3f} [{shown['ci']['low']:.3f}, {shown['ci']['high']:.3f}] "
        "(95% BCa, 200 resamples, seed 0); graduation judged on the pre-registered interval "
        f"(95% BCa, 2000 resamples, seed 0): lower bound {decision['ci']['low']:.3f}" in err
    )
    assert "graduates: pre-registered kappa CI lower bound" in err
    assert (
        f"status uncalibrated until registered (--register mints {result['calibration_status']})"
        in err
    )
    assert f"lower bound {shown['ci']['low']:.3f} >=" not in err  # the shown one decides nothing
    assert main([*argv[:-4], "--out", str(tmp_path / "r2.json")]) == 0
    err = capsys.readouterr().err
    assert "(95% BCa, 2000 resamples, seed 0: the pre-registered interval)" in err
