"""The prevalence study's analyses: the default data as documented, the estimates as the stats
functions give them, the '(no label)' outcome, the undefined cases, and escaped text.

The default data are rebuilt here from their documented recipe (SeedSequence children, the
simulated judge, the strict majority by hand) and passed straight to
``evalkit.stats.corrected_prevalence`` / ``ppi_prevalence``: the study must give exactly those
figures. The design values are the notebook's (the locked ones), read from its parameters cell.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

from evalkit.analyses import prevalence as prev
from evalkit.analyses import prevalence_page as page
from evalkit.errors import EvalkitError
from evalkit.files.labels import ItemLabels
from evalkit.gold.sets import load
from evalkit.simulate import SimulatedModelJudge, simulate_target
from evalkit.stats import corrected_prevalence, ppi_prevalence
from evalkit.studies import run as studies
from tests.conftest import REPO_ROOT

DESIGN = {p.name: p.default for p in studies.declared_parameters("prevalence-study").values()}
GOLD = REPO_ROOT / "gold" / "instruction-adherence" / "v2"
N_RES = 400  # the estimate itself does not depend on the resamples; the intervals are compared
# at the same resamples and seed


def _default(**over: Any) -> prev.PrevalenceData:
    d = {**DESIGN, **over}
    return prev.load_data(n_target=d["n_target"], true_shares=d["true_shares"],
                          repeats=d["repeats"], n_human=d["n_human"], seed=d["seed"])  # fmt: skip


@pytest.fixture(scope="module")
def default() -> tuple[prev.PrevalenceData, prev.PrevalenceEstimates]:
    data = _default()
    return data, prev.estimate(data, level=DESIGN["level"], n_resamples=N_RES, seed=DESIGN["seed"])


def _majority(calls: Any) -> dict[str, str | None]:
    """Strict majority of the ok calls, by hand; a tie or no ok call is None."""
    out: dict[str, str | None] = {}
    for item, grp in calls.groupby("item_id", sort=False):
        top = Counter(grp.loc[grp["outcome"] == "ok", "label"]).most_common()
        out[str(item)] = None if not top or (len(top) > 1 and top[0][1] == top[1][1]) else top[0][0]
    return out


@pytest.mark.slow
def test_the_default_data_follow_their_recipe_and_the_estimates_are_the_stats_functions(
    default: tuple[prev.PrevalenceData, prev.PrevalenceEstimates],
) -> None:
    data, est = default
    seed, k = DESIGN["seed"], DESIGN["repeats"]
    g_gold, g_target, g_judge, g_human = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)
    )
    gold = load(GOLD)
    judge = SimulatedModelJudge()
    on_gold = _majority(judge.label(list(gold.items["label"]), list(gold.items["item_id"]),
                                    repeats=k, rng=g_gold))  # fmt: skip
    target = simulate_target(DESIGN["n_target"], DESIGN["true_shares"], rng=g_target)
    on_target = _majority(judge.label(list(target["truth"]), list(target["item_id"]),
                                      repeats=k, rng=g_judge))  # fmt: skip
    pick = np.sort(g_human.choice(len(target), size=DESIGN["n_human"], replace=False))

    def outcome(label: str | None) -> str:
        return "(no label)" if label is None else label

    t_labels = [outcome(on_target[i]) for i in target["item_id"]]
    pair = ([outcome(on_gold[i]) for i in gold.items["item_id"]], list(gold.items["label"]))
    direct = corrected_prevalence(t_labels, pair, level=DESIGN["level"], n_resamples=N_RES,
                                  rng=seed)  # fmt: skip
    assert est.corrected.to_dict() == direct.to_dict()
    humans = [target["truth"][i] for i in pick]
    judged = [t_labels[i] for i in pick]
    classes = ("pass", "fail", "cannot-determine", "(no label)")
    ppi = ppi_prevalence(t_labels, judged, humans, level=DESIGN["level"], classes=classes)
    assert est.ppi.to_dict() == ppi.to_dict()
    # the naive share: the judge's labels among the items it labelled, Wilson intervals
    given = [lab for lab in on_target.values() if lab is not None]
    assert est.n_naive == len(given) < DESIGN["n_target"]
    for c in est.classes:
        assert est.naive[c][0] == pytest.approx(given.count(c) / len(given))
    assert data.truth == DESIGN["true_shares"]
    realised = Counter(target["truth"])
    assert data.realised == {c: realised[c] / len(target) for c in DESIGN["true_shares"]}
    assert data.synthetic and data.gold_tag == "instruction-adherence-v2"


def test_the_data_cards_figures(
    default: tuple[prev.PrevalenceData, prev.PrevalenceEstimates],
) -> None:
    """docs/DATA_CARD.md quotes these figures of the default seed."""
    data, _ = default
    assert data.realised == {"pass": 0.4865, "fail": 0.2165, "cannot-determine": 0.297}
    t, g = data.target, data.gold_judge
    assert (t.n, len(t.ties), len(t.unlabelled)) == (2000, 147, 0)
    assert (g.n, len(g.ties), len(g.unlabelled)) == (199, 16, 0)
    assert len(data.human.item_ids) == 200 == len(set(data.human.item_ids))
    card = (REPO_ROOT / "docs" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert ".4865 /\n  .2165 / .2970" in card and "147 of\n  the 2000 target items" in card


def test_the_known_truth_is_covered_on_the_default_data(
    default: tuple[prev.PrevalenceData, prev.PrevalenceEstimates],
) -> None:
    """The locked default run: the corrected and the PPI++ interval cover the known share of
    every class. (Figures at 400 resamples here; the study's 2000 are in the report.)"""
    data, est = default
    rows = prev.figures(est, data)["estimates"]
    for row in rows:
        assert row["low"] <= row["share"] <= row["high"], row
        if row["estimator"] in ("corrected", "PPI++"):
            assert row["covers_truth"] is True, row
    # the naive cannot-determine share is biased low (the judge calls such items pass more
    # often than it calls other items cannot-determine): its interval misses the truth
    naive_cd = next(
        r for r in rows if r["estimator"] == "naive" and r["class"] == "cannot-determine"
    )
    assert naive_cd["covers_truth"] is False and naive_cd["high"] < 0.30


def test_an_item_without_a_label_is_an_outcome_not_a_dropped_item() -> None:
    """Exact counts: a judge that abstains on 20% of 'fail' items and never otherwise. With the
    abstentions as the outcome '(no label)' the corrected shares are exact; dropping them (what
    a missing label would do) understates 'fail'."""
    truth = {"pass": 0.6, "fail": 0.4}
    rates = {"pass": {"pass": 0.9, "fail": 0.1, None: 0.0},
             "fail": {"pass": 0.1, "fail": 0.7, None: 0.2}}  # fmt: skip
    gold_ids, gold_labels, gold_judge = [], [], []
    for c in truth:
        for lab, p in rates[c].items():
            for _ in range(round(1000 * p)):
                gold_ids.append(f"g{len(gold_ids)}")
                gold_labels.append(c)
                gold_judge.append(lab)
    target: list[str | None] = []
    for lab in ("pass", "fail", None):
        target += [lab] * round(10_000 * sum(truth[c] * rates[c][lab] for c in truth))
    data = prev.PrevalenceData(
        target=ItemLabels("t", "item_id,label", tuple(f"t{i}" for i in range(len(target))),
                          tuple(target)),
        gold_judge=ItemLabels("g", "item_id,label", tuple(gold_ids), tuple(gold_judge)),
        gold_tag="exact", gold_sha256="0" * 64, gold_ids=tuple(gold_ids),
        gold_labels=tuple(gold_labels),
    )  # fmt: skip
    est = prev.estimate(data, n_resamples=200, seed=0)
    assert est.corrected.statistic == pytest.approx(truth, abs=1e-9)
    assert "(no label)" in est.corrected.labels
    dropped = corrected_prevalence(
        [t for t in target if t is not None],
        ([j for j in gold_judge if j is not None], [g for g, j in zip(gold_labels, gold_judge,
                                                                       strict=True) if j is not None]),
        n_resamples=200, rng=0,
    )  # fmt: skip
    assert dropped.statistic["fail"] < truth["fail"] - 0.04  # 0.4 * 0.8 / 0.92 share of fail


def _data(target: list[str | None], gold_judge: list[str | None], gold: list[str],
          human: list[str | None] | None = None, judge: str | None = None) -> prev.PrevalenceData:  # fmt: skip
    ids = tuple(f"g{i}" for i in range(len(gold)))
    t_ids = tuple(f"t{i}" for i in range(len(target)))
    h = None
    if human is not None:
        h = ItemLabels("h", "item_id,label", t_ids[: len(human)], tuple(human))
    return prev.PrevalenceData(
        target=ItemLabels("t", "long", t_ids, tuple(target), judge=judge),
        gold_judge=ItemLabels("g", "long", ids, tuple(gold_judge), judge=judge),
        gold_tag="tiny", gold_sha256="0" * 64, gold_ids=ids, gold_labels=tuple(gold),
        human=h,
    )  # fmt: skip


def test_an_uninformative_judge_is_undefined_with_its_reason_and_the_page_says_why() -> None:
    gold = ["pass"] * 20 + ["fail"] * 20
    coin = ["pass", "fail"] * 20  # half of each class called pass: Youden's J = 0
    data = _data(["pass"] * 30 + ["fail"] * 10, coin, gold, human=["pass", "fail"] * 10)
    est = prev.estimate(data, n_resamples=200, seed=0)
    assert not est.corrected.defined and "uninformative" in est.corrected.reason
    fig = prev.figures(est, data)
    corrected = [r for r in fig["estimates"] if r["estimator"] == "corrected"]
    assert all(r["share"] is None and r["reason"] == est.corrected.reason for r in corrected)
    assert est.ppi.defined  # PPI++ needs no informative judge
    text = page.undefined_text(est)
    assert "Corrected shares undefined" in text and "uninformative" in text
    assert any("undefined" in n for n in est.notes)
    frame = page.estimates_frame(est, data)
    assert (frame.filter(like="corrected") == "undefined (see below)").all().all()
    page.plot_estimates(est, data)  # an undefined row is drawn as text, not a crash
    json.dumps(fig, allow_nan=False)


def test_one_gold_class_and_a_single_human_label_are_undefined_never_nan() -> None:
    data = _data(["pass"] * 10, ["pass"] * 10, ["pass"] * 10, human=["pass"])
    est = prev.estimate(data, n_resamples=200, seed=0)
    assert not est.corrected.defined and "single class" in est.corrected.reason
    assert not est.ppi.defined and "1 human-labelled item" in est.ppi.reason
    text = json.dumps(prev.figures(est, data), allow_nan=False)
    assert "NaN" not in text and "nan" not in re.sub(r'"[^"]*"', "", text)


def test_a_class_only_humans_gave_has_no_corrected_share_and_the_page_says_why() -> None:
    data = _data(["pass", "fail"] * 10, ["pass", "fail"] * 10, ["pass", "fail"] * 10,
                 human=["pass", "fail", "unsure", "pass"] * 3)  # fmt: skip
    est = prev.estimate(data, n_resamples=200, seed=0)
    assert est.classes == ("pass", "fail", "unsure") and est.corrected.defined
    rows = {(r["class"], r["estimator"]): r for r in est.rows()}
    assert rows[("unsure", "corrected")]["share"] is None
    assert rows[("unsure", "PPI++")]["share"] == pytest.approx(0.25)  # no judge help: lambda 0
    assert "Humans gave `unsure`, which no gold item has" in page.undefined_text(est)


def test_no_label_on_the_target_never_seen_on_gold_is_undefined() -> None:
    data = _data(["pass", None, "fail"] * 5, ["pass", "fail"] * 10, ["pass", "fail"] * 10)
    est = prev.estimate(data, n_resamples=200, seed=0)
    assert not est.corrected.defined and "'(no label)'" in est.corrected.reason


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"n_human": 3000}, r"n_human \(3000\) cannot exceed n_target"),
        ({"true_shares": {"pass": "half"}}, "true_shares must map"),
        ({"true_shares": {"maybe": 1.0}}, "true_shares must map"),
        ({"n_target": 1}, "n_target must be an int >= 2"),
    ],
)
def test_bad_default_design_values_are_named(over: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        _default(**over)


def test_label_paths_come_both_or_neither(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("item_id,label\na,pass\n", encoding="utf-8")
    with pytest.raises(EvalkitError, match="give both target_labels_path and gold_labels_path"):
        prev.load_data(str(path))


def test_items_outside_the_target_or_the_gold_set_are_refused() -> None:
    data = _data(["pass", "fail"], ["pass", "fail"], ["pass", "fail"])
    stranger = ItemLabels("humans.csv", "item_id,label", ("t0", "nobody"), ("pass", "fail"))
    with pytest.raises(
        EvalkitError, match=r"humans\.csv: item 'nobody' is not an item of the target"
    ):
        prev.human_pairs(data.target, stranger)
    outsider = ItemLabels("gold.csv", "item_id,label", ("g0", "x"), ("pass", "fail"))
    with pytest.raises(EvalkitError, match=r"gold\.csv: item 'x' is not in the gold set tiny"):
        prev.gold_pair(outsider, data.gold_ids, data.gold_labels, "tiny")
    reserved = _data(["(no label)", "pass"], ["pass", "fail"], ["pass", "fail"])
    with pytest.raises(EvalkitError, match="reserved"):
        prev.estimate(reserved, n_resamples=200)


def test_a_gold_item_absent_from_the_judges_labels_is_missing_not_an_outcome() -> None:
    gold = load(GOLD)
    ids = list(gold.items["item_id"])
    judged = ItemLabels("g", "item_id,label", tuple(ids[5:]), tuple(gold.items["label"][5:]))
    judge, truth = prev.gold_pair(judged, ids, list(gold.items["label"]), gold.tag)
    assert judge[:5] == [None] * 5 and judge[5:] == truth[5:]


HOSTILE = "<script>alert('x')</script> `` ` [l](javascript:alert(1))"


def test_untrusted_names_and_labels_are_escaped_on_the_page() -> None:
    gold = ["pass", HOSTILE] * 10
    data = _data([HOSTILE, "pass", "other <b>"] * 4, gold, gold,
                 human=[HOSTILE, "pass"] * 3, judge=f"judge {HOSTILE}")  # fmt: skip
    est = prev.estimate(data, n_resamples=200, seed=0)
    texts = [page.data_text(data), page.undefined_text(est), page.truth_text(est, data),
             page.assumption_text(est, data)]  # fmt: skip
    import mistune  # the Markdown renderer nbconvert uses

    for text in texts:
        html = mistune.html(text)
        assert "<script" not in html and "<b>" not in html and 'href="javascript' not in html
    assert "judge &lt;script&gt;alert" in mistune.html(texts[0])  # the judge name, as text
    assert "other &lt;b&gt;" in mistune.html(texts[1])  # a judge label beyond the classes
    html = page.estimates_frame(est, data).to_html() + page.confusion_frame(est).to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html
    page.plot_estimates(est, data)  # $, backticks and brackets are drawn literally
