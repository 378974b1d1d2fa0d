"""Issue 24, finding 5: a hand-edited lock still said "Pre-registered, version 1, first committed".

Entries were identified by ``(kind, name, version, sha256)``: editing an entry's ``design`` and
recomputing its ``design_sha256`` (an entry locked before designs were recorded, whose
``sha256`` is its cell's) was no rewrite; two entries with the same ``(kind, name, version)``
were accepted and the first won; an uncommitted change of the lock was not on the page. Now an
entry is its whole content and every committed entry is compared with the lock (the one edit
allowed: ``preregister`` recording a design once), a duplicate version is refused, and the page
lists how the lock differs from its last commit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import EvalkitError
from evalkit.prereg.lock import write_lock
from evalkit.prereg.study_params import (
    design_sha256,
    notebook_parameters,
    parameters_cell,
    read_notebook,
)
from evalkit.studies.lock import check_study
from tests.toy_notebooks import toy_notebook

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
NAME = "threshold-study"
PARAMS = 'metrics_dir: str = ""\nceiling: float = 0.1\nn_resamples: int = 1000'


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


def _commit(proj: Path, message: str) -> None:
    _git(proj, "add", "-A")
    _git(proj, "commit", "-q", "-m", message)


def _check(proj: Path, **given: Any) -> Any:
    """``check_study`` of the toy study as the runner calls it (no kernel)."""
    nb = proj / "notebooks" / f"{NAME}.ipynb"
    declared = notebook_parameters(nb)
    merged = {**{p.name: p.default for p in declared.values()}, **given}
    source = hashlib.sha256(parameters_cell(read_notebook(nb), nb).encode()).hexdigest()
    lock = proj / "preregistration.lock.json"
    return check_study(NAME, declared, merged, set(given), source, lock=lock, root=proj)


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    """A project whose lock entry was written before designs were recorded (sha256 = the cell's
    hash), committed; then ``preregister`` recorded its design, committed too (as this
    repository's own lock went)."""
    proj = tmp_path / "proj"
    nb = toy_notebook(proj / "notebooks" / f"{NAME}.ipynb", PARAMS, "print('ran')")
    cell = parameters_cell(read_notebook(nb), nb)
    lock = proj / "preregistration.lock.json"
    entry = {"kind": "study", "name": NAME, "locked_on": "2026-01-02",
             "path": f"notebooks/{NAME}.ipynb#parameters",
             "sha256": hashlib.sha256(cell.encode()).hexdigest()}  # fmt: skip
    lock.write_text(json.dumps({"schema": 1, "created": "2026-01-02", "entries": [entry]}))
    _git(proj, "init", "-q")
    _commit(proj, "lock, before designs were recorded")
    recorded = write_lock(lock, proj, date="2026-01-03", kinds=["study"])
    assert (
        "design" in recorded["entries"][0] and recorded["entries"][0]["sha256"] == entry["sha256"]
    )
    _commit(proj, "record the design")
    return proj


def _edit_design(proj: Path, ceiling: float) -> None:
    lock = proj / "preregistration.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    entry = data["entries"][0]
    entry["design"]["ceiling"] = ceiling
    entry["design_sha256"] = design_sha256(entry["design"])  # recomputed, as a forger would
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_the_honest_history_stands_and_the_page_says_nothing_is_uncommitted(legacy: Path) -> None:
    status = _check(legacy)
    assert status.status == "pre-registered" and status.uncommitted == ()
    assert status.committed is not None  # dated by the first commit of the entry
    assert "not committed to git" not in status.banner()


@pytest.mark.parametrize("commit_it", [False, True])
def test_an_edited_design_with_a_recomputed_hash_is_a_rewrite(
    legacy: Path, commit_it: bool
) -> None:
    """The locked ceiling 0.1 becomes 0.5 in the lock, and so in the notebook's run: without
    the history check this ran as pre-registered. Committing the edit changes nothing."""
    _edit_design(legacy, 0.5)
    if commit_it:
        _commit(legacy, "move the goalposts")
    with pytest.raises(EvalkitError) as caught:
        _check(legacy, ceiling=0.5)
    message = str(caught.value)
    assert f"was rewritten: study {NAME!r} version 1 (locked on 2026-01-02" in message
    assert "was edited since (design, design_sha256 differ)" in message


def test_two_entries_of_one_version_are_refused_naming_both(legacy: Path) -> None:
    lock = legacy / "preregistration.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    forged = json.loads(json.dumps(data["entries"][0]))
    forged["design"]["ceiling"] = 0.5
    forged["design_sha256"] = design_sha256(forged["design"])
    data["entries"].insert(0, forged)  # the first won
    lock.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        EvalkitError, match=rf"entries\[0\] and entries\[1\] are both study '{NAME}' "
    ):
        _check(legacy, ceiling=0.5)
    with pytest.raises(EvalkitError, match="a lock holds each version once"):
        write_lock(lock, legacy, kinds=["study"])


