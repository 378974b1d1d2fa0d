"""The prevalence study run end to end: papermill with small parameters, results.json equal to the
analyses' own figures, the page in headless Chromium (offline, images, no error cell, nothing
from a label file runs), and its card on the landing page.

The study runs with a smaller design than the pre-registered one: a stated deviation, shown on
the page. The hostile run puts a script tag, an ``<img onerror>``, a backtick run and a
``javascript:`` link into the judge's name, the item ids and one label of the label files.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.analyses import prevalence as prev
from evalkit.analyses.landing import render_index
from evalkit.simulate import SimulatedModelJudge, simulate_target
from evalkit.studies import run as studies
from tests.browser import DevTools, assert_inert, chromium, open_page
from tests.conftest import REPO_ROOT

SMALL = {"n_target": 300, "n_human": 40, "n_resamples": 200, "repeats": 3}
WHY = "test suite: a smaller target and fewer resamples than pre-registered, to keep it fast"
SCRIPT = "<script>alert('script')</script>"
IMG = "<img src=x onerror=\"alert('img')\">"
EVERY = f"{SCRIPT} {IMG} `` ` [x](javascript:alert('md'))"


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    out = tmp_path_factory.mktemp("prevalence")
    return studies.run_study("prevalence-study", SMALL, out_dir=out / "prevalence-study",
                             deviation=WHY)  # fmt: skip


def _hostile_files(root: Path) -> dict[str, str]:
    """The simulated judge's calls, renamed: a hostile judge and hostile target item ids; ten
    target items get a hostile label the judge never gave on gold."""
    from evalkit.gold.sets import load

    gold = load(REPO_ROOT / "gold" / "instruction-adherence" / "v2")
    judge = SimulatedModelJudge(name=f"judge {EVERY}")
    judge.label(list(gold.items["label"]), list(gold.items["item_id"]), repeats=3,
                rng=1).to_csv(root / "gold.csv", index=False)  # fmt: skip
    target = simulate_target(120, {"pass": 0.5, "fail": 0.3, "cannot-determine": 0.2}, rng=2)
    target["item_id"] = [f"{i} {EVERY}" for i in target["item_id"]]
    calls = judge.label(list(target["truth"]), list(target["item_id"]), repeats=3, rng=3)
    odd = calls["item_id"].isin(target["item_id"][:10]) & (calls["outcome"] == "ok")
    calls.loc[odd, "label"] = f"odd {IMG}"
    calls.to_csv(root / "target.csv", index=False)
    human = target.iloc[::4].rename(columns={"truth": "label"})
    human.to_csv(root / "human.csv", index=False)
    return {"target_labels_path": str(root / "target.csv"),
            "gold_labels_path": str(root / "gold.csv"),
            "human_labels_path": str(root / "human.csv")}  # fmt: skip


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    tmp = tmp_path_factory.mktemp("prevalence-hostile")
    params = {**_hostile_files(tmp), "n_resamples": 200}
    return studies.run_study("prevalence-study", params, out_dir=tmp / "out", deviation=WHY)


@pytest.mark.notebook
def test_results_json_holds_the_analyses_figures(small_run: studies.StudyRun) -> None:
    res = json.loads(small_run.results_path.read_text(encoding="utf-8"))
    assert res["status"] == "ok", res.get("error")
    assert res["preregistration"]["status"] == "deviation"
    assert {d["parameter"] for d in res["preregistration"]["deviations"]} == set(SMALL)
    params = res["parameters"]
    data = prev.load_data(n_target=params["n_target"], true_shares=params["true_shares"],
                          repeats=params["repeats"], n_human=params["n_human"],
                          seed=params["seed"])  # fmt: skip
    est = prev.estimate(data, level=params["level"], n_resamples=params["n_resamples"],
                        seed=params["seed"])  # fmt: skip
    want = json.loads(json.dumps(prev.figures(est, data)))
    assert {k: res[k] for k in want} == want
    assert set(want) <= set(res["figure_keys"])
    assert res["synthetic"] is True and res["truth"] == params["true_shares"]
    assert len(res["estimates"]) == 3 * 4  # 3 classes x naive, corrected, PPI++, human only
    assert res["corrected"]["n"] == 300 and res["ppi"]["n"] == 40
    assert res["naive"]["n"] <= 300 and res["target"]["majority_rule"]
    html = small_run.html.read_text(encoding="utf-8")
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", html))
    for needle in ("Synthetic data.", "true share (synthetic)", "hold on the target",
                   "simple random sample", "What this does not show", "(no label)"):  # fmt: skip
        assert needle in text, needle
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)


@pytest.mark.notebook
def test_the_hostile_run_explains_its_undefined_share(hostile_run: studies.StudyRun) -> None:
    res = hostile_run.results
    assert res["status"] == "ok", res.get("error")
    assert res["synthetic"] is False and res["truth"] is None
    reason = res["corrected"]["reason"]
    assert "never gave it on the gold set" in reason and "odd <img" in reason
    assert res["ppi"]["n"] == 30 and res["ppi"]["reason"] is None  # PPI++ needs no gold
    assert res["target"]["judge"] == f"judge {EVERY}"


@pytest.mark.browser
@pytest.mark.notebook
def test_the_pages_load_offline_and_run_nothing(
    small_run: studies.StudyRun, hostile_run: studies.StudyRun, tmp_path: Path
) -> None:
    binary = chromium()
    reports = tmp_path / "reports"
    shutil.copytree(small_run.out_dir, reports / "prevalence-study")
    rows = [{"study": "prevalence-study", "status": "ok", "error": None}]
    (reports / "index.html").write_text(render_index(rows, reports), encoding="utf-8")
    with DevTools(binary, tmp_path / "profile") as tools:
        pages = {
            "small": open_page(tools, reports / "prevalence-study" / "index.html"),
            "hostile": open_page(tools, hostile_run.html),
            "index": open_page(tools, reports / "index.html"),
        }
    for name, info in pages.items():
        assert info["failed"] == [], name
        assert_inert(info, name)  # no script, handler, javascript: link, dialog or request out
    for name in ("small", "hostile"):
        dom = pages[name]["dom"]
        assert dom["images"] >= 1 and dom["broken"] == 0, name  # the plot, embedded
        assert dom["errors"] == 0, name  # no error cell
        assert "Deviation from the pre-registration" in dom["text"][:3000], name
    hostile = pages["hostile"]["dom"]["text"]
    assert f"judge {EVERY}" in hostile  # shown as text, literally
    assert f"odd {IMG}" in hostile and "Corrected shares undefined" in hostile
    folder = str(Path(hostile_run.results["parameters"]["human_labels_path"]).parent)
    assert folder not in hostile  # no machine path on the page
    index = pages["index"]["dom"]["text"]
    assert "share of 'fail': corrected" in index and "known true share 20.0% (synthetic)" in index


def _results(**over: Any) -> dict[str, Any]:
    rows = []
    for c, truth in (("pass", 0.5), ("fail", 0.2), ("cannot-determine", 0.3)):
        for name, n in (("naive", 1853), ("corrected", 2000), ("PPI++", 200), ("human only", 200)):
            rows.append({"class": c, "estimator": name, "share": truth + 0.01, "low": truth - 0.03,
                         "high": truth + 0.04, "n": n, "reason": None})  # fmt: skip
    res = {"study": "prevalence-study", "status": "ok", "error": None, "parameters": {},
           "classes": ["pass", "fail", "cannot-determine"], "level": 0.95, "synthetic": True,
           "truth": {"pass": 0.5, "fail": 0.2, "cannot-determine": 0.3}, "estimates": rows,
           "corrected": {"n_gold": 199, "reason": None}, "ppi": {"reason": None}}  # fmt: skip
    res.update(over)
    return res


def _card(tmp_path: Path, res: dict[str, Any]) -> str:
    d = tmp_path / "prevalence-study"
    d.mkdir(parents=True)
    (d / "results.json").write_text(json.dumps(res), encoding="utf-8")
    page = render_index([{"study": "prevalence-study", "status": "ok", "error": None}], tmp_path)
    section = re.search(r'<section class="study \w+" id="study-prevalence-study">.*?</section>',
                        page, re.S)  # fmt: skip
    assert section is not None
    return html_lib.unescape(re.sub(r"<[^>]+>", "", section.group(0)))


def test_the_landing_card_leads_with_the_fail_share(tmp_path: Path) -> None:
    card = _card(tmp_path, _results())
    assert (
        "share of 'fail': corrected 21.0% [17.0%, 24.0%] (n = 2000 target, 199 gold); naive "
        "21.0% [17.0%, 24.0%] (n = 1853 labelled by the judge); PPI++ 21.0% [17.0%, 24.0%] "
        "(n = 200 human-labelled); known true share 20.0% (synthetic); 95% intervals"
    ) in card
    assert "share of 'pass': corrected 51.0%" in card and "Synthetic data" in card
    assert "hold on the target" in card and "Corrected shares undefined" not in card


def test_the_landing_card_says_when_the_correction_is_undefined(tmp_path: Path) -> None:
    res = _results(synthetic=False, truth=None)
    for row in res["estimates"]:
        if row["estimator"] == "corrected":
            row.update(share=None, low=None, high=None)
    res["corrected"]["reason"] = "the judge is uninformative for class <b>x</b>"
    card = _card(tmp_path, res)
    assert "corrected undefined; naive 21.0%" in card and "known true share" not in card
    assert "Corrected shares undefined: the judge is uninformative for class <b>x</b>." in card
    page = (tmp_path / "prevalence-study" / "results.json").read_text(encoding="utf-8")
    assert "<b>x</b>" in page  # the raw text is in results.json; the card showed it as text
    assert "nan" not in card.lower()
