"""The study runner: parameter validation, execution, offline HTML, results.json, the CLI.

Tests marked ``notebook`` start a Jupyter kernel (a few seconds each); the browser test needs
headless Chromium (skipped without it unless CI=true).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.prereg.study_params import type_ok
from evalkit.studies import run as studies
from tests.browser import DevTools, assert_inert, chromium, open_page
from tests.by_hand import execute_by_hand
from tests.toy_notebooks import toy_notebook

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
IN_CI = os.environ.get("CI", "").lower() == "true"
EXTERNAL_REF = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def _no_kernel(*_args: Any, **_kwargs: Any) -> None:
    raise AssertionError("a kernel was started although the parameters were invalid")


def assert_offline(html: str) -> None:
    """No external src/href, no script tag loading anything, images embedded as base64 PNG."""
    assert not EXTERNAL_REF.search(html)
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"<script[^>]+src=", html)
    scripts = " ".join(re.findall(r"<script[^>]*>.*?</script>", html, re.DOTALL)).lower()
    assert "mathjax" not in scripts and "require" not in scripts  # no loader, no CDN config
    assert "cdnjs" not in html and "MathJax.js" not in html and "require.min.js" not in html
    for src in re.findall(r"<img[^>]+src=\"([^\"]+)\"", html):
        assert src.startswith("data:image/png;base64,")


# ------------------------------------------------------------------------ the notebooks


@pytest.mark.parametrize("name", studies.STUDIES)
def test_notebooks_are_committed_clean(name: str) -> None:
    import nbformat  # deferred: seconds to import (jsonschema)

    nb = nbformat.read(str(NOTEBOOKS / f"{name}.ipynb"), as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            tags = set(cell.metadata.get("tags", []))
            assert tags & {"hide-input", "parameters"}  # no code in the HTML
    assert [c["id"] for c in nb.cells] == [f"{name}-{i:02d}" for i in range(len(nb.cells))]


@pytest.mark.parametrize("name", studies.STUDIES)
def test_declared_parameters_are_json_simple(name: str) -> None:
    params = studies.declared_parameters(name)
    assert params
    for p in params.values():
        assert p.type in {"str", "int", "float", "bool", "list", "dict", "list | str"}
        json.dumps(p.default)
        assert type_ok(p.default, p.type)


def test_the_threshold_study_declares_what_the_issue_names() -> None:
    params = studies.declared_parameters("threshold-study")
    assert params["fact"].default == "guard_blocked"
    assert params["metrics_dir"].default == ""  # "" = build the preset
    assert params["thresholds"].default == [1, 3, 6, 20]


# ------------------------------------------------------------------------ validation


def test_unknown_study_lists_the_known_ones() -> None:
    with pytest.raises(EvalkitError, match="known studies: rubric-replay, threshold-study"):
        studies.run_study("no-such-study")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"facts": "guard_blocked"}, r"unknown parameter 'facts'; accepted: metrics_dir \(str\)"),
        ({"n_resamples": "100"}, r"'n_resamples' expects int, got str '100'"),
        ({"n_resamples": True}, r"'n_resamples' expects int, got bool"),
        ({"thresholds": 3}, r"'thresholds' expects list"),
        ({"ceiling": "0.1"}, r"'ceiling' expects float"),
    ],
)
def test_bad_parameters_fail_before_any_kernel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, params: dict, message: str
) -> None:
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", _no_kernel)
    with pytest.raises(EvalkitError, match=message):
        studies.run_study("threshold-study", params, out_dir=tmp_path)
    assert not (tmp_path / "results.json").exists()


def test_cli_parameter_conversion_and_its_errors() -> None:
    assert studies.coerce_cli_value("threshold-study", "n_resamples", "50") == 50
    assert studies.coerce_cli_value("threshold-study", "ceiling", "0.2") == 0.2
    assert studies.coerce_cli_value("threshold-study", "thresholds", "[2, 4]") == [2, 4]
    assert studies.coerce_cli_value("threshold-study", "v1_prose_fallback", "false") is False
    with pytest.raises(EvalkitError, match="expects int, got 'many'"):
        studies.coerce_cli_value("threshold-study", "n_resamples", "many")
    with pytest.raises(EvalkitError, match="expects list"):
        studies.coerce_cli_value("threshold-study", "thresholds", '{"a": 1}')


def test_cli_reports_parameter_errors_with_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", _no_kernel)
    rc = main(["study", "run", "threshold-study", "-p", "n_resamples", "lots"])
    assert rc == 1
    assert "expects int" in capsys.readouterr().err
    params = tmp_path / "p.yaml"
    params.write_text("bogus: 1\n", encoding="utf-8")
    assert main(["study", "run", "threshold-study", "-f", str(params)]) == 1
    assert "unknown parameter 'bogus'" in capsys.readouterr().err


def test_study_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "list", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["name"] for r in rows] == list(studies.STUDIES)
    assert all(r["exists"] and r["parameters"] for r in rows)


# ------------------------------------------------------------------------ execution


def _toy_notebook(directory: Path, body: str) -> None:
    """A one-study notebook folder (registered name ``rubric-replay``) for runner edge cases."""
    toy_notebook(directory / "rubric-replay.ipynb", "seconds: int = 0", body)


@pytest.mark.notebook
def test_a_timeout_is_a_failed_study_with_a_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _toy_notebook(tmp_path / "nb", "import time\ntime.sleep(seconds)\nprint('slept')")
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(tmp_path / "nb"))
    run = studies.run_study(
        "rubric-replay", {"seconds": 30}, out_dir=tmp_path / "out", timeout=2, no_lock=True
    )
    assert run.status == "failed" and not run.ok
    assert "timeout" in (run.error or "")
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["status"] == "failed" and results["parameters"] == {"seconds": 30}
    html = run.html.read_text(encoding="utf-8")
    assert "Study failed" in html and "timeout" in html
    assert "slept" not in html


@pytest.mark.notebook
def test_a_warning_reaches_the_page_as_a_sentence_never_raw(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    body = (
        "import warnings\n"
        "from evalkit import analyses\n"
        "from evalkit.errors import DegenerateDataWarning\n"
        "analyses.configure_display()\n"
        "warnings.warn('threshold_study: no known count: every rate is undefined (NaN)',\n"
        "              DegenerateDataWarning)\n"
    )
    _toy_notebook(tmp_path / "nb", body)
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(tmp_path / "nb"))
    run = studies.run_study("rubric-replay", {}, out_dir=tmp_path / "out", no_lock=True)
    html = run.html.read_text(encoding="utf-8")
    assert run.ok and "Note on the data:" in html
    assert "No known count: every rate is undefined." in html
    for raw in ("DegenerateDataWarning", "threshold_study:", "NaN", ".py:", "warnings.warn"):
        assert raw not in html, raw


@pytest.mark.notebook
def test_a_failing_cell_gives_the_page_with_the_error_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a directory that exists but holds no journal: the kernel runs and its cell fails (a path
    # that names nothing is refused before any kernel: tests/test_fast_failures.py)
    no_journal = tmp_path / "no-journal"
    no_journal.mkdir()
    rc = main(
        ["study", "run", "threshold-study", "-p", "metrics_dir", str(no_journal),
         "--out", str(tmp_path / "out")]
    )  # fmt: skip
    assert rc == 1
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["status"] == "failed"
    assert "EvalkitError" in results["error"] and "no journal at" in results["error"]
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "no journal at" in html and "EvalkitError" in html  # the error is visible
    assert "failed" in capsys.readouterr().err
    assert_offline(html)


# The suite runs the studies with fewer resamples than their pre-registered design: a stated
# deviation, which the pages and results.json then show (tests/test_study_lock.py checks that).
FEWER_RESAMPLES = "test suite: fewer bootstrap resamples than pre-registered, to keep it fast"


@pytest.fixture(scope="module")
def threshold_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    out = tmp_path_factory.mktemp("threshold")
    return studies.run_study(
        "threshold-study", {"n_resamples": 200}, out_dir=out / "a", deviation=FEWER_RESAMPLES
    )


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    from evalkit.simulate import simulate_metrics_dir

    tmp = tmp_path_factory.mktemp("replay")
    ledger = simulate_metrics_dir(tmp / "m", n_sessions=5, seed=3)
    return studies.run_study(
        "rubric-replay", {"metrics_dir": str(ledger.metrics_dir)}, out_dir=tmp / "out"
    )


@pytest.fixture(scope="module")
def agreement_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    out = tmp_path_factory.mktemp("agreement")
    return studies.run_study(
        "agreement-study",
        {"n_items": 12, "n_resamples": 50, "seed": 2},
        out_dir=out,
        deviation=FEWER_RESAMPLES,
    )


@pytest.fixture(scope="module")
def calibration_run(tmp_path_factory: pytest.TempPathFactory) -> studies.StudyRun:
    out = tmp_path_factory.mktemp("calibration")
    return studies.run_study(
        "judge-calibration", {"n_resamples": 200}, out_dir=out, deviation=FEWER_RESAMPLES
    )


@pytest.mark.notebook
def test_threshold_study_publishes_the_seed_figures(threshold_run: studies.StudyRun) -> None:
    res = json.loads(threshold_run.results_path.read_text(encoding="utf-8"))
    assert res["study"] == "threshold-study" and res["status"] == "ok", res.get("error")
    # rubric-v2 seed, "Änderungen gegenüber v1" and rule 2's justification (2026-09-19)
    assert res["published_table"] == {
        "records": 40,
        "sessions": 38,
        "v1_fail_records": 32,
        "v1_fail_sessions": 30,
    }
    cf = {row["threshold"]: row for row in res["counterfactual"]}
    assert set(cf) == {1, 3, 6, 20}
    assert all(
        set(row) == {"threshold", "records_firing", "sessions_failing"} for row in cf.values()
    )
    assert cf[3]["sessions_failing"] == 23
    assert cf[6]["sessions_failing"] == 9
    assert cf[20]["records_firing"] == 2
    assert cf[20]["records_firing"] / res["published_table"]["records"] == 0.05
    assert res["distribution_bins"] == {"0": 8, "1": 3, "2": 5, "3-5": 14, "6+": 10}
    assert res["maximum"] == 58
    assert {"after": 13, "before": 33} in [
        {k: g[k] for k in ("after", "before")} for g in res["gaps"]
    ]
    assert res["parameters"]["n_resamples"] == 200
    assert res["versions"]["papermill"] and res["versions"]["nbconvert"]
    assert res["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", res["git_commit"])
    html = threshold_run.html.read_text(encoding="utf-8")
    assert_offline(html)
    assert "data:image/png;base64," in html
    assert "Traceback" not in html and 'class="output_error' not in html
    assert 'class="input_area' not in html and "th.fact_table(" not in html  # code is hidden


@pytest.mark.notebook
def test_the_page_states_the_pre_registration_once(threshold_run: studies.StudyRun) -> None:
    import nbformat  # deferred: seconds to import (jsonschema)

    from evalkit.studies.by_hand import CELL_TAG

    html = threshold_run.html.read_text(encoding="utf-8")
    # the runner's banner, with the stated reason; the notebook's own check is dropped
    assert html.count("Deviation from the pre-registration") == 1 and FEWER_RESAMPLES in html
    assert "No reason was given" not in html
    nb = nbformat.read(str(threshold_run.out_dir / "threshold-study.ipynb"), as_version=4)
    check = [c for c in nb.cells if CELL_TAG in c.metadata.get("tags", [])]
    assert len(check) == 1 and check[0].outputs == []


@pytest.mark.notebook
def test_a_rerun_diffs_cleanly(
    threshold_run: studies.StudyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the checkout is shared: a commit landing between the two runs changes an input the runner
    # records, so the rerun sees the git state the first run saw
    import nbformat  # deferred: seconds to import (jsonschema)

    first = threshold_run.results
    monkeypatch.setattr(studies, "_git_commit", lambda: first["git_commit"])
    monkeypatch.setattr(studies, "_git_dirty", lambda: first["git_dirty"])
    monkeypatch.setattr(studies, "_git_dirty_paths", lambda: first["git_dirty_paths"])
    again = studies.run_study(
        "threshold-study", {"n_resamples": 200}, out_dir=tmp_path, deviation=FEWER_RESAMPLES
    )
    assert again.html.read_bytes() == threshold_run.html.read_bytes()
    assert again.results_path.read_bytes() == threshold_run.results_path.read_bytes()
    nb = nbformat.read(str(tmp_path / "threshold-study.ipynb"), as_version=4)
    assert "papermill" not in nb.metadata
    assert all("execution" not in c.metadata for c in nb.cells)


@pytest.mark.notebook
def test_rubric_replay_on_a_small_ledger(replay_run: studies.StudyRun) -> None:
    run = replay_run
    res = run.results
    assert res["status"] == "ok", res.get("error")
    assert res["sessions"]["rubric-v1"] >= 5 and res["sessions"]["rubric-v2"] >= 5
    rates = [
        r for r in res["rates"] if r["rubric"] == "rubric-v2" and r["dimension"] == "guard-friction"
    ]
    assert {r["status"]: r["k"] for r in rates}["not-applicable"] == rates[0]["n"]
    changed = {(c["dimension"], c["rubric-v1"], c["rubric-v2"]) for c in res["changed"]}
    assert ("guard-friction", "(absent)", "not-applicable") in changed
    assert all(r["n"] == res["sessions"][r["rubric"]] for r in res["rates"])
    # the journal was written right after each session; replaying it today is compared
    assert isinstance(res["journal_vs_replay"], list)
    assert all(r["rubric"] == "rubric-v1" for r in res["journal_vs_replay"])
    assert_offline(run.html.read_text(encoding="utf-8"))


@pytest.mark.notebook
def test_agreement_study_says_undefined_never_nan(agreement_run: studies.StudyRun) -> None:
    run = agreement_run
    res = run.results
    assert res["status"] == "ok", res.get("error")
    flat = {r["target"] for r in res["variance_free"] if r["variance_free"]}
    assert flat == {"rq_status"}
    rq = [r for r in res["per_target"] if r["target"] == "rq_status"]
    assert rq and all(r["estimate"] is None and r["note"] == "undefined: no variance" for r in rq)
    defined = [r for r in res["per_target"] if r["estimate"] is not None]
    assert defined and all(r["ci_low"] <= r["estimate"] <= r["ci_high"] for r in defined)
    assert all(r["n_items"] == 12 for r in res["per_target"])
    html = run.html.read_text(encoding="utf-8")
    assert "undefined: no variance" in html
    assert not re.search(r"\bnan\b", html, re.IGNORECASE)
    assert_offline(html)


@pytest.mark.notebook
def test_judge_calibration_against_the_gold_set(calibration_run: studies.StudyRun) -> None:
    run = calibration_run
    res = run.results
    assert res["status"] == "ok", res.get("error")
    # the default model judge is the simulated one (synthetic), K = 5 calls per gold item
    assert res["data"]["synthetic"] is True and res["data"]["repeats"] == [5]
    reps = res["consistency"]
    assert res["calibration"]["n"] == reps["n_items"] == 199
    kappa = res["kappa"]  # on every labelled call
    assert kappa["n"] == reps["calls"]["ok"] == 995 - reps["calls"]["cannot-parse"]
    assert -1 <= kappa["ci"]["low"] <= kappa["statistic"] <= kappa["ci"]["high"] <= 1
    for key in ("kappa_majority", "repeat_kappa", "flip_rate", "failed_calls"):
        e = reps[key]
        assert e["ci"]["low"] <= e["statistic"] <= e["ci"]["high"], key
    assert res["calibration"]["decision_rule"]["path"] == "DECISION_RULE-model-judge.json"
    rule = res["rule_judge"]  # the deterministic rater beside it, on the same gold items
    assert rule["kind"] == "rule" and rule["n"] == 199 and "repeats" not in rule
    # advisory until graduated AND registered (the registry is read, never written, here)
    from evalkit.calibration import repository_calibrations
    from evalkit.record.calibration_status import is_accepted

    ref = res["calibration"]["calibration_ref"]
    registered = res["graduates"] and is_accepted(
        "instruction-adherence", res["calibration_status"], ref, accepted=repository_calibrations()
    )
    assert res["registered"] is registered
    assert res["advisory"] is (not (res["graduates"] and res["registered"]))
    conf = res["calibration"]["confusion"]["counts"]
    assert sum(sum(row.values()) for row in conf.values()) == kappa["n"]
    html = run.html.read_text(encoding="utf-8")
    assert "Disagreements" in html and "Graduation decision" in html
    assert "Synthetic data." in html and "Fleiss κ across repeats" in html
    if res["advisory"]:
        assert html.count("advisory: ") >= 4  # κ, AC1, PABAK and the per-class/per-rule tables
    # the default gold set is the committed one, and the page says so
    assert "the committed gold set gold/instruction-adherence" in html
    assert "built in a temp dir" not in html
    assert_offline(html)


@pytest.mark.notebook
def test_index_over_real_study_results(
    threshold_run: studies.StudyRun,
    replay_run: studies.StudyRun,
    agreement_run: studies.StudyRun,
    calibration_run: studies.StudyRun,
    tmp_path: Path,
) -> None:
    import html as html_lib

    from evalkit.analyses.landing import render_index

    runs = (replay_run, threshold_run, agreement_run, calibration_run)
    for run in runs:
        shutil.copytree(run.out_dir, tmp_path / run.study)
    rows = [{"study": r.study, "status": r.status.value, "error": r.error} for r in runs]
    page = render_index(rows, tmp_path)
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", page))
    # the seed figures, read back from the threshold study's own results.json
    assert re.search(
        r"threshold 20 fires on 2 of 40 records \(5\.0% \[\d+\.\d%, \d+\.\d%\], "
        r"cluster-bootstrap 95% CI\), 2 of 38 sessions fail; n = 40 records / 38 sessions",
        text,
    )
    cal = calibration_run.results
    k = cal["kappa"]
    shown = (
        f"{k['statistic']:.3f} [{k['ci']['low']:.3f}, {k['ci']['high']:.3f}], n = {k['n']} "
        "labelled calls over 199 items"
    )
    assert f"Cohen's κ (judge vs gold) {shown}" in text
    assert "synthetic data, simulated, no model called: K = 5 repeats per item" in text
    assert "Rule judge (deterministic, beside it): Cohen's κ" in text
    assert ("Advisory:" in text) is cal["advisory"]
    assert "κ undefined (labels never vary" in text and "rq_status" in text
    assert "dead-instrument flag" in text
    assert page.count('<span class="badge ok">ok</span>') == 4
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)
    assert_offline(page)
    assert "<script" not in page


@pytest.mark.notebook
@pytest.mark.parametrize("name", ["threshold-study", "judge-calibration"])
def test_notebook_runs_with_its_defaults_from_its_own_folder(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As JupyterLab runs it: cwd = notebooks/, no parameter injected, no runner environment."""
    monkeypatch.delenv(studies.RESULTS_ENV, raising=False)
    monkeypatch.delenv("EVALKIT_NOTEBOOKS", raising=False)
    before = sorted(p.name for p in NOTEBOOKS.iterdir())
    outputs = execute_by_hand(name, tmp_path, cwd=NOTEBOOKS, timeout=120)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    markdown = [o.get("data", {}).get("text/markdown", "") for o in outputs]
    # run by hand with its defaults, the notebook says it is the pre-registered design, first
    assert markdown[0].startswith(f"> **Pre-registered:** entry `{name}`, version ")
    shown = json.dumps(markdown)
    if name == "threshold-study":  # the default data: the preset, built in a temp dir
        assert "**40 records** over **38 sessions**" in shown
    else:  # the default gold set: the committed one
        assert "instruction-adherence-v2" in shown and "n = 199 items" in shown
    assert sorted(p.name for p in NOTEBOOKS.iterdir()) == before  # nothing written beside it


