"""Issue 24, finding 13 (the git side): an untracked file makes the work tree dirty.

``git_dirty`` ignored untracked files, while untracked ``calibrations/*.json`` decide what a
page says is registered: a study's ``git_dirty: false`` then claimed the commit named what ran.
Now any file git does not ignore counts, and ``results.json`` lists what differs
(``git_dirty_paths``, ``git status --porcelain`` lines).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evalkit.provenance import git
from evalkit.studies import run as studies


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "calibrations").mkdir(parents=True)
    (root / "calibrations" / "README.md").write_text("certificates\n", encoding="utf-8")
    (root / ".gitignore").write_text("reports/\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_an_untracked_certificate_makes_the_tree_dirty_and_is_named(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert git.is_dirty(repo) is False
    (repo / "reports").mkdir()
    (repo / "reports" / "index.html").write_text("ignored\n", encoding="utf-8")
    assert git.is_dirty(repo) is False  # what git ignores is no part of what ran
    (repo / "calibrations" / "abc.json").write_text("{}\n", encoding="utf-8")
    assert git.is_dirty(repo) is True
    assert git.dirty_paths(repo) == ["?? calibrations/abc.json"]
    monkeypatch.setattr(studies, "REPO_ROOT", repo)  # what a study's results.json records
    assert studies._git_dirty() is True
    assert studies._git_dirty_paths() == ["?? calibrations/abc.json"]
    (repo / "calibrations" / "abc.json").unlink()
    (repo / "calibrations" / "README.md").write_text("changed\n", encoding="utf-8")
    assert git.is_dirty(repo) is True and git.dirty_paths(repo) == [" M calibrations/README.md"]


def test_outside_a_repository_dirtiness_is_unknown(tmp_path: Path) -> None:
    assert git.is_dirty(tmp_path) is None and git.dirty_paths(tmp_path) is None
    _git(tmp_path, "init", "-q")  # a repository without a commit yet: every file is new
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    assert git.dirty_paths(tmp_path) == ["?? a.txt"]


def test_a_certificate_git_is_told_to_ignore_or_not_to_look_at_is_named(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other ways to hide a file that decides a page from ``git status``: excluded in
    ``.git/info/exclude`` (ignored below a decisive folder counts), or a tracked one marked
    ``--assume-unchanged`` / ``--skip-worktree`` and then edited."""
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("calibrations/*.json\n", encoding="utf-8")
    (repo / "calibrations" / "abc.json").write_text("{}\n", encoding="utf-8")
    assert git.dirty_paths(repo) == []  # a plain status does not see it
    assert git.dirty_paths(repo, decisive=["calibrations"]) == ["!! calibrations/abc.json"]
    monkeypatch.setattr(studies, "REPO_ROOT", repo)
    assert studies._git_dirty() is True
    (repo / "calibrations" / "abc.json").unlink()
    for flag, code in (("--assume-unchanged", "?h"), ("--skip-worktree", "?S")):
        _git(repo, "update-index", flag, "calibrations/README.md")
        (repo / "calibrations" / "README.md").write_text("edited\n", encoding="utf-8")
        assert git.dirty_paths(repo) == [f"{code} calibrations/README.md"]
        assert git.is_dirty(repo) is True
        _git(repo, "update-index", flag.replace("--", "--no-"), "calibrations/README.md")
        _git(repo, "checkout", "--", "calibrations/README.md")
    assert git.is_dirty(repo, decisive=["calibrations"]) is False
