"""Headless Chromium over the DevTools pipe, for the tests that open pages.

``--remote-debugging-pipe``: commands on fd 3, replies on fd 4, NUL-separated JSON; no port, no
network. :func:`open_page` loads one file and reports what happened: every request, failed
loads, JavaScript dialogs, what any page script tried (``alert``/``confirm``/``prompt`` are
replaced before the page's own code runs, so an injected script is recorded instead of
blocking the page), DOM facts (scripts, inline event handlers, ``javascript:`` links, images)
and a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"

_FLAGS = [
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

# Runs in every page before its own scripts: anything that calls a dialog is recorded.
_HOOK = """
window.__evalkit_ran = [];
for (const name of ['alert', 'confirm', 'prompt', 'print']) {
  window[name] = (...args) => { window.__evalkit_ran.push(name + ':' + args.join(' ')); };
}
"""

_PROBE = """JSON.stringify({
  scripts: document.scripts.length,
  handlers: Array.from(document.querySelectorAll('*')).filter(
      el => Array.from(el.attributes).some(a => a.name.toLowerCase().startsWith('on'))).length,
  js_links: Array.from(document.querySelectorAll('[href],[src],[action],[formaction]')).filter(
      el => /^\\s*javascript:/i.test(el.getAttribute('href') || el.getAttribute('src')
          || el.getAttribute('action') || el.getAttribute('formaction') || '')).length,
  iframes: document.querySelectorAll('iframe,object,embed,frame').length,
  images: document.images.length,
  broken: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length,
  errors: document.querySelectorAll('.output_error').length,
  ran: window.__evalkit_ran || null,
  text: document.body ? document.body.innerText : '',
})"""


def chromium() -> str:
    """The Chromium binary; skip without one (fail under CI=true)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    if IN_CI:
        pytest.fail("no chromium on PATH; CI=true, so the browser test must run")
    pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")


class DevTools:
    """DevTools protocol over --remote-debugging-pipe (commands fd 3, replies fd 4)."""

    def __init__(self, binary: str, profile: Path) -> None:
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def fds() -> None:
            os.dup2(cmd_r, 3)
            os.dup2(res_w, 4)

        self.proc = subprocess.Popen(
            [binary, *_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,
            pass_fds=(3, 4, cmd_r, res_w),
        )
        os.close(cmd_r)
        os.close(res_w)
        self.buf, self.next_id, self.events = b"", 0, []

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("DevTools: no message before the deadline")
            if select.select([self.res_r], [], [], left)[0]:
                chunk = os.read(self.res_r, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + 60
        while not any(
            e.get("method") == method and e.get("sessionId") == session for e in self.events
        ):
            self.events.append(self._read(deadline))

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            self.proc.kill()
        self.proc.wait(timeout=20)
        os.close(self.cmd_w)
        os.close(self.res_r)


def open_page(
    tools: DevTools,
    page: Path,
    extra: str | None = None,
    fragment: str | None = None,
    clip: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Load ``page`` in a new tab; requests, failures, dialogs, DOM facts and a screenshot.

    ``extra``: a JavaScript expression returning a JSON string, evaluated after load (its
    parsed value is ``["extra"]``); a Promise is awaited. ``fragment``: the URL fragment to
    open the page at (without ``#``). ``clip``: the page area to screenshot (CSS pixels,
    ``x``/``y``/``width``/``height``; default the viewport).
    """
    target = tools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = tools.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
        "sessionId"
    ]
    tools.send("Network.enable", session=session)
    tools.send("Page.enable", session=session)
    tools.send("Page.addScriptToEvaluateOnNewDocument", {"source": _HOOK}, session=session)
    url = page.resolve().as_uri() + ("" if fragment is None else "#" + fragment)
    tools.send("Page.navigate", {"url": url}, session=session)
    tools.wait_for("Page.loadEventFired", session)
    probe = tools.send(
        "Runtime.evaluate", {"expression": _PROBE, "returnByValue": True}, session=session
    )
    more = None
    if extra is not None:
        got = tools.send(
            "Runtime.evaluate",
            {"expression": extra, "returnByValue": True, "awaitPromise": True},
            session=session,
        )
        more = json.loads(got["result"]["value"])
    shot = tools.send(
        "Page.captureScreenshot",
        {"format": "png"}
        if clip is None
        else {"format": "png", "clip": {**clip, "scale": 1}, "captureBeyondViewport": True},
        session=session,
    )
    mine = [e for e in tools.events if e.get("sessionId") == session]
    return {
        "requests": [
            e["params"]["request"]["url"]
            for e in mine
            if e.get("method") == "Network.requestWillBeSent"
        ],
        "failed": [e["params"] for e in mine if e.get("method") == "Network.loadingFailed"],
        "dialogs": [e for e in mine if e.get("method") == "Page.javascriptDialogOpening"],
        "dom": json.loads(probe["result"]["value"]),
        "extra": more,
        "png": base64.b64decode(shot["data"]),
    }


def assert_inert(info: dict[str, Any], page: str) -> None:
    """Nothing on the page ran or could run: no script, handler, javascript: link or dialog."""
    dom = info["dom"]
    assert dom["ran"] == [], (page, dom["ran"])  # the hook was in place and nothing called it
    assert info["dialogs"] == [], page
    assert dom["scripts"] == 0, page
    assert dom["handlers"] == 0, page
    assert dom["js_links"] == 0 and dom["iframes"] == 0, page
    external = [u for u in info["requests"] if not u.startswith(("file://", "data:"))]
    assert external == [] and info["failed"] == [], (page, external, info["failed"])
