"""The one-record HTML report: content, escaping, determinism, and a real headless Chromium.

The browser tests speak the DevTools protocol over ``--remote-debugging-pipe`` (no extra
dependency): they record every request the *page* makes (the browser's own background traffic
is not the report's doing), check the DOM for the hostile session id as text with no script
element, and take a screenshot that must not be blank.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import numpy as np
import pytest
from conftest import require_shared
from matplotlib import image as mpimg
from record_factory import make_record, reference_record

from evalkit.errors import ValidationError
from evalkit.views.report import render_report, write_report
from tests.browser import DevTools, assert_inert, chromium, open_page

HOSTILE = "<script>alert(1)</script>"

# ------------------------------------------------------------------------- static content


def test_report_is_deterministic_and_self_contained() -> None:
    rec = make_record()
    first = render_report(rec, metrics_dir="metrics")
    assert first == render_report(json.loads(json.dumps(rec)), metrics_dir="metrics")
    assert first.startswith("<!DOCTYPE html>")
    lowered = first.lower()
    for banned in (
        "<script",
        "<link",
        "<img",
        "<iframe",
        "@import",
        "url(",
        "http://",
        "https://",
        "src=",
    ):
        assert banned not in lowered, banned


def test_null_kpis_show_as_not_recorded_never_zero() -> None:
    rec = make_record(
        kpis={
            "duration_seconds": None,
            "total_waves": 0,
            "total_agents": None,
            "token_input": None,
            "token_output": None,
            "carryover": None,
        }
    )
    page = render_report(rec)
    kpis = page[page.index('id="kpis"') : page.index('id="dimensions"')]
    cells = re.findall(r'<td class="key">([a-z_]+)</td><td>(.*?)</td>', kpis)
    values = dict(cells)
    assert values["total_waves"] == "0"  # a recorded zero stays zero
    for key in ("duration_seconds", "total_agents", "token_input", "token_output", "carryover"):
        assert "not recorded" in values[key], key
        assert "0" not in values[key], key


def test_every_dimension_with_status_and_evidence_and_judge_apart() -> None:
    rec = make_record()
    page = render_report(rec)
    det = page[page.index('id="dimensions"') : page.index('id="judge"')]
    judge = page[page.index('id="judge"') : page.index('id="verify"')]
    for dim in rec["dimensions"]:
        section = judge if dim["method"] == "judge" else det
        other = det if dim["method"] == "judge" else judge
        assert f"<code>{dim['id']}</code>" in section
        assert f"<code>{dim['id']}</code>" not in other
        assert f'status-{dim["status"]}">{dim["status"]}<' in section
    assert "completion_rate=0.5 (v1 threshold: pass iff completion_rate &gt;= 0.8)" in det
    assert "Judge dimensions (advisory, uncalibrated)" in judge
    assert "ADVISORY" in judge.upper() and "uncalibrated" in judge


def test_reverify_command_and_limits_section() -> None:
    rec = make_record()
    page = render_report(rec, metrics_dir="my metrics")
    assert f"evalkit verify {rec['run_id']} --metrics-dir &#x27;my metrics&#x27;" in page
    limits = page[page.index('id="limits"') :]
    assert "What this does not prove" in limits
    for phrase in (
        "n = 1, no confidence interval",
        "judge is uncalibrated",
        "Self-evaluation",
        "Replay is not deterministic model output",
    ):
        assert phrase in limits, phrase


def test_hostile_content_is_escaped_everywhere() -> None:
    rec = make_record(session_id=HOSTILE, handle='"><img src=x onerror=alert(2)>')
    rec["dimensions"][0]["evidence"] = "</td></tr></table><script>alert(3)</script>"
    page = render_report(rec)
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;alert(3)" in page


def test_record_without_judge_dimension_says_so() -> None:
    page = render_report(make_record(judge=False))
    assert "This record carries no judge dimension" in page


def test_reference_record_renders() -> None:
    path = require_shared("conformance", "public", "kpi-all-missing", "expected-v2.json")
    rec = reference_record(path)
    assert rec is not None
    page = render_report(rec)
    assert page.count("not recorded") >= 6
    assert "guard-friction" in page


def test_invalid_record_is_refused() -> None:
    rec = make_record()
    rec["mean"] = 0.7
    with pytest.raises(ValidationError, match=r"^mean: forbidden"):
        render_report(rec)


# ------------------------------------------------------------------------- headless Chromium


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Open one hostile report in headless Chromium; collect requests, DOM facts, screenshot."""
    binary = chromium()
    workdir = tmp_path_factory.mktemp("browser")
    report = write_report(make_record(session_id=HOSTILE), workdir / "report.html", metrics_dir="m")
    extra = (
        "JSON.stringify({h1: document.querySelector('h1 code').textContent,"
        " title: document.title,"
        " resources: performance.getEntriesByType('resource').length})"
    )
    with DevTools(binary, workdir / "profile") as tools:
        info = open_page(tools, report, extra)
    dom = {**info["extra"], "scripts": info["dom"]["scripts"], "body": info["dom"]["text"]}
    return {**info, "url": report.resolve().as_uri(), "dom": dom, "inert": info}


