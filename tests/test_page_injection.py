"""No injection into pages (finding 7 of issue 10): untrusted text is shown, never run.

Study pages rendered untrusted text as HTML: a gold manifest ``name`` with ``<script>`` or
``<img onerror>`` (judge-calibration), a label file's target name that closes a Markdown code
span (agreement-study). Here every text field that reaches a page carries a script tag, an
``<img onerror>``, a run of backticks that closes a code span and a Markdown/HTML
``javascript:`` link: the gold set name and folder, label targets, raters, families and labels,
session ids, a model judge's name (from its labels file), the deviation reason, parameter values and file paths (in the
parameters table, in error messages), a notebook's file name, and a record's evidence. Every
page (the study pages, the landing page, the record report) is opened in headless Chromium:
no script runs, no dialog opens, no handler or ``javascript:`` link exists, and the text is
shown literally.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.analyses.landing import render_index
from evalkit.record.seal import seal_record
from evalkit.studies import run as studies
from evalkit.views.report import write_report
from tests.browser import DevTools, assert_inert, chromium, open_page
from tests.record_factory import make_record
from tests.toy_notebooks import toy_notebook

REPO = Path(__file__).resolve().parents[1]

SCRIPT = "<script>alert('script')</script>"
IMG = "<img src=x onerror=\"alert('img')\">"
CODE = "`` ` <b>closed</b> ``` x"  # closes a code span of one, two or three backticks
LINK = "[click](javascript:alert('md')) <a href=\"javascript:alert('a')\">a</a>"
MATH = "$\\frac{$"  # matplotlib mathtext: a parse error would fail the whole cell
EVERY = f"{SCRIPT} {IMG} {CODE} {LINK}"
WHY = f"deviation {EVERY}"


def _hostile_gold(root: Path) -> Path:
    """A verified copy of the committed gold set whose manifest name (and folder) are hostile."""
    from evalkit.gold.sets import MANIFEST_NAME, _canonical_manifest, _manifest_self_hash

    set_dir = root / f"gold {IMG}"  # a folder name cannot hold "/", the img payload has none
    shutil.copytree(REPO / "gold" / "instruction-adherence" / "v2", set_dir / "v2")
    for rule in (REPO / "gold" / "instruction-adherence").glob("DECISION_RULE*.json"):
        shutil.copy(rule, set_dir)  # the rule judge's and the model judge's
    path = set_dir / "v2" / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["name"] = f"ia {EVERY}"
    manifest["manifest_sha256"] = _manifest_self_hash(manifest)
    path.write_bytes(_canonical_manifest(manifest))
    return set_dir


def _hostile_labels(root: Path) -> Path:
    """A long label table whose targets, raters, families and labels are hostile; the first
    target never varies (so it is named in the 'no variance' sentences too)."""
    import pandas as pd

    rows = []
    for item in range(10):
        for r, rater in enumerate((f"rater {SCRIPT}", f"rater {IMG}", "plain")):
            rows.append({"item_id": f"i{item} {CODE}", "target": f"flat {CODE} {LINK}",
                         "family": f"fam {IMG}", "rater": rater, "label": f"same {SCRIPT}"})  # fmt: skip
            label = f"yes {IMG}" if (item + r) % 3 else f"no {LINK}"
            rows.append({"item_id": f"i{item} {CODE}", "target": f"t {SCRIPT} {MATH}",
                         "family": f"fam {LINK}", "rater": rater, "label": label})  # fmt: skip
    path = root / "labels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _hostile_judge(root: Path) -> Path:
    """Labels of a model judge (two repeats per gold item) whose name is hostile."""
    import pandas as pd

    from evalkit.gold.sets import load

    items = load(REPO / "gold" / "instruction-adherence" / "v2").items
    rows = [{"item_id": i, "repeat": r, "label": lab, "outcome": "ok", "judge": f"judge {EVERY}"}
            for i, lab in zip(items["item_id"], items["label"], strict=True) for r in (0, 1)]  # fmt: skip
    path = root / "judge.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _hostile_ledger(root: Path) -> tuple[Path, str]:
    """A small simulated ledger in which one session id is hostile, in every file."""
    from evalkit.simulate import simulate_metrics_dir

    ledger = simulate_metrics_dir(root / "m", n_sessions=4, seed=11)
    old = ledger.session_ids[0]
    new = f"s {SCRIPT} {IMG}"
    for path in ledger.metrics_dir.iterdir():
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace(old, json.dumps(new)[1:-1]), encoding="utf-8")
    # the journal's records are sealed: re-seal them, as if scored with the hostile id
    journal_file = ledger.metrics_dir / "eval.jsonl"
    lines = journal_file.read_text(encoding="utf-8").splitlines()
    sealed = [json.dumps(seal_record(json.loads(line))) for line in lines if line.strip()]
    journal_file.write_text("".join(f"{line}\n" for line in sealed), encoding="utf-8")
    return ledger.metrics_dir, new


def _adhoc_notebook(root: Path) -> Path:
    show = (
        "from IPython.display import Markdown, display\n"
        "from evalkit.files.escape import markdown_code, markdown_text\n"
        "display(Markdown('Label: ' + markdown_text(label) + ' / ' + markdown_code(label)))"
    )
    return toy_notebook(root / f"study {IMG}.ipynb", 'label: str = ""', show, "# ad hoc")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run every study on hostile inputs, build the landing page and a record report, and open
    them all in Chromium."""
    binary = chromium()
    tmp = tmp_path_factory.mktemp("inject")
    reports = tmp / "reports"
    metrics, session = _hostile_ledger(tmp)
    runs: dict[str, studies.StudyRun] = {}

    def run(key: str, name: str, params: dict[str, Any], **kw: Any) -> None:
        runs[key] = studies.run_study(name, params, out_dir=reports / key, **kw)

    run(
        "calibration",
        "judge-calibration",
        {"gold_path": str(_hostile_gold(tmp)), "n_resamples": 200},
        deviation=WHY,
    )
    run(
        "bad-judge",
        "judge-calibration",
        {"labels_path": str(_hostile_judge(tmp)), "n_resamples": 200},
        deviation=WHY,
    )
    run("agreement", "agreement-study", {"labels_path": str(_hostile_labels(tmp))})
    run(
        "threshold",
        "threshold-study",
        {"metrics_dir": str(metrics), "n_resamples": 100},
        deviation=WHY,
    )
    run("replay", "rubric-replay", {"metrics_dir": str(metrics)})
    # a directory that exists (a path naming nothing is refused before any kernel) but holds
    # no journal: its cell fails and the page quotes the hostile path in the error
    (tmp / f"nowhere {SCRIPT}").mkdir(parents=True)
    run("bad-path", "threshold-study", {"metrics_dir": str(tmp / f"nowhere {SCRIPT}")})
    run("adhoc", str(_adhoc_notebook(tmp)), {"label": EVERY}, no_lock=True)  # fmt: skip
    rows = [{"study": key, "status": r.status.value, "error": r.error} for key, r in runs.items()]
    rows.append({"study": f"javascript:alert('row') {IMG}", "status": "failed", "error": EVERY})
    (reports / "index.html").write_text(render_index(rows, reports), encoding="utf-8")
    record = make_record(session_id=f"s {EVERY}")
    for dim in record["dimensions"]:
        dim["evidence"] = f"evidence {EVERY}"
    report = write_report(record, tmp / "record.html", metrics_dir=f"m {EVERY}")
    files = {key: r.html for key, r in runs.items()}
    files["index"] = reports / "index.html"
    files["record"] = report
    with DevTools(binary, tmp / "profile") as tools:
        opened = {key: open_page(tools, path) for key, path in files.items()}
    return {"runs": runs, "opened": opened, "session": session, "reports": reports}


