"""The dependency lock: hashed pins for every requirement, installed as locked, and recorded in
every study's results.json (its sha256 and where the environment differs from it)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from toy_notebooks import toy_notebook

from evalkit.provenance import lockfile as lockfile
from evalkit.studies import run as studies

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / lockfile.LOCK_NAME


def test_every_pin_is_exact_and_hashed() -> None:
    text = LOCK.read_text(encoding="utf-8")
    pins = lockfile.read_pins(text)
    assert {"numpy", "pandas", "scipy", "statsmodels", "tqdm", "setuptools", "uv"} <= set(pins)
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])  # after the two header lines
    assert len(blocks) == len(pins)
    for block in blocks:
        assert re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*==\S+ \\\n", block), block[:80]
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), block[:80]


def test_the_lock_satisfies_pyproject() -> None:
    assert lockfile.unsatisfied_requirements(REPO / "pyproject.toml", LOCK) == []
    assert lockfile.main([str(REPO / "pyproject.toml"), str(LOCK)]) == 0


def test_a_requirement_the_lock_lacks_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = text.replace('"tqdm>=4.66",', '"tqdm>=99",\n  "evalkit-no-such-dist>=1",', 1)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text, encoding="utf-8")
    missing = lockfile.unsatisfied_requirements(pyproject, LOCK)
    pinned = lockfile.read_pins(LOCK.read_text(encoding="utf-8"))["tqdm"]
    assert missing == [
        f"tqdm>=99 (the lock pins {pinned})",
        "evalkit-no-such-dist>=1 (not in the lock)",
    ]
    assert lockfile.main([str(pyproject), str(LOCK)]) == 1
    assert "run `make lock`" in capsys.readouterr().err


def test_read_pins_normalizes_names_and_skips_hashes_and_comments() -> None:
    text = (
        "# header\nPyYAML==6.0.2 \\\n    --hash=sha256:" + "a" * 64 + "\n    # via evalkit\n"
        "ruamel.yaml[jinja2]==0.18.6 \\\n    --hash=sha256:" + "b" * 64 + "\n"
    )
    assert lockfile.read_pins(text) == {"pyyaml": "6.0.2", "ruamel-yaml": "0.18.6"}


def test_lock_sha256_is_the_files_hash_or_none() -> None:
    assert lockfile.lock_sha256() == hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert lockfile.lock_path() == LOCK
    assert lockfile.lock_sha256(REPO / "no-such.lock") is None
    assert lockfile.environment_mismatches(REPO / "no-such.lock") is None


def test_this_environment_is_installed_as_locked() -> None:
    # `make install` installs exactly the lock; a difference here means it did not
    assert lockfile.environment_mismatches() == []


def test_mismatches_name_the_package_and_both_versions(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==0.0.1 \\\n    --hash=sha256:00\nevalkit-no-such-dist==1.0\n")
    import numpy

    assert lockfile.environment_mismatches(lock) == [
        "evalkit-no-such-dist: locked 1.0, not installed",
        f"numpy: locked 0.0.1, installed {numpy.__version__}",
    ]


@pytest.mark.notebook
def test_a_study_records_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toy = str(toy_notebook(tmp_path / "toy.ipynb", "seconds: int = 0", "x = seconds"))
    run = studies.run_study(toy, {}, out_dir=tmp_path / "out", no_lock=True)
    assert run.ok, run.error
    assert run.results["lock_sha256"] == hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert run.results["lock_mismatches"] == []
    # an installed wheel carries no lock: null, never a guess
    monkeypatch.setattr(lockfile, "lock_path", lambda: tmp_path / "absent.lock")
    run = studies.run_study(toy, {}, out_dir=tmp_path / "out2", no_lock=True)
    assert run.results["lock_sha256"] is None and run.results["lock_mismatches"] is None
