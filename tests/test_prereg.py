"""The pre-registration lock: what it holds, what it refuses, and that it never launders an edit."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.gold.sets import freeze
from evalkit.prereg import lock as prereg
from evalkit.prereg.lock import check_lock, collect_inputs, read_lock, require_unchanged, write_lock
from tests.conftest import REPO_ROOT

GOLD_V1 = REPO_ROOT / "gold" / "instruction-adherence" / "v1"


def _notebook(params: str, body: str = "print(1)") -> str:
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [params],
         "outputs": [], "execution_count": None},
        {"cell_type": "code", "metadata": {}, "source": [body], "outputs": [],
         "execution_count": None},
    ]  # fmt: skip
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project tree: two rubrics, one gold set version, a decision rule, two studies."""
    monkeypatch.delenv(prereg.LOCK_ENV, raising=False)
    r = tmp_path / "proj"
    (r / "rubrics").mkdir(parents=True)
    (r / "rubrics" / "rubric-v1.md").write_text("# rubric-v1\nfrozen\n", encoding="utf-8")
    (r / "rubrics" / "rubric-v2.md").write_text("# rubric-v2\nfrozen\n", encoding="utf-8")
    src = tmp_path / "src"
    shutil.copytree(GOLD_V1, src)
    (src / "MANIFEST.json").unlink()
    freeze(src, r / "gold", "instruction-adherence", date="2026-11-30")
    (r / "gold" / "instruction-adherence" / "DECISION_RULE.json").write_text(
        '{"graduate_if": {"kappa_ci_low_at_least": 0.6}}\n', encoding="utf-8"
    )
    (r / "notebooks").mkdir()
    (r / "notebooks" / "agreement-study.ipynb").write_text(
        _notebook('labels_path: str = ""\nseed: int = 0'), encoding="utf-8"
    )
    (r / "notebooks" / "threshold-study.ipynb").write_text(
        _notebook('metrics_dir: str = ""\nceiling: float = 0.1\nthresholds: list = [1, 3]'),
        encoding="utf-8",
    )
    return r