@pytest.mark.notebook
def test_demo_writes_an_index_linking_every_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    # the demo itself is the four notebook tests above in sequence; here a toy notebook per
    # study checks the index and the exit status quickly
    import nbformat  # deferred: seconds to import (jsonschema)

    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    for name in studies.STUDIES:
        nb = nbformat.v4.new_notebook()
        p = nbformat.v4.new_code_cell('metrics_dir: str = ""')
        p.metadata["tags"] = ["parameters"]
        body = "raise RuntimeError('broken on purpose')" if name == "agreement-study" else "1"
        nb.cells = [p, nbformat.v4.new_code_cell(body)]
        nbformat.write(nb, str(nbdir / f"{name}.ipynb"))
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(nbdir))
    from evalkit.prereg.lock import LOCK_ENV, write_lock

    write_lock(tmp_path / "lock.json", tmp_path, kinds=["study"])  # the toy studies' lock
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "lock.json"))
    assert main(["demo", "--out", str(tmp_path / "reports")]) == 1
    index = (tmp_path / "reports" / "index.html").read_text(encoding="utf-8")
    for name in studies.STUDIES:
        assert f'href="{name}/index.html"' in index
        assert (tmp_path / "reports" / name / "index.html").is_file()
        assert (tmp_path / "reports" / name / "results.json").is_file()
    assert index.count(">ok<") == len(studies.STUDIES) - 1 and index.count(">failed<") == 1
    assert_offline(index)
    # the default data stay beside the reports, rebuilt on each run
    assert (tmp_path / "reports" / "_default-data" / "metrics" / "eval.jsonl").is_file()