@pytest.mark.browser
def test_browser_makes_no_failed_or_external_request(browser_page: dict[str, Any]) -> None:
    assert browser_page["failed"] == []
    assert browser_page["requests"], "the navigation itself should have been observed"
    assert set(browser_page["requests"]) == {browser_page["url"]}  # only the report file itself
    assert browser_page["dom"]["resources"] == 0


@pytest.mark.browser
def test_browser_shows_hostile_session_id_as_text(browser_page: dict[str, Any]) -> None:
    dom = browser_page["dom"]
    assert dom["scripts"] == 0
    assert dom["h1"] == HOSTILE
    assert dom["title"] == f"Session evaluation: {HOSTILE}"
    assert browser_page["dialogs"] == []
    assert "What this does not prove" in dom["body"]
    assert_inert(browser_page["inert"], "report.html")


@pytest.mark.browser
def test_browser_screenshot_is_not_blank(browser_page: dict[str, Any]) -> None:
    png = browser_page["png"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = mpimg.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] >= 800 and pixels.shape[1] >= 800
    colours = np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)
    assert len(colours) > 10  # text, badges and the judge box, not one flat colour


def test_calibrated_judge_is_still_advisory_and_not_called_uncalibrated() -> None:
    """A judge shows as calibrated only for a status validated against verified certificates
    (passed in); the page names the certificate. Without them the record is refused."""
    from record_factory import judge_block

    from evalkit.errors import ValidationError
    from evalkit.record.calibration_status import AcceptedCalibrations
    from evalkit.record.judging import identity_sha256, judge_identity

    reference = "ab" * 32
    status = f"calibrated:gold-ia-v1:{reference[:8]}"
    block = {**judge_block(), "calls": [{"repeat": 0, "line_sha256": "0" * 64, "status": "pass"}]}
    earned = {reference: identity_sha256(judge_identity(block))}
    accepted = AcceptedCalibrations(
        frozenset({("instruction-adherence", status, reference)}), identities=earned
    )
    rec = make_record()
    rec["dimensions"][-1].update(calibration_status=status, calibration_ref=reference)
    rec["dimensions"][-1]["judge"] = block
    page = render_report(rec, accepted=accepted)
    judge = page[page.index('id="judge"') : page.index('id="verify"')]
    assert "Judge dimensions (advisory, calibration per dimension)" in judge
    assert f"<td>{status}<br>" in judge
    assert f"<code>calibrations/{reference}.json</code>" in judge
    assert "uncalibrated" not in judge
    # the judge is named: its spec, the model it reported, K and its calls
    assert "<code>rules</code>, model reported <code>evalkit.judge.apply_rules</code>" in judge
    assert "K = 1 (first-labelled-call): r0: pass" in judge
    limits = page[page.index('id="limits"') :]
    assert "cannot prove that a provider really ran the model" in limits
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        render_report(rec)  # no verified certificate passed in: never shown as calibrated
