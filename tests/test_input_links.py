"""Issue 24, finding 10: inputs are hashed by what is read, and a fleet counts a directory once.

A data input reached through symlinks was hashed by its link text (a linked folder not at all):
the target's content could change under the same recorded sha256. Now a study input is hashed
by the content the study reads (links to files and folders followed), and every link followed
is recorded with its text and its target. A symlinked alias of a metrics directory in a fleet
glob was scored twice (pooled rates double-count): fleet members are now compared by device and
inode, and a directory named twice under any name is refused.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.fleet.paths import resolve_fleet
from evalkit.prereg.study_params import notebook_parameters
from evalkit.studies.lock import input_hashes

DECLARED = notebook_parameters(REPO_ROOT / "notebooks" / "rubric-replay.ipynb")


def _hashed(path: Path, name: str = "metrics_dir") -> dict[str, Any]:
    return dict(input_hashes(DECLARED, {"metrics_dir": "", name: str(path)})[name])


def _metrics(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "sessions.jsonl").write_bytes(b'{"session_id": "s1"}\n')
    return root


def test_a_linked_file_is_hashed_by_its_target_content_and_the_link_recorded(
    tmp_path: Path,
) -> None:
    metrics = _metrics(tmp_path / "metrics")
    target = tmp_path / "elsewhere" / "events.jsonl"
    target.parent.mkdir()
    target.write_bytes(b'{"event": "a"}\n')
    (metrics / "events.jsonl").symlink_to(target)
    before = _hashed(metrics)
    target.write_bytes(b'{"event": "b"}\n')  # the link is the same; what is read is not
    after = _hashed(metrics)
    assert before["sha256"] != after["sha256"]
    assert after["links"] == [
        {"path": "events.jsonl", "link": str(target), "target": str(target.resolve())}
    ]
    assert after["bytes"] == len(b'{"event": "b"}\n') + len(b'{"session_id": "s1"}\n')


def test_a_linked_folder_is_read_and_recorded_and_a_loop_is_named(tmp_path: Path) -> None:
    metrics = _metrics(tmp_path / "metrics")
    archive = tmp_path / "elsewhere" / "_archive"
    archive.mkdir(parents=True)
    (archive / "events-1.jsonl").write_bytes(b"{}\n")
    (metrics / "_archive").symlink_to(archive)
    (metrics / "again").symlink_to(metrics)  # a loop: named, never followed twice
    before = _hashed(metrics)
    assert before["files"] == 3  # sessions.jsonl, _archive/events-1.jsonl, the loop
    (archive / "events-1.jsonl").write_bytes(b"{}\n{}\n")
    after = _hashed(metrics)
    assert before["sha256"] != after["sha256"]
    assert [link["path"] for link in after["links"]] == ["_archive", "again"]
    # the folder named through a link: that link is recorded too
    alias = tmp_path / "alias"
    alias.symlink_to(metrics)
    linked = _hashed(alias)
    assert linked["sha256"] == after["sha256"]
    assert linked["links"][0] == {
        "path": str(alias), "link": str(metrics), "target": str(metrics.resolve())
    }  # fmt: skip


def test_a_linked_file_input_records_its_link(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,label\na,pass\n", encoding="utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(labels)
    declared = notebook_parameters(REPO_ROOT / "notebooks" / "agreement-study.ipynb")
    got = input_hashes(declared, {"labels_path": str(link)})["labels_path"]
    assert got["kind"] == "file" and got["links"][0]["target"] == str(labels.resolve())


@pytest.fixture
def fleet(tmp_path: Path) -> list[Path]:
    from evalkit.simulate import simulate_metrics_dir

    dirs = []
    for i in range(2):
        target = tmp_path / "repos" / f"repo-{i}" / "metrics"
        simulate_metrics_dir(target, n_sessions=3, seed=20 + i, score=False)
        dirs.append(target)
    return dirs


def test_a_symlinked_alias_in_a_fleet_is_refused_not_counted_twice(
    fleet: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alias = tmp_path / "repos" / "repo-alias"
    alias.symlink_to(fleet[0].parent)
    pattern = str(tmp_path / "repos" / "*" / "metrics")
    with pytest.raises(EvalkitError, match="is the same directory"):
        resolve_fleet(pattern)
    spelled = [str(fleet[0]), str(fleet[1]), f"{fleet[0].parent}/../repo-0/metrics"]
    with pytest.raises(EvalkitError, match=r"entries 1 and 3"):
        resolve_fleet(spelled)
    assert main(["score", "--all", "--fleet", pattern, "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "is the same directory" in err and "counted twice" in err
    # every command that takes a fleet reads it so: the explorer's pooled rates too
    assert main(["explore", "--fleet", pattern, "--no-verify", "--no-progress"]) == 1
    assert "is the same directory" in capsys.readouterr().err
    recorded = _hashed(Path(pattern), "metrics_dirs")
    assert "is the same directory" in recorded["error"]
    shutil.rmtree(fleet[1])
    os.unlink(alias)
    assert resolve_fleet(pattern) == [str(fleet[0])]
