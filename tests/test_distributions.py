"""The normal and t functions by scipy.special are scipy.stats's doubles, without its import.

The second implementation is ``scipy.stats`` itself: every level the studies and the monitor
use and a grid of others, bit for bit (``float.hex``), zero's sign included.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm, t

from evalkit.stats.distributions import normal_isf, normal_ppf, normal_sf, t_sf

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


# |z| of kappa and mean tests: 0, the grid the quantiles cover, the far tails and infinities
STATISTICS = sorted(
    {0.0, -0.0, 1e-300, 37.5, 40.0, 1e3, float("inf"), float("-inf")}
    | {float(x) for x in np.linspace(-9.0, 9.0, 1801)}
)


def test_the_tail_functions_are_scipy_stats_doubles() -> None:
    assert [float(normal_sf(x)).hex() for x in STATISTICS] == [
        float(norm.sf(x)).hex() for x in STATISTICS
    ]
    for df in (1, 2, 3, 7, 30, 199, 0.5, float("inf")):
        got = [float(t_sf(x, df)).hex() for x in STATISTICS]
        assert got == [float(t.sf(x, df)).hex() for x in STATISTICS], df
    assert np.isnan(t_sf(1.3, 0)) and np.isnan(t.sf(1.3, 0))  # no degrees of freedom: undefined


def test_a_wilson_interval_a_kappa_and_its_plan_import_no_scipy_stats() -> None:
    code = (
        "import sys; from evalkit.stats.proportion import wilson_interval; "
        "from evalkit.stats._shares import z_quantile; "
        "from evalkit.stats import cohen_kappa, kappa_ci_sample_size; "
        "wilson_interval(3, 10); z_quantile(0.9); cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0]); "
        "kappa_ci_sample_size(0.6, 0.3, 0.1); print('scipy.stats' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