PAGES = ("calibration", "bad-judge", "agreement", "threshold", "replay", "bad-path", "adhoc",
         "index", "record")  # fmt: skip


@pytest.mark.browser
@pytest.mark.notebook
@pytest.mark.parametrize("page", PAGES)
def test_no_script_runs_and_no_dialog_opens(pages: dict[str, Any], page: str) -> None:
    info = pages["opened"][page]
    assert_inert(info, page)
    assert info["dom"]["broken"] == 0  # every image is an embedded plot: no <img src=x>


@pytest.mark.browser
@pytest.mark.notebook
def test_the_studies_ran_on_the_hostile_inputs(pages: dict[str, Any]) -> None:
    runs = pages["runs"]
    # judge-calibration may refuse to mint a status from a gold name that cannot form one:
    # its page shows the name and the refusal, which is all this test needs of it
    for key in ("agreement", "threshold", "replay", "adhoc", "bad-judge"):
        assert runs[key].ok, (key, runs[key].error)
    assert not runs["bad-path"].ok and "no journal at" in (runs["bad-path"].error or "")


def _text(pages: dict[str, Any], page: str) -> str:
    return str(pages["opened"][page]["dom"]["text"])


@pytest.mark.browser
@pytest.mark.notebook
def test_the_hostile_text_is_shown_literally(pages: dict[str, Any]) -> None:
    cal = _text(pages, "calibration")
    assert f"Gold set ia {EVERY}-v2" in cal  # the manifest name, as text
    assert f"Reason given: {WHY}" in cal  # the deviation banner
    assert IMG in cal  # the folder name, in the note about a gold set outside the repository
    agreement = _text(pages, "agreement")
    assert f"flat {CODE} {LINK}: all 30 labels over 10 items are same {SCRIPT}" in agreement
    for text in (f"t {SCRIPT} {MATH}", f"fam {IMG}", f"yes {IMG}", f"no {LINK}"):
        assert text in agreement, text  # the tables (targets, families, labels seen)
    assert pages["session"] in _text(pages, "threshold")
    # a model judge's name (from its labels) in the tables, the sentences and the headings
    assert _text(pages, "bad-judge").count(f"judge {EVERY}") >= 5
    # error messages quote the value with repr(): its quotes come back escaped, as text
    assert "nowhere <script>alert(" in _text(pages, "bad-path")
    assert f"Label: {EVERY} / {EVERY}" in _text(pages, "adhoc")
    index = _text(pages, "index")
    assert WHY in index and f"javascript:alert('row') {IMG}" in index and EVERY in index
    record = _text(pages, "record")
    assert f"s {EVERY}" in record and f"evidence {EVERY}" in record


@pytest.mark.browser
@pytest.mark.notebook
def test_links_on_the_landing_page_stay_relative(pages: dict[str, Any]) -> None:
    page = (pages["reports"] / "index.html").read_text(encoding="utf-8")
    assert 'href="javascript:' not in page.lower()  # the colon is encoded: a relative path
    assert 'href="javascript%3Aalert%28%27row%27%29%20%3Cimg' in page
