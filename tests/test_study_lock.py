"""The lock binds studies (finding 4 of issue 10, the study side).

``evalkit study run`` never checked the pre-registration lock: a changed locked default or a
``-p`` override of a locked parameter ran silently, and deleting the lock and running
``preregister`` again laundered any change. Now the run is checked before any kernel starts:
a changed design parameter needs ``--deviation "why"`` (shown on the page), no lock needs
``--no-lock`` (shown on the page), a changed frozen input or a rewritten lock refuses.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.gold.sets import set_sha256, sha256_hex
from evalkit.prereg.lock import LOCK_ENV, write_lock
from evalkit.prereg.study_params import notebook_parameters
from evalkit.studies import run as studies
from evalkit.studies.lock import input_hashes
from tests.toy_notebooks import toy_notebook

REPO = Path(__file__).resolve().parents[1]
REPO_LOCK = REPO / "preregistration.lock.json"


def _text(page: Path) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


# --------------------------------------------------------------------------- refusals


def test_a_locked_parameter_given_with_p_or_f_is_refused_naming_it(
    tmp_path: Path, kernel_calls: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    rc = main(["study", "run", "threshold-study", "-p", "ceiling", "0.2", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and kernel_calls == []
    assert "parameter 'ceiling': locked 0.1, this run 0.2 (given)" in err
    assert "threshold-study version 1, locked on 2026-11-30" in err and "--deviation" in err
    params = tmp_path / "p.yaml"
    params.write_text("n_resamples: 50\nthresholds: [1, 2]\n", encoding="utf-8")
    assert main(["study", "run", "threshold-study", "-f", str(params), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "parameter 'n_resamples': locked 1000, this run 50" in err
    assert "parameter 'thresholds': locked [1,3,6,20], this run [1,2]" in err
    assert kernel_calls == [] and not out.exists()


def test_an_edited_default_in_the_notebook_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kernel_calls: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    import nbformat  # deferred: seconds to import (jsonschema)

    nbdir = tmp_path / "notebooks"
    shutil.copytree(REPO / "notebooks", nbdir)
    nb = nbformat.read(str(nbdir / "threshold-study.ipynb"), as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "ceiling: float = 0.1" in cell.source
    cell.source = cell.source.replace("ceiling: float = 0.1", "ceiling: float = 0.3")
    nbformat.write(nb, str(nbdir / "threshold-study.ipynb"))
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(nbdir))
    assert main(["study", "run", "threshold-study", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "parameter 'ceiling': locked 0.1, this run 0.3 (notebook default)" in err
    assert kernel_calls == []


def test_no_lock_file_refuses_unless_no_lock(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kernel_calls: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "deleted.lock.json"))
    assert main(["study", "run", "rubric-replay", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "no pre-registration lock at" in err and "--no-lock" in err
    assert kernel_calls == []


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("rubric", "rubric-v2"),
        ("gold", "instruction-adherence/v2"),
        ("decision_rule", "instruction-adherence/DECISION_RULE.json"),
    ],
)
def test_a_changed_frozen_input_refuses_every_study_naming_the_entry(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kernel_calls: list[Any],
    capsys: pytest.CaptureFixture[str],
    kind: str,
    name: str,
) -> None:
    """The lock says the input had other bytes than the repository's today: it changed."""
    lock = json.loads(REPO_LOCK.read_text(encoding="utf-8"))
    entry = next(e for e in lock["entries"] if e["kind"] == kind and e["name"] == name)
    entry["sha256"] = "0" * 64
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock), encoding="utf-8")
    monkeypatch.setenv(LOCK_ENV, str(path))
    assert main(["study", "run", "rubric-replay", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert f"pre-registered {kind} '{name}'" in err and "changed since it was locked" in err
    assert kernel_calls == []


def test_a_deviation_needs_a_reason_and_no_lock_takes_none(kernel_calls: list[Any]) -> None:
    with pytest.raises(EvalkitError, match="--deviation needs a reason"):
        studies.run_study("threshold-study", {"ceiling": 0.2}, deviation="  ")
    with pytest.raises(EvalkitError, match="with --no-lock there is none"):
        studies.run_study("threshold-study", {"ceiling": 0.2}, deviation="why", no_lock=True)
    assert kernel_calls == []


# --------------------------------------------------------------------------- runs


@pytest.mark.notebook
def test_a_deviation_runs_and_is_stated_on_the_page_and_in_results(tmp_path: Path) -> None:
    why = "a smaller bootstrap <b>for</b> a `quick` look"
    out = tmp_path / "out"
    rc = main(["study", "run", "threshold-study", "-p", "n_resamples", "60",
               "--deviation", why, "--out", str(out)])  # fmt: skip
    assert rc == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    pre = res["preregistration"]
    assert res["deviation"] == why and pre["status"] == "deviation"
    assert pre["deviations"] == [
        {"parameter": "n_resamples", "locked": 1000, "given": 60, "source": "given"}
    ]
    assert pre["entry"]["name"] == "threshold-study" and pre["entry"]["version"] == 1
    assert pre["entry"]["locked_on"] == "2026-11-30" and pre["amended"] is False
    assert "n_resamples" in pre["design_parameters"] and "scheduler" not in pre["design_parameters"]
    assert pre["input_parameters"] == ["metrics_dir", "metrics_dirs"]
    assert pre["execution_parameters"] == ["scheduler"]
    text = _text(out / "index.html")
    banner = text[: text.index("The records read")]
    assert "Deviation from the pre-registration" in banner
    assert "n_resamples: locked 1000, this run 60 (given)" in banner
    assert f"Reason given: {why}" in banner  # literally, not as markup
    assert "<b>" not in (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.notebook
def test_no_lock_runs_and_the_page_says_not_pre_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "deleted.lock.json"))
    _toy(tmp_path / "notebooks", 'metrics_dir: str = ""\nceiling: float = 0.1')
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(tmp_path / "notebooks"))
    out = tmp_path / "out"
    assert main(["study", "run", "rubric-replay", "--no-lock", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["preregistration"]["status"] == "not pre-registered"
    assert res["preregistration"]["entry"] is None and res["deviation"] is None
    assert "Not pre-registered. This run was started with --no-lock" in _text(out / "index.html")


def _toy(directory: Path, params: str) -> None:
    toy_notebook(directory / "rubric-replay.ipynb", params, "print('ran')", "# toy study")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


@pytest.mark.notebook
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_deleting_the_lock_and_preregistering_again_is_an_amendment_not_a_fresh_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 4: rm lock + `evalkit preregister` used to make any changed design the locked one."""
    proj = tmp_path / "proj"
    _toy(proj / "notebooks", 'metrics_dir: str = ""\nceiling: float = 0.1')
    lock = proj / "preregistration.lock.json"
    write_lock(lock, proj, date="2026-01-02", kinds=["study"])
    _git(proj, "init", "-q")
    _git(proj, "add", "-A")
    _git(proj, "commit", "-q", "-m", "pre-register the toy study")
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(proj / "notebooks"))
    monkeypatch.setenv(LOCK_ENV, str(lock))
    _toy(proj / "notebooks", 'metrics_dir: str = ""\nceiling: float = 0.5')  # moved goalposts
    assert main(["study", "run", "rubric-replay", "--out", str(tmp_path / "a")]) == 1
    assert "'ceiling': locked 0.1, this run 0.5 (notebook default)" in capsys.readouterr().err

    lock.unlink()  # the laundering attempt
    assert main(["preregister", "--out", str(lock), "--root", str(proj), "--kind", "study"]) == 0
    capsys.readouterr()
    assert main(["study", "run", "rubric-replay", "--out", str(tmp_path / "b")]) == 0
    res = json.loads((tmp_path / "b" / "results.json").read_text(encoding="utf-8"))
    pre = res["preregistration"]
    assert pre["status"] == "pre-registered" and pre["amended"] is True
    assert pre["entry"]["version"] == 2 and pre["original_locked_on"] == "2026-01-02"
    assert pre["first_committed"] is None  # the amendment is not committed yet
    text = _text(tmp_path / "b" / "index.html")
    assert f"The pre-registration was amended on {pre['entry']['locked_on']} (version 2); the " \
           "original was locked on 2026-01-02." in text  # fmt: skip
    assert "this entry is not committed to git" in text

    # a lock written from scratch (by hand, or by an evalkit that did not keep history)
    fresh = json.loads(lock.read_text(encoding="utf-8"))
    fresh["entries"] = [e for e in fresh["entries"] if e.get("version") == 2]
    fresh["entries"][0]["version"] = 1
    fresh["created"] = fresh["entries"][0]["locked_on"]
    lock.write_text(json.dumps(fresh), encoding="utf-8")
    assert main(["study", "run", "rubric-replay", "--out", str(tmp_path / "c")]) == 1
    err = capsys.readouterr().err
    assert "was rewritten: study 'rubric-replay' version 1 (locked on 2026-01-02" in err
    assert not (tmp_path / "c" / "results.json").exists()


# --------------------------------------------------------------------------- data inputs


def test_data_inputs_are_hashed_and_special_files_never_read(tmp_path: Path) -> None:
    data = tmp_path / "metrics"
    (data / "_archive").mkdir(parents=True)
    (data / "sessions.jsonl").write_bytes(b'{"session_id": "s1"}\n')
    (data / "_archive" / "events-1.jsonl").write_bytes(b"{}\n")
    os.mkfifo(data / "events.jsonl")  # a FIFO in the data: named, never opened
    os.symlink("/dev/zero", data / "zero")
    declared = notebook_parameters(REPO / "notebooks" / "threshold-study.ipynb")
    got = input_hashes(declared, {"metrics_dir": str(data)})["metrics_dir"]
    assert got["kind"] == "directory" and got["files"] == 4
    first = got["sha256"]  # stable: the FIFO is named by its error, never opened
    assert first == input_hashes(declared, {"metrics_dir": str(data)})["metrics_dir"]["sha256"]
    (data / "events.jsonl").unlink()
    (data / "zero").unlink()
    got = input_hashes(declared, {"metrics_dir": str(data)})["metrics_dir"]
    expected = set_sha256(
        {
            "_archive/events-1.jsonl": sha256_hex(b"{}\n"),
            "sessions.jsonl": sha256_hex(b'{"session_id": "s1"}\n'),
        }
    )
    assert got["sha256"] == expected and got["bytes"] == 24
    assert "error" in input_hashes(declared, {"metrics_dir": "/dev/zero"})["metrics_dir"]
    assert input_hashes(declared, {"metrics_dir": ""})["metrics_dir"]["path"] == ""


@pytest.mark.notebook
def test_a_data_path_override_is_no_deviation_and_its_content_is_recorded(tmp_path: Path) -> None:
    from evalkit.simulate import simulate_metrics_dir

    ledger = simulate_metrics_dir(tmp_path / "m", n_sessions=3, seed=5)
    run = studies.run_study(
        "rubric-replay", {"metrics_dir": str(ledger.metrics_dir)}, out_dir=tmp_path / "out"
    )
    assert run.ok, run.error
    assert run.results["preregistration"]["status"] == "pre-registered"
    recorded = run.results["inputs"]["metrics_dir"]
    declared = notebook_parameters(REPO / "notebooks" / "rubric-replay.ipynb")
    assert (
        recorded == input_hashes(declared, {"metrics_dir": str(ledger.metrics_dir)})["metrics_dir"]
    )
    assert recorded["kind"] == "directory" and recorded["files"] >= 2


# --------------------------------------------------------------------------- a fleet (issue 15)


def _fleet(root: Path) -> list[str]:
    dirs = []
    for i in range(3):
        d = root / f"repo-{i}" / "metrics"
        (d / "_archive").mkdir(parents=True)
        (d / "sessions.jsonl").write_bytes(b'{"session_id": "s%d"}\n' % i)
        (d / "_archive" / "events-1.jsonl").write_bytes(b"{}\n")
        dirs.append(str(d))
    return dirs


def test_a_fleet_input_hashes_each_directory_as_one_metrics_dir_is(tmp_path: Path) -> None:
    dirs = _fleet(tmp_path)
    declared = notebook_parameters(REPO / "notebooks" / "rubric-replay.ipynb")
    one = [input_hashes(declared, {"metrics_dir": d})["metrics_dir"] for d in dirs]
    got = input_hashes(declared, {"metrics_dir": "", "metrics_dirs": dirs})
    assert got["metrics_dir"]["content"] == "the notebook's default data"
    fleet = got["metrics_dirs"]
    assert fleet["kind"] == "several" and fleet["count"] == 3 and fleet["path"] == dirs
    assert fleet["items"] == one  # each directory: exactly the record of a single metrics_dir
    assert fleet["sha256"] == set_sha256({d: o["sha256"] for d, o in zip(dirs, one, strict=True)})
    # a glob is hashed as the list it resolves to (the directories the study reads)
    pattern = str(tmp_path / "repo-*" / "metrics")
    by_glob = input_hashes(declared, {"metrics_dirs": pattern})["metrics_dirs"]
    assert by_glob["path"] == pattern
    assert by_glob["items"] == one and by_glob["sha256"] == fleet["sha256"]
    # and a file listing the directories, one per line, as resolve_fleet reads it
    listing = tmp_path / "fleet.txt"
    listing.write_text("# three repositories\n" + "\n".join(dirs) + "\n", encoding="utf-8")
    by_file = input_hashes(declared, {"metrics_dirs": str(listing)})["metrics_dirs"]
    assert by_file["sha256"] == fleet["sha256"]
    # one changed byte in one repository changes the fleet's hash, and only that item's
    (Path(dirs[1]) / "sessions.jsonl").write_bytes(b'{"session_id": "s9"}\n')
    changed = input_hashes(declared, {"metrics_dirs": dirs})["metrics_dirs"]
    assert changed["sha256"] != fleet["sha256"]
    assert [a == b for a, b in zip(changed["items"], one, strict=True)] == [True, False, True]
    # what cannot be resolved is recorded as an error naming it, never a crash
    nothing = input_hashes(declared, {"metrics_dirs": str(tmp_path / "none-*")})["metrics_dirs"]
    assert "matched no directory" in nothing["error"]


def test_a_fleet_and_a_scheduler_are_no_deviation(tmp_path: Path) -> None:
    from evalkit.studies.lock import check_study

    declared = notebook_parameters(REPO / "notebooks" / "threshold-study.ipynb")
    merged = {p.name: p.default for p in declared.values()}
    merged.update(metrics_dirs=_fleet(tmp_path), scheduler="tcp://127.0.0.1:8786")
    status = check_study(
        "threshold-study", declared, merged, {"metrics_dirs", "scheduler"}, "0" * 64
    )
    assert status.status == "pre-registered" and status.deviations == ()
    assert status.input_parameters == ("metrics_dir", "metrics_dirs")
    assert status.execution_parameters == ("scheduler",)
    assert "scheduler" not in status.design_parameters
    assert status.to_json()["execution_parameters"] == ["scheduler"]
    assert "Execution settings (free; where it runs, never what it computes): `scheduler`." in (
        status.banner()
    )
    # a design parameter still binds, fleet or not
    merged["ceiling"] = 0.3
    with pytest.raises(EvalkitError, match=r"parameter 'ceiling': locked 0\.1, this run 0\.3"):
        check_study("threshold-study", declared, merged, {"ceiling"}, "0" * 64)


def test_the_committed_lock_holds_the_fleet_notebooks_unamended() -> None:
    """The two notebooks gained metrics_dirs and scheduler (issue 15): a data input and an
    execution setting, so their locked designs still match and the lock needs no amendment."""
    from evalkit.prereg.lock import check_lock, latest_entries
    from evalkit.prereg.study_params import design_of

    assert check_lock(REPO_LOCK, REPO) == []
    entries = latest_entries(json.loads(REPO_LOCK.read_text(encoding="utf-8"))["entries"])
    for name in ("rubric-replay", "threshold-study"):
        declared = notebook_parameters(REPO / "notebooks" / f"{name}.ipynb")
        assert {"metrics_dirs", "scheduler"} <= set(declared)
        defaults = {p.name: p.default for p in declared.values()}
        assert entries[("study", name)]["design"] == design_of(defaults, declared)


def test_a_lock_with_a_byte_order_mark_reads_the_same_for_studies_and_preregister(
    tmp_path: Path,
) -> None:
    # before: the study runner parsed the lock's raw bytes and refused a BOM that read_lock
    # (strict UTF-8 text, BOM dropped) accepted; both now decode the same bytes one way
    from evalkit.prereg.lock import read_lock
    from evalkit.studies.lock import _read_checked_lock

    with_bom = tmp_path / "preregistration.lock.json"
    with_bom.write_bytes(b"\xef\xbb\xbf" + REPO_LOCK.read_bytes())
    assert read_lock(with_bom) == read_lock(REPO_LOCK)
    assert _read_checked_lock("rubric-replay", with_bom, REPO).data == read_lock(REPO_LOCK)
