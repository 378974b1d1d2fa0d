"""The normal quantiles by scipy.special are scipy.stats.norm's doubles, without its import.

The second implementation is ``scipy.stats.norm`` itself: every level the studies and the
monitor use and a grid of others, bit for bit (``float.hex``), zero's sign included.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm

from evalkit.stats.normal_quantiles import normal_isf, normal_ppf

PROBABILITIES = sorted(
    {0.5, 0.975, 0.025, 0.995, 0.005, 0.95, 0.05, 1e-12, 1 - 1e-12, 0.5 + 1e-17}
    | {float(q) for q in np.linspace(0.0005, 0.9995, 1999)}
    | {float(q) for q in np.geomspace(1e-300, 0.5, 400)}
)


@pytest.mark.parametrize("ours, theirs", [(normal_ppf, norm.ppf), (normal_isf, norm.isf)])
def test_the_quantiles_are_scipy_stats_doubles(ours, theirs) -> None:
    got = [float(ours(q)).hex() for q in PROBABILITIES]
    want = [float(theirs(q)).hex() for q in PROBABILITIES]
    assert got == want
    assert type(ours(0.3)) is type(theirs(0.3))  # numpy's float64, as before


def test_a_wilson_interval_imports_no_scipy_stats() -> None:
    code = (
        "import sys; from evalkit.stats.proportion import wilson_interval; "
        "from evalkit.stats._shares import z_quantile; "
        "wilson_interval(3, 10); z_quantile(0.9); print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
