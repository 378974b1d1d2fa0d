"""The pre-registration lock: what it holds, what it refuses, and that it never launders an edit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit import prereg
from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.gold import freeze
from evalkit.prereg import check_lock, collect_inputs, require_unchanged, write_lock
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
    (r / "notebooks" / "agreement-study.ipynb").write_text(_notebook("seed = 0"), encoding="utf-8")
    (r / "notebooks" / "threshold-study.ipynb").write_text(_notebook("x = 1"), encoding="utf-8")
    (r / "notebooks" / "threshold-study.params.yaml").write_text("ceiling: 0.1\n", encoding="utf-8")
    return r


def test_lock_holds_every_kind_of_input(root: Path) -> None:
    lock = write_lock(root / "lock.json", root, date="2026-11-30")
    got = {(e["kind"], e["name"]) for e in lock["entries"]}
    assert got == {
        ("rubric", "rubric-v1"),
        ("rubric", "rubric-v2"),
        ("gold", "instruction-adherence/v1"),
        ("decision_rule", "instruction-adherence/DECISION_RULE.json"),
        ("study", "agreement-study"),  # the notebook's parameters cell
        ("study", "threshold-study"),  # the params file wins over the notebook cell
    }
    gold_entry = next(e for e in lock["entries"] if e["kind"] == "gold")
    manifest = json.loads(
        (root / "gold" / "instruction-adherence" / "v1" / "MANIFEST.json").read_text("utf-8")
    )
    assert gold_entry["sha256"] == manifest["set_sha256"]
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
        ("study", "threshold-study", lambda r: r / "notebooks" / "threshold-study.params.yaml",
         "new study"),
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
    # re-locking would launder the edit: refused, naming it
    with pytest.raises(EvalkitError, match="refusing to re-lock"):
        write_lock(lock, root)


def test_notebook_parameters_cell_is_what_counts(root: Path) -> None:
    lock = root / "lock.json"
    write_lock(lock, root)
    nb = root / "notebooks" / "agreement-study.ipynb"
    nb.write_text(_notebook("seed = 0", body="print('a changed analysis cell')"), "utf-8")
    require_unchanged("study", ["agreement-study"], lock=lock, root=root)
    nb.write_text(_notebook("seed = 1"), "utf-8")
    with pytest.raises(EvalkitError, match="agreement-study"):
        require_unchanged("study", ["agreement-study"], lock=lock, root=root)


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
