"""Commit messages: the rule the commit-msg hook and CI share (``.ci/commit_message.py``)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO_ROOT

_SPEC = importlib.util.spec_from_file_location(
    "commit_message", REPO_ROOT / ".ci" / "commit_message.py"
)
assert _SPEC is not None and _SPEC.loader is not None
commit_message = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(commit_message)

GOOD = "Move the ledger reader into ledger/\n\nThe folders are the layers now.\n"


@pytest.mark.parametrize(
    ("message", "complaint"),
    [
        (GOOD, None),
        ("x" * 72 + "\n\nwhy\n", None),
        ("x" * 73 + "\n\nwhy\n", "73 characters"),
        ("Subject only\n", "no body"),
        ("Subject\nno blank line\n", "no body"),
        ("Subject\n\n\n", "no body"),
        ("\n\nbody\n", "subject line is empty"),
        ("Subject\n\n# a git comment only\n", "no body"),
    ],
)
def test_the_rule(message: str, complaint: str | None) -> None:
    found = commit_message.problems(message)
    if complaint is None:
        assert found == []
    else:
        assert any(complaint in problem for problem in found), found


def test_a_merge_needs_only_a_short_subject() -> None:
    assert commit_message.problems("Merge branch 'x'\n", merge=True) == []
    assert commit_message.problems("M" * 80 + "\n", merge=True)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


def test_the_hook_refuses_a_long_subject_and_ci_names_the_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for part in (".githooks", ".ci"):
        shutil.copytree(REPO_ROOT / part, repo / part)
    _git(repo, "config", "core.hooksPath", ".githooks")
    (repo / "a").write_text("a", encoding="utf-8")
    _git(repo, "add", "a")
    refused = _git(repo, "commit", "-q", "-m", "x" * 80 + "\n\nwhy")
    assert refused.returncode != 0 and "80 characters" in refused.stderr
    assert _git(repo, "commit", "-q", "-m", GOOD).returncode == 0
    base = _git(repo, "rev-parse", "HEAD").stdout.strip()
    (repo / ".ci" / "commits-checked-since").write_text(base + "\n", encoding="utf-8")
    (repo / "b").write_text("b", encoding="utf-8")
    _git(repo, "add", "b")
    assert _git(repo, "commit", "-q", "--no-verify", "-m", "no body").returncode == 0
    checked = subprocess.run(
        ["python3", ".ci/commit_message.py", "--since-file", ".ci/commits-checked-since"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 1 and "no body" in checked.stderr
    bad = _git(repo, "rev-parse", "HEAD").stdout.strip()
    listed = repo / ".ci" / "commit-message-exceptions"
    listed.write_text(f"{bad}\n", encoding="utf-8")  # named without a reason: refused
    again = subprocess.run(
        ["python3", ".ci/commit_message.py", "--since-file", ".ci/commits-checked-since"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert again.returncode != 0 and "then why it stands" in again.stderr
    listed.write_text(f"{bad} merged before the check ran\n", encoding="utf-8")
    passed = subprocess.run(
        ["python3", ".ci/commit_message.py", "--since-file", ".ci/commits-checked-since"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert passed.returncode == 0 and f"commit {bad[:12]}: passed over" in passed.stdout