def test_demo_never_deletes_a_data_folder_it_did_not_write(tmp_path: Path) -> None:
    from evalkit.cli import demo

    foreign = tmp_path / "reports" / "_default-data"
    foreign.mkdir(parents=True)
    (foreign / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(EvalkitError, match="was not written by evalkit demo"):
        demo._fresh_data_dir(tmp_path / "reports")
    assert (foreign / "mine.txt").read_text(encoding="utf-8") == "keep me"
    ours = demo._fresh_data_dir(tmp_path / "other")
    (ours.parent / "stale.txt").write_text("x", encoding="utf-8")
    again = demo._fresh_data_dir(tmp_path / "other")
    assert again == ours and not (ours.parent / "stale.txt").exists()


# ------------------------------------------------------------------------ headless Chromium


@pytest.mark.browser
@pytest.mark.notebook
def test_study_pages_load_offline_in_chromium(
    threshold_run: studies.StudyRun,
    replay_run: studies.StudyRun,
    agreement_run: studies.StudyRun,
    calibration_run: studies.StudyRun,
    tmp_path: Path,
) -> None:
    from evalkit.analyses.landing import render_index

    binary = chromium()
    runs = (threshold_run, replay_run, agreement_run, calibration_run)
    reports = tmp_path / "reports"  # the landing page over the same four runs
    for run in runs:
        shutil.copytree(run.out_dir, reports / run.study)
    rows = [{"study": r.study, "status": r.status.value, "error": r.error} for r in runs]
    (reports / "index.html").write_text(render_index(rows, reports), encoding="utf-8")
    with DevTools(binary, tmp_path / "profile") as tools:
        seen = {run.study: (run, open_page(tools, run.html)) for run in runs}
        index = open_page(tools, reports / "index.html")
    assert index["failed"] == [] and len(index["dom"]["text"]) > 1000
    assert [u for u in index["requests"] if not u.startswith("file://")] == []
    for page, (run, info) in seen.items():
        assert info["failed"] == [], page
        external = [u for u in info["requests"] if not u.startswith(("file://", "data:"))]
        assert external == [], page
        assert info["dom"]["images"] >= 1 and info["dom"]["broken"] == 0, page
        assert info["dom"]["errors"] == 0, page
        assert info["png"][:8] == b"\x89PNG\r\n\x1a\n" and len(info["png"]) > 10_000
        assert_inert(info, page)
        # where the run stands with the pre-registration is stated at the top of each page
        top = info["dom"]["text"][:3000]
        if run.results["preregistration"]["status"] == "deviation":
            assert "Deviation from the pre-registration" in top and FEWER_RESAMPLES in top, page
        else:
            assert "Pre-registered: entry " + run.study in top, page
    assert_inert(index, "index.html")


def test_render_hides_tagged_inputs_only() -> None:
    import nbformat  # deferred: seconds to import (jsonschema)

    nb = nbformat.v4.new_notebook()
    shown = nbformat.v4.new_code_cell("visible_marker = 1")
    hidden = nbformat.v4.new_code_cell("hidden_marker = 2")
    hidden.metadata["tags"] = ["hide-input"]
    hidden.outputs = [nbformat.v4.new_output("stream", name="stdout", text="output stays\n")]
    nb.cells = [shown, hidden]
    html = studies.render_html(nb, title="t")
    assert "visible_marker" in html and 'class="input_area' in html
    assert "hidden_marker" not in html and "output stays" in html
    assert_offline(html)


@pytest.mark.notebook
def test_an_ad_hoc_notebook_path_runs_like_a_study(tmp_path: Path) -> None:
    _toy_notebook(
        tmp_path / "nb",
        "from evalkit import analyses\nanalyses.write_results({'twice': 2 * seconds})",
    )
    path = tmp_path / "nb" / "rubric-replay.ipynb"
    adhoc = path.rename(tmp_path / "nb" / "my-study.ipynb")
    params = studies.declared_parameters(str(adhoc))
    assert params["seconds"]["inferred_type_name"] == "int" and params["seconds"].default == 0
    run = studies.run_study(str(adhoc), {"seconds": 4}, out_dir=tmp_path / "out", no_lock=True)
    assert run.ok and run.exit_code == 0
    assert run.results["study"] == "my-study" and run.results["twice"] == 8
    assert run.results["figure_keys"] == ["twice"]
    with pytest.raises(EvalkitError, match="does not exist"):
        studies.run_study(str(tmp_path / "missing.ipynb"), no_lock=True)


def test_default_gold_path_from_the_package_or_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.analyses import calibration as cal

    committed = (REPO / "gold" / "instruction-adherence").resolve()
    assert cal.default_gold_path().resolve() == committed  # beside the package (a checkout)
    monkeypatch.setattr(cal, "REPO_ROOT", tmp_path / "site-packages")  # as a non-editable install
    monkeypatch.chdir(NOTEBOOKS)  # JupyterLab's cwd
    assert cal.default_gold_path().resolve() == committed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(EvalkitError, match="give gold_path"):
        cal.default_gold_path()


def test_cli_missing_or_unreadable_parameters_file_is_a_user_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """QA: `study run NAME -f missing.yaml` said "I/O error" and exited 2."""
    import papermill

    monkeypatch.setattr(papermill, "execute_notebook", _no_kernel)
    missing = tmp_path / "missing.yaml"
    assert main(["study", "run", "threshold-study", "-f", str(missing)]) == 1
    cap = capsys.readouterr()
    assert f"parameters file '{missing}': no such file" in cap.err
    assert "I/O error" not in cap.err and cap.out == ""
    assert main(["study", "run", "threshold-study", "-f", str(tmp_path)]) == 1
    assert f"parameters file '{tmp_path}': is a directory" in capsys.readouterr().err
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes(b"ceiling: 0.2 # \xe9\n")
    assert main(["study", "run", "threshold-study", "-f", str(latin)]) == 1
    err = capsys.readouterr().err  # the reader names the line and byte of the bad UTF-8
    assert f"parameters file '{latin}': line 1: invalid UTF-8" in err and "UTF-8 text" in err
    assert not (tmp_path / "results.json").exists()


def test_plot_rates_never_draws_a_negative_error_bar() -> None:
    """A Wilson bound lies a rounding error beyond a 0% or 100% rate for n = 7, 9, 12, ...;
    matplotlib refused the negative error bar and the replay study failed."""
    import pandas as pd

    from evalkit.analyses import replay

    scored = pd.DataFrame(
        [
            {"rubric": "rubric-v2", "session_id": f"s{i}", "dimension": d, "status": st}
            for i in range(7)
            for d, st in (("plan-fidelity", "pass"), ("process-safety", "fail"))
        ]
    )
    rates = replay.status_rates(scored)
    never = rates[(rates["status"] == "fail") & (rates["dimension"] == "plan-fidelity")]
    assert float(never["ci_low"].iloc[0]) > 0.0  # 0 of 7, yet the bound is 5.6e-17: the culprit
    replay.plot_rates(rates, "fail", 0.1)  # raised ValueError: 'yerr' must not be negative
