"""A temporary copy of the repository layout, so tests mint, forge and tamper calibration
certificates without ever touching the repository's own ``calibrations/``, gold sets or lock.

``make_repo`` copies the gold set (every version and its decision rule) and writes a
pre-registration lock for the copy, computed here from the copied bytes (so the tests do not
depend on how ``evalkit preregister`` writes a lock, only on the entry shape
``{kind, name, path, sha256, locked_on}``). With ``package=True`` the ``evalkit`` package and
the rubric texts are copied too, and :func:`run_evalkit` runs that copy's command line in a
fresh interpreter: its repository (where ``--register`` writes) is the copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO_ROOT

SET = "instruction-adherence"
GOLD_SET = REPO_ROOT / "gold" / SET


def gold_entries(root: Path) -> list[dict[str, Any]]:
    """Lock entries (gold versions and decision rules) for the gold sets under ``root/gold``."""
    from evalkit.gold.sets import load

    entries = []
    for set_dir in sorted(p for p in (root / "gold").iterdir() if p.is_dir()):
        for vdir in sorted(p for p in set_dir.iterdir() if p.is_dir() and p.name[1:].isdigit()):
            entries.append(
                {"kind": "gold", "name": f"{set_dir.name}/{vdir.name}",
                 "path": vdir.relative_to(root).as_posix(), "sha256": load(vdir).sha256,
                 "locked_on": "2026-11-30"}
            )  # fmt: skip
        for rule in sorted(set_dir.glob("DECISION_RULE*.json")):
            entries.append(
                {"kind": "decision_rule", "name": f"{set_dir.name}/{rule.name}",
                 "path": rule.relative_to(root).as_posix(),
                 "sha256": hashlib.sha256(rule.read_bytes()).hexdigest(),
                 "locked_on": "2026-11-30"}
            )  # fmt: skip
    return entries


def write_lock(root: Path, entries: list[dict[str, Any]] | None = None) -> Path:
    lock = root / "preregistration.lock.json"
    body = {"schema": 1, "created": "2026-11-30", "updated": "2026-11-30",
            "entries": gold_entries(root) if entries is None else entries}  # fmt: skip
    lock.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return lock


def make_repo(dest: Path, *, package: bool = False) -> Path:
    """A repository layout at ``dest``: ``gold/instruction-adherence`` and a lock (and, with
    ``package``, the evalkit package and rubric texts)."""
    shutil.copytree(GOLD_SET, dest / "gold" / SET)
    if package:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO_ROOT / "evalkit", dest / "evalkit", ignore=ignore)
        shutil.copytree(REPO_ROOT / "rubrics", dest / "rubrics")
    write_lock(dest)
    return dest


#: The judge whose certificate :func:`mint_rule_judge` registers.
RULE_JUDGE = "rule-judge (evalkit.judge.apply_rules)"


def mint_rule_judge(repo: Path, n_resamples: int) -> tuple[Any, Any]:
    """``(result, certificate)``: the rule judge calibrated on ``repo``'s gold v2, registered
    in ``repo`` (the lock and registry variables unset meanwhile, so only the copy counts)."""
    import pytest

    from evalkit.calibration import calibrate, register, rule_judge_labels
    from evalkit.gold.sets import load

    with pytest.MonkeyPatch.context() as env:
        env.delenv("EVALKIT_PREREG_LOCK", raising=False)
        env.delenv("EVALKIT_CALIBRATION_REGISTRY", raising=False)
        gold = load(repo / "gold" / SET / "v2")
        labels = rule_judge_labels(gold)
        result = calibrate(labels, gold, judge=RULE_JUDGE, n_resamples=n_resamples, root=repo)
        return result, register(result)


def relabelled_freeze(vdir: Path, work: Path, root: Path) -> Path:
    """A copy of the gold version ``vdir`` whose gold labels are the rule judge's, frozen with
    a recomputed manifest into ``root/instruction-adherence``: it verifies as a gold set on its
    own, and the rule judge agrees with it perfectly. Returns the new version folder."""
    from evalkit.calibration import rule_judge_labels
    from evalkit.gold.sets import freeze, load

    shutil.copytree(vdir, work)
    (work / "MANIFEST.json").unlink()
    judge = rule_judge_labels(load(vdir)).set_index("item_id")["label"]
    rows = [json.loads(x) for x in (work / "labels.jsonl").read_text("utf-8").splitlines()]
    for row in rows:
        row["label"] = judge[row["item_id"]]
    (work / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return freeze(work, root, SET, date="2026-12-01").path


def relabelled_copy_outside(repo: Path, work: Path) -> Path:
    """:func:`relabelled_freeze` of ``repo``'s v2 into ``work/elsewhere`` (with the set's
    decision rule beside it): a relabelled gold set outside the repository."""
    elsewhere = work / "elsewhere"
    (elsewhere / SET).mkdir(parents=True)
    shutil.copy(repo / "gold" / SET / "DECISION_RULE.json", elsewhere / SET)
    return relabelled_freeze(repo / "gold" / SET / "v2", work / "src", elsewhere)


def only_certificate(repo: Path) -> Path:
    """The one certificate in ``repo/calibrations`` (a test that expects one)."""
    [path] = sorted((repo / "calibrations").glob("*.json"))
    return path


def plant_certificate(repo: Path, obj: Any) -> Path:
    """Write a (forged) certificate under the name of its own sha256, as a forger would."""
    data = (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode()
    folder = repo / "calibrations"
    folder.mkdir(exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()}.json"
    path.write_bytes(data)
    return path


def labels_sha256(items: list[dict[str, Any]]) -> str:
    """The sha256 a certificate gives its embedded labels (canonical, compact JSON)."""
    data = json.dumps(items, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(data.encode()).hexdigest()


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the variables that once named a lock or a registry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}
    env.update(extra)
    return env


def run_evalkit(
    repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m evalkit ARGS`` of the package copied into ``repo``, run from ``repo``."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=repo,
        env={**(env if env is not None else clean_env()), "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_python(
    repo: Path, code: str, *, env: dict[str, str] | None = None, timeout: float = 600
) -> str:
    """Run ``code`` in a fresh interpreter with the package copied into ``repo``; its stdout."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo,
        env={**(env if env is not None else clean_env()), "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return out.stdout.strip()
