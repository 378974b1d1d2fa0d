"""The demo's landing page (evalkit.analyses.landing): content, offline, escaping, stable bytes.

No kernel starts here: each test writes the results.json files a demo run would leave and
renders the page from them. The real studies' results feed the page in
tests/test_studies.py::test_index_over_real_study_results.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from evalkit.analyses import landing

REPO = Path(__file__).resolve().parents[1]
EXTERNAL = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", re.I)


def assert_self_contained(page: str) -> None:
    """No script, no external or protocol reference, no stylesheet or font fetched."""
    assert "<script" not in page.lower()
    assert not EXTERNAL.search(page)
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page.lower() and "@import" not in page and "url(" not in page
    assert not re.search(r"<[^>]*\bsrc\s*=", page)  # nothing loaded: no image, frame, script
    for href in re.findall(r'href="([^"]*)"', page):
        assert not href.startswith(("/", "file:", "data:", "javascript:")), href


def _base(study: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "study": study,
        "status": "ok",
        "parameters": params,
        "error": None,
        "versions": {"python": "3.11.7", "evalkit": "0.1.0"},
        "git_commit": "a" * 40,
        "git_dirty": False,
    }


def _threshold(out: Path) -> dict[str, Any]:
    res = _base(
        "threshold-study",
        {"metrics_dir": str(out / "_default-data" / "metrics"), "thresholds": [3, 6, 20]},
    )
    rows = [  # t, firing, rate, low, high, status
        (3, 24, 0.6, 0.439, 0.769, "above"),
        (6, 10, 0.25, 0.122, 0.41, "above"),
        (20, 2, 0.05, 0.0, 0.128, "undecided"),
    ]
    res["threshold_study"] = {
        "n_items": 40,
        "n_clusters": 38,
        "n_unknown": 0,
        "ceiling": 0.1,
        "thresholds": [
            {
                "threshold": t,
                "items_firing": k,
                "fire_rate": r,
                "ci_low": lo,
                "ci_high": hi,
                "ceiling_status": st,
            }
            for t, k, r, lo, hi, st in rows
        ],
    }
    res["counterfactual"] = [
        {"threshold": 3, "records_firing": 24, "sessions_failing": 23},
        {"threshold": 6, "records_firing": 10, "sessions_failing": 9},
        {"threshold": 20, "records_firing": 2, "sessions_failing": 2},
    ]
    res["published_table"] = {
        "records": 40,
        "sessions": 38,
        "v1_fail_records": 32,
        "v1_fail_sessions": 30,
    }
    res["fact"] = "guard_blocked"
    return res


def _calibration(*, graduates: bool = True, registered: bool = False) -> dict[str, Any]:
    res = _base("judge-calibration", {"gold_path": "", "judge": "rules"})
    res["kappa"] = {"statistic": 0.8249, "ci": {"low": 0.7568, "high": 0.8866}, "n": 199}
    res["graduates"] = graduates
    res["registered"] = registered
    res["calibration_status"] = "calibrated:instruction-adherence-v2:accf5c81"
    res["calibration"] = {"graduation_reason": "graduates: kappa CI lower bound 0.757 >= 0.6"}
    return res


def _agreement() -> dict[str, Any]:
    res = _base("agreement-study", {"labels_path": "", "n_items": 40})

    def row(target: str, est: float | None, lo: float | None, hi: float | None) -> dict:
        return {"target": target, "coefficient": "Fleiss κ", "estimate": est, "ci_low": lo,
                "ci_high": hi, "n_items": 40, "n_raters": 6}  # fmt: skip

    res["per_target"] = [
        row("changes_verified", 0.259, -0.057, 0.579),
        row("ia_status", 0.191, 0.092, 0.286),
        row("rq_status", float("nan"), None, None),  # a NaN that slipped into results
        row("scope_kept", 0.594, 0.439, 0.698),
        {**row("scope_kept", 0.9, 0.8, 0.95), "coefficient": "Gwet AC1"},  # not κ: not read
    ]
    res["paradox"] = [{"target": "changes_verified", "diagnosis": "paradox: high, low κ"}]
    return res


def _replay() -> dict[str, Any]:
    res = _base("rubric-replay", {"metrics_dir": "", "ceiling": 0.1})
    res["sessions"] = {"rubric-v1": 39, "rubric-v2": 39}
    res["rates"] = [
        {"rubric": "rubric-v1", "dimension": "gate-health", "status": "cannot-determine",
         "k": 32, "n": 39, "rate": 32 / 39, "ci_low": 0.673, "ci_high": 0.91},
        {"rubric": "rubric-v2", "dimension": "process-safety", "status": "fail",
         "k": 0, "n": 39, "rate": 0.0, "ci_low": 0.0, "ci_high": 0.09},
    ]  # fmt: skip
    res["flags"] = [
        {"rubric": "rubric-v1", "dimension": "gate-health", "status": "cannot-determine",
         "flag": "far above ceiling", "detail": "32/39"},
        {"rubric": "rubric-v2", "dimension": "process-safety", "status": "fail",
         "flag": "never fires (0%)", "detail": "0/39"},
    ]  # fmt: skip
    res["changed_count"] = 90
    return res


def _write(out: Path, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for res in results:
        d = out / res["study"]
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.json").write_text(json.dumps(res), encoding="utf-8")
        rows.append({"study": res["study"], "status": res["status"], "error": res["error"]})
    return rows


def _page(out: Path, results: list[dict[str, Any]]) -> str:
    return landing.render_index(_write(out, results), out)


def _section(page: str, study: str) -> str:
    m = re.search(rf'<section class="study \w+" id="study-{study}">(.*?)</section>', page, re.S)
    assert m, study
    return m.group(0)


def _text(fragment: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_headlines_carry_their_ci_and_n(tmp_path: Path) -> None:
    page = _page(tmp_path, [_replay(), _threshold(tmp_path), _agreement(), _calibration()])
    th = _text(_section(page, "threshold-study"))
    assert (
        "threshold 20 fires on 2 of 40 records (5.0% [0.0%, 12.8%], cluster-bootstrap 95% CI), "
        "2 of 38 sessions fail; n = 40 records / 38 sessions"
    ) in th
    assert "not wholly above the 10% ceiling" in th
    assert "t = 3: 24 records, 23 sessions; t = 6: 10 records, 9 sessions" in th
    cal = _text(_section(page, "judge-calibration"))
    assert (
        "κ (judge vs gold) 0.825 [0.757, 0.887], n = 199 — graduates under the pre-registered"
        in cal
    )
    assert "Advisory: the calibration graduates but is not registered" in cal
    ag = _text(_section(page, "agreement-study"))
    assert (
        "Fleiss κ per target from 0.191 [0.092, 0.286] (ia_status) to 0.594 [0.439, 0.698] "
        "(scope_kept), bootstrap 95% CIs, over 3 targets; n = 40 items × 6 raters per target"
    ) in ag
    assert "κ undefined (labels never vary" in ag and "rq_status" in ag
    rp = _text(_section(page, "rubric-replay"))
    assert "2 dead-instrument flags (rubric-v1: 1, rubric-v2: 1); n = 39 sessions per rubric" in rp
    assert "gate-health 'cannot-determine': far above ceiling — 32/39 = 82.1% [67.3%, 91.0%]" in rp
    assert "0/39 = 0.0% [0.0%, 9.0%], n = 39" in rp
    for study in ("rubric-replay", "threshold-study", "agreement-study", "judge-calibration"):
        sec = _section(page, study)
        assert 'class="study ok"' in sec and '<span class="badge ok">ok</span>' in sec
        assert f'href="{study}/index.html"' in sec and f'href="{study}/results.json"' in sec
    assert not re.search(r"\bnan\b", _text(page), re.I)  # rq_status's NaN estimate included


def test_a_registered_graduate_is_no_longer_advisory_and_a_failure_is_not(tmp_path: Path) -> None:
    page = _page(tmp_path / "a", [_calibration(registered=True)])
    sec = _text(_section(page, "judge-calibration"))
    assert "Advisory" not in sec and "Registered as calibrated:instruction-adherence-v2" in sec
    page = _page(tmp_path / "b", [_calibration(graduates=False)])
    sec = _text(_section(page, "judge-calibration"))
    assert "does not graduate under the pre-registered rule" in sec
    assert "Advisory: not graduated" in sec


def test_provenance_parameters_data_card_and_limits(tmp_path: Path) -> None:
    dirty = _threshold(tmp_path)
    dirty["git_dirty"] = True
    page = _page(tmp_path, [dirty, _calibration()])
    text = _text(page)
    assert "a" * 40 in text and "working tree had uncommitted changes" in text
    assert "evalkit version" in text and "0.1.0" in text
    # parameters: a path under the reports is shown relative to them, never as a machine path
    th = _text(_section(page, "threshold-study"))
    assert "_default-data/metrics" in th and str(tmp_path) not in page
    assert "[3, 6, 20]" in th and "candidate thresholds" in th  # value + the notebook's help
    cal = _text(_section(page, "judge-calibration"))
    assert '"" (default)' in cal and "gold/instruction-adherence" in cal  # the declared help
    assert "rubric-v2-2026-09-19" in text and 'href="#data-card"' in page
    card = (REPO / "docs" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert card.splitlines()[0] in text  # the data card's own text is embedded
    assert "What these reports do not prove" in text and "synthetic" in text
    assert_self_contained(page)


def test_failed_missing_and_unreadable_results_show_as_failed(tmp_path: Path) -> None:
    broken = _agreement()
    broken.update(status="failed", error="ValueError: boom")
    rows = _write(tmp_path, [_threshold(tmp_path), broken])
    (tmp_path / "threshold-study" / "results.json").write_text("{not json", encoding="utf-8")
    rows.append({"study": "rubric-replay", "status": "failed", "error": "kernel died"})
    page = landing.render_index(rows, tmp_path)
    assert page.count('<span class="badge failed">failed</span>') == 3
    assert "ok</span>" not in page
    th = _text(_section(page, "threshold-study"))
    assert "results.json unreadable" in th and "threshold 20 fires" not in th
    ag = _text(_section(page, "agreement-study"))
    assert "ValueError: boom" in ag and "Fleiss κ per target" not in ag  # no figure from a failure
    rp = _section(page, "rubric-replay")
    assert "kernel died" in rp and 'href="rubric-replay/results.json"' not in rp
    assert "0 of 3 studies ran without error; 3 failed" in _text(page)


def test_everything_from_results_is_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    broken = _agreement()
    broken.update(status="failed", error=f"RuntimeError: {evil} & more")
    th = _threshold(tmp_path)
    th["parameters"]["fact"] = '"><img src=x onerror=alert(1)>'
    th["fact"] = evil
    page = _page(tmp_path, [th, broken])
    assert evil not in page and "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert_self_contained(page)


def test_same_inputs_give_the_same_bytes_wherever_the_reports_are(tmp_path: Path) -> None:
    a = tmp_path / "one" / "reports"
    b = tmp_path / "two" / "elsewhere"
    first = _page(a, [_replay(), _threshold(a), _agreement(), _calibration()])
    assert landing.render_index(_rows(a), a) == first  # rendered again from the files
    second = _page(b, [_replay(), _threshold(b), _agreement(), _calibration()])
    assert first.encode() == second.encode()
    shutil.rmtree(b)
    assert _page(b, [_replay(), _threshold(b), _agreement(), _calibration()]) == first


def _rows(out: Path) -> list[dict[str, Any]]:
    order = ["rubric-replay", "threshold-study", "agreement-study", "judge-calibration"]
    return [{"study": s, "status": "ok", "error": None} for s in order if (out / s).is_dir()]


def test_each_study_says_where_it_stands_with_the_pre_registration(tmp_path: Path) -> None:
    entry = {"name": "threshold-study", "version": 2, "locked_on": "2026-12-01"}
    th = _threshold(tmp_path)
    th["preregistration"] = {"status": "pre-registered", "entry": entry, "amended": True,
                             "original_locked_on": "2026-11-30"}  # fmt: skip
    cal = _calibration()
    cal["preregistration"] = {
        "status": "deviation",
        "entry": {"name": "judge-calibration", "version": 1, "locked_on": "2026-11-30"},
        "deviations": [{"parameter": "n_resamples", "locked": 2000, "given": 200}],
        "deviation_reason": "<b>quick</b> look",
    }
    agr = _agreement()
    agr["preregistration"] = {"status": "not pre-registered", "entry": None}
    page = _page(tmp_path, [th, cal, agr, _replay()])
    assert (
        "Pre-registered: entry threshold-study version 2, locked on 2026-12-01 (amended; "
        "originally locked on 2026-11-30)." in _text(_section(page, "threshold-study"))
    )
    dev = _text(_section(page, "judge-calibration"))
    assert "Deviation from the pre-registration (entry judge-calibration version 1" in dev
    assert "n_resamples. Reason given: <b>quick</b> look" in dev
    assert "<b>quick" not in page  # the reason is text, not markup
    assert "Not pre-registered" in _text(_section(page, "agreement-study"))
    assert "not recorded in results.json" in _text(_section(page, "rubric-replay"))
    assert_self_contained(page)


def test_a_study_name_never_becomes_a_javascript_link(tmp_path: Path) -> None:
    rows = [{"study": "javascript:alert(1)", "status": "failed", "error": None}]
    page = landing.render_index(rows, tmp_path)
    assert 'href="javascript%3Aalert%281%29/index.html"' in page  # a relative path
    assert 'href="javascript:' not in page
    assert_self_contained(page)
