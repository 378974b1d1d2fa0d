"""The one-record HTML report: content, escaping, determinism, and a real headless Chromium.

The browser tests speak the DevTools protocol over ``--remote-debugging-pipe`` (no extra
dependency): they record every request the *page* makes (the browser's own background traffic
is not the report's doing), check the DOM for the hostile session id as text with no script
element, and take a screenshot that must not be blank.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import IN_CI, require_shared
from matplotlib import image as mpimg
from record_factory import make_record, reference_record

from evalkit.errors import ValidationError
from evalkit.report import render_report, write_report

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

BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1200,1600",
    "--remote-debugging-pipe",
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    reason = "no chromium binary on PATH (Debian: apt-get install chromium)"
    if IN_CI:
        pytest.fail(reason + "; CI=true, so the browser tests must run")
    pytest.skip(reason)


class DevToolsPipe:
    """Minimal DevTools-protocol client over Chromium's fd 3 (commands) / fd 4 (replies)."""

    def __init__(self, binary: str, user_data_dir: Path) -> None:
        cmd_read, self._cmd_write = os.pipe()
        self._res_read, res_write = os.pipe()

        def wire_fds() -> None:  # runs in the child: commands on fd 3, replies on fd 4
            os.dup2(cmd_read, 3)
            os.dup2(res_write, 4)

        self.proc = subprocess.Popen(
            [binary, *BROWSER_FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,
            pass_fds=(3, 4, cmd_read, res_write),
        )
        os.close(cmd_read)
        os.close(res_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            self.proc.kill()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_write)
        os.close(self._res_read)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no DevTools message before the deadline")
            ready, _, _ = select.select([self._res_read], [], [], remaining)
            if ready:
                chunk = os.read(self._res_read, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(
        self,
        method: str,
        params: dict | None = None,
        *,
        session: str | None = None,
        timeout: float = 60,
    ) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._cmd_write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Open one hostile report in headless Chromium; collect requests, DOM facts, screenshot."""
    binary = _chromium()
    workdir = tmp_path_factory.mktemp("browser")
    report = write_report(make_record(session_id=HOSTILE), workdir / "report.html", metrics_dir="m")
    url = report.resolve().as_uri()
    cdp = DevToolsPipe(binary, workdir / "profile")
    try:
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        cdp.send("Network.enable", session=session)
        cdp.send("Page.enable", session=session)
        cdp.send("Page.navigate", {"url": url}, session=session)
        cdp.wait_for("Page.loadEventFired")
        probe = cdp.send(
            "Runtime.evaluate",
            {
                "expression": "JSON.stringify({scripts: document.querySelectorAll('script').length,"
                " h1: document.querySelector('h1 code').textContent,"
                " title: document.title,"
                " resources: performance.getEntriesByType('resource').length,"
                " body: document.body.innerText})",
                "returnByValue": True,
            },
            session=session,
        )
        shot = cdp.send("Page.captureScreenshot", {"format": "png"}, session=session)
    finally:
        cdp.close()
    events = [e for e in cdp.events if e.get("sessionId") == session]
    return {
        "url": url,
        "requests": [
            e["params"]["request"]["url"]
            for e in events
            if e.get("method") == "Network.requestWillBeSent"
        ],
        "failed": [e["params"] for e in events if e.get("method") == "Network.loadingFailed"],
        "dialogs": [e for e in events if e.get("method") == "Page.javascriptDialogOpening"],
        "dom": json.loads(probe["result"]["value"]),
        "png": base64.b64decode(shot["data"]),
    }


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
    from evalkit.calibration_status import AcceptedCalibrations
    from evalkit.errors import ValidationError

    reference = "ab" * 32
    status = f"calibrated:gold-ia-v1:{reference[:8]}"
    accepted = AcceptedCalibrations(frozenset({("instruction-adherence", status, reference)}))
    rec = make_record()
    rec["dimensions"][-1].update(calibration_status=status, calibration_ref=reference)
    page = render_report(rec, accepted=accepted)
    judge = page[page.index('id="judge"') : page.index('id="verify"')]
    assert "Judge dimensions (advisory, calibration per dimension)" in judge
    assert f"<td>{status}<br>" in judge
    assert f"<code>calibrations/{reference}.json</code>" in judge
    assert "uncalibrated" not in judge
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        render_report(rec)  # no verified certificate passed in: never shown as calibrated
