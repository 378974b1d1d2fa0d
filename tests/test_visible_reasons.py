"""Issue 24, finding 12: a reason a reader cannot see is no reason.

``--deviation`` made only of zero-width characters was accepted and the page showed an empty
reason. Now a deviation reason (and a pre-registration amendment's ``--reason``) needs a
letter, digit, punctuation mark or symbol: whitespace, zero-width and other format characters,
control characters, combining marks and the letters drawn blank (Hangul fillers) alone are
refused before any kernel starts or any entry is locked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT

from evalkit.cli.main import main
from evalkit.errors import EvalkitError

INVISIBLE = [
    "\u200b",  # zero width space
    "\u200b\u200c\u200d\u2060\ufeff",  # every zero-width joiner, word joiner, BOM
    " \u00a0\u2003\u3000",  # spaces of every width
    "\u202e\u2066\u200e",  # bidi controls
    "\u0301\u20dd",  # combining marks with nothing to combine with
    "\t\x0b\x7f",  # control characters
    "\u3164\u115f\u1160\uffa0",  # Hangul fillers: letters (Lo) drawn as nothing
    "\u2800\U000e0041\ufe0f",  # the blank Braille pattern, a tag character, a selector
]
VISIBLE = ["a", "\u200bwhy\u200b", "é", "因为", "—", "1", "🙂"]


@pytest.mark.parametrize("reason", INVISIBLE)
def test_an_invisible_deviation_is_refused_before_any_kernel(
    reason: str, kernel_calls: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["study", "run", "threshold-study", "-p", "n_resamples", "60", "--deviation", reason]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 1
    assert "--deviation needs a reason a reader can see" in capsys.readouterr().err
    assert kernel_calls == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("reason", INVISIBLE)
def test_an_invisible_amendment_reason_is_refused_before_anything_is_locked(
    reason: str, tmp_path: Path
) -> None:
    from evalkit.prereg.lock import write_lock

    lock = tmp_path / "lock.json"
    with pytest.raises(EvalkitError, match="--reason needs a reason a reader can see"):
        write_lock(lock, REPO_ROOT, reason=reason)
    assert not lock.exists()


@pytest.mark.parametrize("reason", VISIBLE)
def test_a_visible_reason_states_the_deviation(reason: str) -> None:
    from evalkit.prereg.study_params import notebook_parameters
    from evalkit.studies.lock import check_study

    declared = notebook_parameters(REPO_ROOT / "notebooks" / "threshold-study.ipynb")
    merged = {p.name: p.default for p in declared.values()}
    source = "0" * 64
    status = check_study(
        "threshold-study", declared, {**merged, "n_resamples": 60}, {"n_resamples"}, source,
        deviation=reason,
    )  # fmt: skip
    assert status.status == "deviation" and status.deviation_reason == reason