def test_an_uncommitted_lock_change_is_on_the_page(legacy: Path) -> None:
    toy_notebook(
        legacy / "notebooks" / f"{NAME}.ipynb", PARAMS.replace("0.1", "0.2"), "print('ran')"
    )
    write_lock(legacy / "preregistration.lock.json", legacy, date="2026-02-01", reason="why")
    status = _check(legacy)  # the amendment, version 2, is not committed
    assert status.amended and status.committed is None
    assert any(f"study {NAME!r} version 2 was added (since commit" in c for c in status.uncommitted)
    banner = status.banner()
    assert "**The lock has changes not committed to git**" in banner
    assert status.to_json()["uncommitted_lock_changes"] == list(status.uncommitted)
    _commit(legacy, "amend")
    assert _check(legacy).uncommitted == ()


@pytest.fixture
def unrecorded(tmp_path: Path) -> Path:
    """A project whose committed lock entry holds only its parameters cell's hash (locked
    before designs were recorded), its design not yet recorded."""
    proj = tmp_path / "proj"
    nb = toy_notebook(proj / "notebooks" / f"{NAME}.ipynb", PARAMS, "print('ran')")
    cell = parameters_cell(read_notebook(nb), nb)
    entry = {"kind": "study", "name": NAME, "locked_on": "2026-01-02",
             "path": f"notebooks/{NAME}.ipynb#parameters",
             "sha256": hashlib.sha256(cell.encode()).hexdigest()}  # fmt: skip
    lock = proj / "preregistration.lock.json"
    lock.write_text(json.dumps({"schema": 1, "created": "2026-01-02", "entries": [entry]}))
    _git(proj, "init", "-q")
    _commit(proj, "lock, before designs were recorded")
    return proj


def _record_by_hand(proj: Path, design: dict[str, Any]) -> None:
    lock = proj / "preregistration.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["entries"][0].update(
        design=design, design_sha256=design_sha256(design), inputs=["metrics_dir"],
        design_recorded_on="2026-01-03",
    )  # fmt: skip
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.parametrize("commit_it", [False, True])
@pytest.mark.parametrize("cell_changed", [False, True])
def test_a_design_recorded_by_hand_onto_a_cell_hash_entry_is_refused(
    unrecorded: Path, commit_it: bool, cell_changed: bool
) -> None:
    """The one edit the history allows (recording the design of an entry that held only its
    cell's hash) must record that cell's design: a hand-written ceiling 0.5 over the locked
    cell's 0.1 (the notebook unchanged, or changed to 0.5 too) is refused, committed or not."""
    if cell_changed:
        toy_notebook(
            unrecorded / "notebooks" / f"{NAME}.ipynb", PARAMS.replace("0.1", "0.5"), "print(1)"
        )
    _record_by_hand(unrecorded, {"ceiling": 0.5, "n_resamples": 1000})
    if commit_it:
        _commit(unrecorded, "record a design by hand")
    with pytest.raises(EvalkitError, match="is not the locked parameters cell's") as caught:
        _check(unrecorded, ceiling=0.5) if not cell_changed else _check(unrecorded)
    assert "design, design_sha256" in str(caught.value)


def test_the_honest_design_record_of_a_cell_hash_entry_stands(unrecorded: Path) -> None:
    _record_by_hand(unrecorded, {"ceiling": 0.1, "n_resamples": 1000})
    assert _check(unrecorded).status == "pre-registered"
    _commit(unrecorded, "record the design")
    # the cell changed since (its committed version names the design): still the locked one
    toy_notebook(
        unrecorded / "notebooks" / f"{NAME}.ipynb", PARAMS.replace("0.1", "0.2"), "print(1)"
    )
    with pytest.raises(EvalkitError, match="differs from the pre-registered design"):
        _check(unrecorded)
