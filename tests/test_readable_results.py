"""Results read as a person reads them: one-line reprs and escaped ``_repr_html_``.

The kappa repr is checked against the SAS PROC FREQ printout the agreement tests already cite;
every other result against the rule (one short line, no ``nan``/``None``/field dump, every
label escaped in HTML).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REPO_ROOT

import evalkit
from evalkit import journal as journal_file
from evalkit.display import fmt_estimate, fmt_number, html_summary
from evalkit.record.dimension import Dimension, Method, Status
from evalkit.stats import (
    cohen_kappa,
    corrected_prevalence,
    dawid_skene,
    fleiss_kappa,
    judge_panel,
    krippendorff_alpha,
    plan_prevalence,
    ppi_prevalence,
)
from evalkit.stats.power import kappa_ci_plan

# SAS PROC FREQ "Simple Kappa Coefficient" (statsmodels TestUnweightedCohens, as in
# tests/test_agreement_published.py): Kappa 0.4842, 95% CL 0.2137 0.7547, on 19 items
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
CLS = ["pass", "fail", "cannot-determine"]
HOSTILE = "<script>alert(1)</script>"
# what a field dump or a missing value looks like; none of it may reach a person
DUMP = re.compile(r"\bnan\b|\bNone\b|\w+\(\w+=|array\(|0\.\d{6,}")


def test_cohen_kappa_reads_like_the_issue() -> None:
    res = cohen_kappa(table=SAS_TABLE)
    assert repr(res) == "Cohen's kappa 0.48 [0.21, 0.75], n = 19"
    html = res._repr_html_()
    assert "<strong>Cohen&#x27;s kappa 0.48 [0.21, 0.75], n = 19</strong>" in html
    assert "<td style='text-align:left'>[0.214, 0.755]</td>" in html


def test_degenerate_results_say_why_not_none() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_category = cohen_kappa([[1, 1], [1, 1], [1, 1]])
        two_items = cohen_kappa([[1, 1], [1, 2]])
    assert repr(one_category) == "Cohen's kappa undefined (degenerate data), n = 3"
    assert repr(two_items) == "Cohen's kappa 0.00, n = 2 (too few items for an interval)"
    assert "undefined" in one_category._repr_html_() and "None" not in one_category._repr_html_()


def _results(tmp: Path) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    gold = list(rng.choice(CLS, 150, p=[0.6, 0.3, 0.1]))

    def noisy(acc: float) -> list[Any]:
        return [g if rng.random() < acc else rng.choice(CLS) for g in gold]

    judges = {f"j{i}": noisy(0.8) for i in range(3)}
    table = np.array([judges[j] for j in judges]).T.tolist()
    conf = {c: {d: 0.86 if c == d else 0.07 for d in CLS} for c in CLS}
    panel = judge_panel(judges, gold, n_resamples=100, rng=1)
    record = evalkit.score_session(REPO_ROOT / "evalkit" / "data" / "sample", rubric="rubric-v2")
    journal = tmp / "<img src=x onerror=alert(1)>" / "eval.jsonl"  # its path is shown
    journal.parent.mkdir()
    journal_file.append(journal, record.to_dict())
    with journal.open("a", encoding="utf-8") as fh:
        fh.write(HOSTILE + "\n")  # a skipped line
    return {
        "journal": journal_file.read(journal),
        "cohen": cohen_kappa(gold, judges["j0"]),
        "fleiss": fleiss_kappa(table),
        "krippendorff": krippendorff_alpha(table),
        "per-category": next(iter(fleiss_kappa(table).per_category.values())),
        "bootstrap": cohen_kappa(gold, judges["j0"]).bootstrap(n_resamples=200, rng=1),
        "panel": panel,
        "pair": panel.pairwise[0],
        "majority": panel.majority,
        "dawid-skene": dawid_skene(judges),
        "corrected": corrected_prevalence(
            judges["j1"][:100], (judges["j0"][100:], gold[100:]), n_resamples=100, rng=0
        ),
        "ppi": ppi_prevalence(judges["j1"], judges["j0"][:50], gold[:50]),
        "prevalence-plan": plan_prevalence(
            {"pass": 0.5, "fail": 0.2, "cannot-determine": 0.3}, conf, 0.04, n_target=3000
        ),
        "kappa-plan": kappa_ci_plan(0.6, 0.3, 0.1),
        "record": record,
        "dimension": record.dimensions[1],
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _results(tmp_path_factory.mktemp("results"))


@pytest.mark.parametrize(
    "name",
    [
        "cohen",
        "fleiss",
        "krippendorff",
        "per-category",
        "bootstrap",
        "panel",
        "pair",
        "majority",
        "dawid-skene",
        "corrected",
        "ppi",
        "prevalence-plan",
        "kappa-plan",
        "record",
        "dimension",
        "journal",
    ],
)
def test_every_result_reads_in_one_short_line(results: dict[str, Any], name: str) -> None:
    obj = results[name]
    shown = repr(obj)
    assert "\n" not in shown and len(shown) <= 160, shown
    assert not DUMP.search(shown), shown
    html = obj._repr_html_()
    assert html.startswith("<div><p><strong>") and len(html) < 20_000
    assert not DUMP.search(re.sub(r"<[^>]+>", " ", html)), html


def test_a_record_is_one_line_not_a_dump(results: dict[str, Any]) -> None:
    record = results["record"]
    assert repr(record).startswith(f"EvalRecord {record.session_id} under rubric-v2: ")
    assert len(repr(record)) < 120  # was the whole dataclass dump (2.7k characters)
    html = record._repr_html_()
    for dim in record.dimensions:
        assert dim.id in html


def test_html_escapes_every_label(results: dict[str, Any]) -> None:
    assert "&lt;img src=x onerror=alert(1)&gt;" in results["journal"]._repr_html_()
    assert "<img" not in results["journal"]._repr_html_()
    res = cohen_kappa([HOSTILE, "b", HOSTILE, "b"], [HOSTILE, "b", "b", "b"])
    assert "<script" not in res._repr_html_() and "&lt;script&gt;" in res._repr_html_()

    dim = Dimension("x", Method.DETERMINISTIC, Status.FAIL, HOSTILE)
    assert "<script" not in dim._repr_html_() and HOSTILE in repr(dim)
    assert html_summary(HOSTILE, [(HOSTILE, HOSTILE)]).count("&lt;script&gt;") == 3


def test_number_formatting_never_prints_nan() -> None:
    assert fmt_number(float("nan")) == "undefined" and fmt_number(None) == "undefined"
    assert (
        fmt_number(40) == "40"
        and fmt_number(0.5) == "0.50"
        and fmt_number(0.125, percent=True) == "12.5%"
    )
    assert fmt_estimate(float("nan"), (None, None), 4) == "undefined, n = 4"
    assert fmt_estimate(0.5, (None, None), 1) == "0.500 (n = 1, no CI)"


# ----------------------------------------------------------------------- study outputs


@pytest.fixture(scope="module")
def study_outputs(
    tmp_path_factory: pytest.TempPathFactory, results: dict[str, Any]
) -> dict[str, Any]:
    import pandas as pd
    from repo_layout import SET, make_repo

    from evalkit.analyses import fleet as af
    from evalkit.analyses.calibration import CalibrationStudy
    from evalkit.analyses.prevalence import PrevalenceEstimates
    from evalkit.calibration import calibrate
    from evalkit.gold.sets import load

    repo = make_repo(tmp_path_factory.mktemp("repo"))
    gold = load(repo / "gold" / SET / "v1")
    items = gold.items
    labels = pd.DataFrame({"item_id": list(items["item_id"]), "label": list(items["label"])})
    calibration = calibrate(labels, gold, root=repo, n_resamples=200)  # the copy's own lock
    units = [
        (repo_name, f"s{i}", i < k, True)
        for repo_name, (k, n) in {"a": (3, 20), "b": (9, 30)}.items()
        for i in range(n)
    ]
    rates = af.fire_rates(pd.DataFrame(units, columns=list(af.UNIT_COLUMNS)), n_resamples=200)
    estimates = PrevalenceEstimates(
        classes=tuple(CLS),
        level=0.95,
        naive={c: (0.3, 0.2, 0.4) for c in CLS},
        n_naive=100,
        n_target=100,
        corrected=results["corrected"],
        ppi=results["ppi"],
    )
    return {
        "calibration": calibration,
        "calibration-study": CalibrationStudy(calibration),
        "fleet-rates": rates,
        "pooled": rates.pooled,
        "heterogeneity": rates.heterogeneity,
        "prevalence-estimates": estimates,
    }


@pytest.mark.parametrize(
    "name",
    [
        "calibration",
        "calibration-study",
        "fleet-rates",
        "pooled",
        "heterogeneity",
        "prevalence-estimates",
    ],
)
def test_study_outputs_read_in_one_line(study_outputs: dict[str, Any], name: str) -> None:
    obj = study_outputs[name]
    shown = repr(obj)
    assert "\n" not in shown and len(shown) <= 300, shown
    assert not DUMP.search(shown), shown
    html = obj._repr_html_()
    assert html.startswith("<div><p><strong>") and not DUMP.search(re.sub(r"<[^>]+>", " ", html))


def test_a_graduating_calibration_says_so(study_outputs: dict[str, Any]) -> None:
    shown = repr(study_outputs["calibration"])
    assert shown.startswith("judge ") and "kappa 1.00 [1.00, 1.00]" in shown
    assert shown.endswith("; graduates")
    assert repr(study_outputs["calibration-study"]).endswith("graduates (not registered)")
