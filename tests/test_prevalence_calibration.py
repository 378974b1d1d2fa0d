"""A calibration result feeds corrected prevalence: ``corrected_prevalence(target, calibrate(...))``.

``CalibrationResult.paired_labels()`` gives the judge's and the gold label of every gold item,
aligned (None where the judge gave none); the estimate from a calibration must be the estimate
from that pair, figure for figure. The certificate a calibration mints is unchanged by it.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from repo_layout import SET, make_repo

import evalkit.calibration as calibration
import evalkit.stats as stats
from evalkit.calibration import calibrate, certificate_bytes
from evalkit.errors import EvalkitError
from evalkit.gold.sets import load
from evalkit.simulate import SimulatedModelJudge, simulate_target

N_RES = 300


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory):
    return load(make_repo(tmp_path_factory.mktemp("repo")) / "gold" / SET / "v1")


@pytest.fixture(autouse=True)
def _no_lock_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_PREREG_LOCK", raising=False)


def _judge_on_gold(gold, *, drop: int = 0, seed: int = 1) -> pd.DataFrame:
    """The simulated judge's label of each gold item (one call), the first ``drop`` items left
    out of the frame and the next ``drop`` given as None."""
    truth = list(gold.items["label"])
    ids = list(gold.items["item_id"])
    long = SimulatedModelJudge(parse_failure_rate=0.0).label(truth, ids, repeats=1, rng=seed)
    frame = long[["item_id", "label"]].copy()
    frame.loc[drop : 2 * drop - 1, "label"] = None
    return frame.iloc[drop:].reset_index(drop=True)


def _target(seed: int = 2) -> list[str | None]:
    target = simulate_target(400, {"pass": 0.5, "fail": 0.3, "cannot-determine": 0.2}, rng=seed)
    judged = SimulatedModelJudge(parse_failure_rate=0.0).label(
        list(target["truth"]), list(target["item_id"]), repeats=1, rng=seed + 1
    )
    return list(judged["label"])


def test_the_functions_are_exported_from_calibration_too() -> None:
    assert calibration.corrected_prevalence is stats.corrected_prevalence
    assert calibration.ppi_prevalence is stats.ppi_prevalence
    assert {"corrected_prevalence", "ppi_prevalence"} <= set(calibration.__all__)
    assert {"corrected_prevalence", "ppi_prevalence"} <= set(dir(calibration))


def test_paired_labels_cover_every_gold_item_aligned(gold) -> None:
    frame = _judge_on_gold(gold, drop=4)
    res = calibrate(frame, gold, n_resamples=N_RES, root=gold.path.parents[2])
    judge, truth = res.paired_labels()
    by_id = dict(zip(gold.items["item_id"], gold.items["label"], strict=True))
    ids = sorted(by_id)
    assert len(judge) == len(truth) == gold.n_items == len(ids)
    assert truth == [by_id[i] for i in ids]
    given = {
        i: None if pd.isna(v) else v for i, v in zip(frame["item_id"], frame["label"], strict=True)
    }
    assert judge == [given.get(i) for i in ids]
    # the 4 items absent from the frame and the 4 given as None are missing, never guessed
    assert sum(j is None for j in judge) == 8 == res.n_missing


def test_corrected_prevalence_from_a_calibration_equals_the_pair_form(gold) -> None:
    frame = _judge_on_gold(gold, drop=3)
    res = calibrate(frame, gold, n_resamples=N_RES, root=gold.path.parents[2])
    target = _target()
    from_result = stats.corrected_prevalence(target, res, n_resamples=500, rng=7)
    from_pair = stats.corrected_prevalence(target, res.paired_labels(), n_resamples=500, rng=7)
    assert from_result.defined, from_result.reason
    assert from_result.to_dict() == from_pair.to_dict()
    assert from_result.confidence_interval() == from_pair.confidence_interval()
    # the pair built by hand from the frame and the gold set gives the same again
    by_id = {
        i: None if pd.isna(v) else v for i, v in zip(frame["item_id"], frame["label"], strict=True)
    }
    ids = list(gold.items["item_id"])
    by_hand = ([by_id.get(i) for i in ids], list(gold.items["label"]))
    again = stats.corrected_prevalence(target, by_hand, n_resamples=500, rng=7)
    assert again.statistic == pytest.approx(from_result.statistic, abs=1e-12)
    assert from_result.n_gold == gold.n_items - 6 and from_result.n_gold_missing == 6
    assert from_result.n == len(target)


def test_the_certificate_does_not_carry_the_gold_labels(gold) -> None:
    truth = list(gold.items["label"])
    perfect = pd.DataFrame({"item_id": gold.items["item_id"], "label": truth})
    res = calibrate(perfect, gold, n_resamples=N_RES, root=gold.path.parents[2])
    assert res.mintable and res.graduates
    cert = json.loads(certificate_bytes(res))
    # what a certificate claims, and no more (issue 24 #13: no malleable evalkit_version)
    assert set(cert) == {"kind", "schema", "gold", "decision_rule", "labels", "judge",
                         "result", "statement"}  # fmt: skip
    assert "gold_labels" not in json.dumps(cert)
    assert res.to_dict() == json.loads(json.dumps(res.to_dict()))  # still JSON-simple


def test_a_result_without_gold_labels_says_so(gold) -> None:
    truth = list(gold.items["label"])
    perfect = pd.DataFrame({"item_id": gold.items["item_id"], "label": truth})
    res = calibrate(perfect, gold, n_resamples=N_RES, root=gold.path.parents[2])
    with pytest.raises(EvalkitError, match="no gold labels"):
        dataclasses.replace(res, gold_labels=()).paired_labels()


def test_a_perfect_judge_corrects_nothing(gold) -> None:
    truth = list(gold.items["label"])
    perfect = pd.DataFrame({"item_id": gold.items["item_id"], "label": truth})
    res = calibrate(perfect, gold, n_resamples=N_RES, root=gold.path.parents[2])
    target = ["pass"] * 30 + ["fail"] * 50 + ["cannot-determine"] * 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = stats.corrected_prevalence(target, res, n_resamples=200, rng=0)
    assert est.statistic == pytest.approx({"pass": 0.3, "fail": 0.5, "cannot-determine": 0.2})
    assert np.allclose(list(est.naive.values()), [0.3, 0.5, 0.2])