def test_lock_holds_every_kind_of_input(root: Path) -> None:
    lock = write_lock(root / "lock.json", root, date="2026-11-30")
    got = {(e["kind"], e["name"]) for e in lock["entries"]}
    assert got == {
        ("rubric", "rubric-v1"),
        ("rubric", "rubric-v2"),
        ("gold", "instruction-adherence/v1"),
        ("decision_rule", "instruction-adherence/DECISION_RULE.json"),
        ("study", "agreement-study"),  # the design in the notebook's parameters cell
        ("study", "threshold-study"),
    }
    gold_entry = next(e for e in lock["entries"] if e["kind"] == "gold")
    manifest = json.loads(
        (root / "gold" / "instruction-adherence" / "v1" / "MANIFEST.json").read_text("utf-8")
    )
    assert gold_entry["sha256"] == manifest["set_sha256"]
    # a study entry names what it freezes: the design values; data paths are inputs
    study = next(e for e in lock["entries"] if e["name"] == "threshold-study")
    assert study["design"] == {"ceiling": 0.1, "thresholds": [1, 3]}
    assert study["inputs"] == ["metrics_dir"] and study["version"] == 1
    canonical = json.dumps(study["design"], sort_keys=True, separators=(",", ":"))
    assert study["sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert {"kind", "name", "path", "sha256", "locked_on"} <= set(gold_entry)
    assert check_lock(root / "lock.json", root) == []
    for kind in prereg.KINDS:
        require_unchanged(kind, lock=root / "lock.json", root=root)


@pytest.mark.parametrize(
    ("kind", "name", "edit", "hint"),
    [
        ("rubric", "rubric-v2", lambda r: r / "rubrics" / "rubric-v2.md", "rubric_version"),
        ("gold", "instruction-adherence/v1",
         lambda r: r / "gold" / "instruction-adherence" / "v1" / "labels.jsonl", "gold freeze"),
        ("decision_rule", "instruction-adherence/DECISION_RULE.json",
         lambda r: r / "gold" / "instruction-adherence" / "DECISION_RULE.json", "new file"),
    ],
)  # fmt: skip
def test_a_changed_locked_input_refuses_the_run(
    root: Path, kind: str, name: str, edit, hint: str
) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    path: Path = edit(root)
    path.write_bytes(path.read_bytes() + b" ")
    with pytest.raises(EvalkitError) as err:
        require_unchanged(kind, [name], lock=lock, root=root)
    assert name in str(err.value) and hint in str(err.value)
    # other kinds are unaffected
    other = next(k for k in prereg.KINDS if k != kind)
    require_unchanged(other, lock=lock, root=root)
    assert main(["preregister", "--check", "--out", str(lock), "--root", str(root)]) == 1
    # re-locking would launder the edit of a frozen file: refused, naming it, lock untouched
    before = lock.read_bytes()
    with pytest.raises(EvalkitError, match="refusing to re-lock"):
        write_lock(lock, root)
    assert lock.read_bytes() == before


def test_the_design_is_what_counts_not_the_data_paths(root: Path) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    nb = root / "notebooks" / "agreement-study.ipynb"
    nb.write_text(
        _notebook('labels_path: str = ""\nseed: int = 0', body="print('a changed analysis')"),
        "utf-8",
    )
    require_unchanged("study", ["agreement-study"], lock=lock, root=root)
    # a data input's default is not design
    nb.write_text(_notebook('labels_path: str = "other.csv"\nseed: int = 0'), "utf-8")
    require_unchanged("study", ["agreement-study"], lock=lock, root=root)
    nb.write_text(_notebook('labels_path: str = ""\nseed: int = 1'), "utf-8")
    with pytest.raises(EvalkitError, match=r"agreement-study.*seed: locked 0, now 1"):
        require_unchanged("study", ["agreement-study"], lock=lock, root=root)


def test_a_changed_design_is_amended_as_a_new_version_keeping_the_old(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = root / "lock.json"
    first = write_lock(lock, root, date="2026-01-02")
    nb = root / "notebooks" / "threshold-study.ipynb"
    nb.write_text(
        _notebook('metrics_dir: str = ""\nceiling: float = 0.2\nthresholds: list = [1, 3]')
    )
    [change] = check_lock(lock, root)
    assert change.name == "threshold-study" and "ceiling: locked 0.1, now 0.2" in change.describe()
    assert main(["preregister", "--check", "--out", str(lock), "--root", str(root)]) == 1
    assert main(["preregister", "--out", str(lock), "--root", str(root),
                 "--reason", "ceiling agreed with <b>the board</b>"]) == 0  # fmt: skip
    assert "AMENDED v2" in capsys.readouterr().out
    after = json.loads(lock.read_text("utf-8"))
    # every old entry is still there, byte for byte; the amendment is a new, dated entry
    assert after["entries"][: len(first["entries"])] == first["entries"]
    [v2] = after["entries"][len(first["entries"]) :]
    assert v2["name"] == "threshold-study" and v2["version"] == 2 and v2["amends_version"] == 1
    assert v2["design"]["ceiling"] == 0.2 and v2["locked_on"] != "2026-01-02"
    assert v2["reason"] == "ceiling agreed with <b>the board</b>"
    assert after["created"] == "2026-01-02"
    assert check_lock(lock, root) == []  # the newest version is what is checked
    require_unchanged("study", ["threshold-study"], lock=lock, root=root)


def test_an_entry_written_before_designs_gets_its_design_recorded_only_while_unchanged(
    root: Path,
) -> None:
    from evalkit.prereg.study_params import notebook_parameters, parameters_cell, read_notebook

    def legacy_lock() -> dict:
        entries = []
        for name in ("agreement-study", "threshold-study"):
            nb = root / "notebooks" / f"{name}.ipynb"
            src = parameters_cell(read_notebook(nb), nb)
            entries.append({"kind": "study", "name": name, "locked_on": "2026-11-30",
                            "path": f"notebooks/{name}.ipynb#parameters",
                            "sha256": hashlib.sha256(src.encode()).hexdigest()})  # fmt: skip
        return {"schema": 1, "created": "2026-11-30", "entries": entries}

    lock = root / "lock.json"
    old = legacy_lock()
    lock.write_text(json.dumps(old), encoding="utf-8")
    nb = root / "notebooks" / "agreement-study.ipynb"
    nb.write_text(_notebook('labels_path: str = ""\nseed: int = 7'), "utf-8")  # changed since
    new = write_lock(lock, root, kinds=["study"])
    by_name = {(e["name"], e.get("version", 1)): e for e in new["entries"]}
    legacy_t = by_name[("threshold-study", 1)]
    # unchanged cell: the design is added to the entry; its hash and date stay what they were
    assert legacy_t["sha256"] == old["entries"][1]["sha256"]
    assert legacy_t["locked_on"] == "2026-11-30"
    assert legacy_t["design"] == {"ceiling": 0.1, "thresholds": [1, 3]}
    # changed cell: the old entry is kept as it was, the new design is version 2
    assert by_name[("agreement-study", 1)] == old["entries"][0]
    assert by_name[("agreement-study", 2)]["design"] == {"seed": 7}
    assert notebook_parameters(nb)["seed"].default == 7
    assert check_lock(lock, root) == []


def test_a_hand_edited_design_is_caught_and_never_relocked(root: Path) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    data = json.loads(lock.read_text("utf-8"))
    entry = next(e for e in data["entries"] if e["name"] == "threshold-study")
    entry["design"]["ceiling"] = 0.5  # the sha256 still says 0.1
    lock.write_text(json.dumps(data), encoding="utf-8")
    [change] = check_lock(lock, root)
    assert change.tampered and "edited by hand" in change.describe()
    with pytest.raises(EvalkitError, match="refusing to re-lock"):
        write_lock(lock, root)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_deleting_the_lock_does_not_start_afresh(root: Path) -> None:
    """Finding 4: deleting the lock and re-running preregister laundered any change."""
    _git(root, "init", "-q")
    lock = root / "preregistration.lock.json"
    first = write_lock(lock, root, date="2026-01-02")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "lock")
    nb = root / "notebooks" / "threshold-study.ipynb"
    nb.write_text(
        _notebook('metrics_dir: str = ""\nceiling: float = 0.9\nthresholds: list = [1, 3]')
    )
    lock.unlink()
    assert main(["preregister", "--out", str(lock), "--root", str(root)]) == 0
    again = json.loads(lock.read_text("utf-8"))
    assert again["entries"][: len(first["entries"])] == first["entries"]  # restored from git
    assert again["created"] == "2026-01-02" and again["restored_from_commit"]
    v2 = again["entries"][-1]
    assert (v2["name"], v2["version"], v2["design"]["ceiling"]) == ("threshold-study", 2, 0.9)


def test_a_fifo_or_a_malformed_entry_as_lock_is_a_clear_error(root: Path) -> None:
    fifo = root / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(EvalkitError, match="FIFO"):
        check_lock(fifo, root)  # never a hang: the reader refuses it before reading
    bad = root / "bad-entry.json"
    bad.write_text(json.dumps({"entries": [{"kind": "gold"}]}), encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"entries\[0\]\.name must be a string"):
        require_unchanged("gold", lock=bad, root=root)
    deep = root / "deep.json"
    deep.write_text('{"entries": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    # with the recursion limit raised, as a test earlier in an xdist worker may leave it:
    # the reader's bound is fixed, so 5000 levels are refused whatever the limit
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        with pytest.raises(EvalkitError, match="nested too deeply"):
            read_lock(deep)
    finally:
        sys.setrecursionlimit(limit)


def test_a_new_version_is_not_a_change_and_extends_the_lock(root: Path, tmp_path: Path) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    src = tmp_path / "src2"
    shutil.copytree(root / "gold" / "instruction-adherence" / "v1", src)
    (src / "MANIFEST.json").unlink()
    (src / "DATA_CARD.md").write_text("# second version\n", encoding="utf-8")
    freeze(src, root / "gold", "instruction-adherence")
    assert check_lock(lock, root) == []
    (root / "rubrics" / "rubric-v3.md").write_text("# rubric-v3\n", encoding="utf-8")
    entries = write_lock(lock, root)["entries"]
    names = {e["name"] for e in entries}
    assert {"instruction-adherence/v2", "rubric-v3"} <= names
    assert len(entries) == len(collect_inputs(root))


def test_no_lock_proceeds_and_says_so_once(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prereg, "_said", set())
    require_unchanged("gold", lock=root / "absent.json", root=root)
    require_unchanged("rubric", lock=root / "absent.json", root=root)
    err = capsys.readouterr().err
    assert err.count("no pre-registration lock") == 1
    assert check_lock(root / "absent.json", root) is None


def test_an_unlocked_name_proceeds_with_a_note(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prereg, "_said", set())
    lock = root / "lock.json"
    write_lock(lock, root)
    require_unchanged("gold", ["other-set/v1"], lock=lock, root=root)
    assert "not in the pre-registration lock" in capsys.readouterr().err


def test_a_removed_input_is_a_change(root: Path) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    (root / "rubrics" / "rubric-v1.md").unlink()
    [change] = check_lock(lock, root)
    assert change.current_sha256 is None and "missing" in change.describe()


def test_bad_kind_and_bad_lock_are_errors(root: Path) -> None:
    with pytest.raises(EvalkitError, match="kind"):
        require_unchanged("notebook", lock=root / "lock.json", root=root)
    bad = root / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"bad\.json"):
        require_unchanged("gold", lock=bad, root=root)


def test_preregister_cli_writes_the_lock(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = root / "preregistration.lock.json"
    assert main(["preregister", "--out", str(out), "--root", str(root)]) == 0
    assert "instruction-adherence/v1" in capsys.readouterr().out
    assert main(["preregister", "--check", "--out", str(out), "--root", str(root)]) == 0


def test_lock_can_start_with_some_kinds_and_be_extended(root: Path) -> None:
    lock = root / "lock.json"
    first = write_lock(lock, root, kinds=["gold", "decision_rule"])
    assert {e["kind"] for e in first["entries"]} == {"gold", "decision_rule"}
    require_unchanged("rubric", ["rubric-v2"], lock=lock, root=root)  # not locked: proceeds
    second = write_lock(lock, root)
    assert {e["kind"] for e in second["entries"]} == set(prereg.KINDS)
    assert first["entries"] == second["entries"][: len(first["entries"])]
    with pytest.raises(EvalkitError, match="kinds"):
        write_lock(lock, root, kinds=["notebook"])


def test_adding_a_data_input_or_an_execution_setting_is_no_amendment(root: Path) -> None:
    """Issue 15: a fleet (``metrics_dirs``) and the Dask ``scheduler`` it runs on are a data
    input and an execution setting; adding them leaves a study's design, hence its entry."""
    lock = root / "lock.json"
    first = write_lock(lock, root, date="2026-01-02")
    nb = root / "notebooks" / "threshold-study.ipynb"
    design = "ceiling: float = 0.1\nthresholds: list = [1, 3]"
    nb.write_text(_notebook(
        'metrics_dir: str = ""\nmetrics_dirs: list | str = []\nscheduler: str = ""\n' + design
    ))  # fmt: skip
    assert check_lock(lock, root) == []
    assert main(["preregister", "--check", "--out", str(lock), "--root", str(root)]) == 0
    # their defaults are free as well: an input names data, a scheduler where it runs
    nb.write_text(_notebook(
        'metrics_dir: str = ""\nmetrics_dirs: list | str = "repos/*/m"\n'
        'scheduler: str = "tcp://127.0.0.1:8786"\nlabels_paths: list = ["a.csv"]\n' + design
    ))  # fmt: skip
    assert check_lock(lock, root) == []
    assert write_lock(lock, root)["entries"] == first["entries"]  # nothing amended or re-locked
    # a new design parameter beside them is an amendment: execution settings are named ones
    nb.write_text(_notebook('metrics_dirs: list | str = []\nschedule: str = "nightly"\n' + design))
    [change] = check_lock(lock, root)
    assert 'schedule: locked (absent), now "nightly"' in change.describe()
