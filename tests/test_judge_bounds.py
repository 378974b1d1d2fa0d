"""Judge runs that fail fail loudly, and end (issue 19): dead and hostile servers, one run per log.

Every server is :mod:`evalkit.judge.scripted_server` on 127.0.0.1 and every call goes through
the official SDKs over real HTTP. Times are bounds the issue sets (a dead server: the run ends
within 45 s; a call: within ``--timeout`` plus a margin), not speed claims.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from evalkit.judge.clients import CallFailed, make_client
from evalkit.judge.redact import Redactor
from evalkit.judge.runlog import read_runlog
from evalkit.judge.scripted_server import (
    Endless,
    Huge,
    Redirect,
    ScriptedServer,
    Trickle,
    rules_reply,
)
from evalkit.judge.specs import JudgeParams, loggable_base_url, parse_spec, resolve_key
from tests.judge_helpers import (
    KEY_VARS,
    REPO_ROOT,
    clean_env,
    lines,
    popen_interruptible,
    run_args,
    run_cli,
)

MARGIN_S = 5.0  # a cancelled call closes its connection; the machine is shared


@pytest.fixture(autouse=True)
def _no_caller_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.slow
def test_a_dead_server_ends_the_run_within_45_s_naming_its_url(tmp_path: Path) -> None:
    with ScriptedServer() as server:  # a port that was just served, then closed
        url = server.base_url("openai")
    out = tmp_path / "run.jsonl"
    started = time.monotonic()
    done = run_cli(run_args("openai:NAME", out, "--repeats", "3", "--quiet", url=url))
    elapsed = time.monotonic() - started
    assert elapsed < 45, f"{elapsed:.1f} s for a dead server (597 calls asked)"
    assert done.returncode == 4, done.stderr
    assert "connection failures or timeouts in a row against" in done.stderr
    assert loggable_base_url(url) in done.stderr
    logged = lines(out)
    assert 20 <= len(logged) < 597  # stopped: the rest were never asked
    assert {r["error"]["kind"] for r in logged} == {"connection"}
    assert read_runlog(out).diagnostics == ()


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (Trickle(interval=0.2), "timeout"),  # a slow-loris: one byte every 0.2 s, never done
        (Endless(), "reply-too-large"),  # a chunked body that never ends
        (Huge(80 << 20), "reply-too-large"),  # an 80 MB reply, its length announced
        (Huge(80 << 20, chunked=True), "reply-too-large"),  # the same, length unknown
    ],
    ids=["slow-loris", "endless", "80MB", "80MB-chunked"],
)
@pytest.mark.slow
def test_a_hostile_server_s_calls_end_within_the_timeout_and_the_log_stays_readable(
    tmp_path: Path, action: Any, kind: str
) -> None:
    out = tmp_path / "run.jsonl"
    timeout = 2.0
    with ScriptedServer(lambda request: action) as server:
        started = time.monotonic()
        done = run_cli(
            run_args(
                "openai:NAME", out, "--timeout", str(timeout), "--max-retries", "0",
                "--max-consecutive-errors", "8", "--concurrency", "4", "--quiet",
                url=server.base_url("openai"),
            ),
            timeout=240,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert done.returncode == 4, done.stderr
    log = read_runlog(out)
    assert log.diagnostics == ()  # every line the writer wrote, its reader reads
    assert log.entries and {e.error_kind for e in log.entries} == {kind}
    for entry in log.entries:
        assert entry.data["latency_s"] <= timeout + MARGIN_S
    if kind == "timeout":  # the whole-call deadline, however slowly the bytes come
        assert "whole-call deadline of 2 s" in log.entries[0].data["error"]["message"]
        assert elapsed < 120


@pytest.mark.parametrize("action", [Huge(80 << 20), Huge(80 << 20, chunked=True), Endless()])
@pytest.mark.slow
def test_a_huge_or_endless_reply_is_never_read_into_memory(action: Any) -> None:
    with ScriptedServer(lambda request: action) as server:
        spec = parse_spec(
            "openai:NAME",
            JudgeParams(base_url=server.base_url("openai"), max_retries=0, timeout=20),
        )
        client = make_client(spec, resolve_key(spec, {}), Redactor())

        async def one() -> None:
            try:
                await client.complete("hello")
            finally:
                await client.aclose()

        tracemalloc.start()
        try:
            with pytest.raises(CallFailed) as failed:
                asyncio.run(one())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert failed.value.kind == "reply-too-large"
    assert peak < 16 << 20, f"{peak / 2**20:.1f} MiB traced for one call"


@pytest.mark.slow
def test_an_over_long_reply_text_is_an_error_stored_cut_to_its_cap(tmp_path: Path) -> None:
    from evalkit.judge.scripted_server import Reply

    out = tmp_path / "run.jsonl"
    with ScriptedServer(lambda request: Reply("y" * 40_000)) as server:
        done = run_cli(
            run_args(
                "openai:NAME", out, "--max-tokens", "100", "--quiet", url=server.base_url("openai")
            ),
        )
    assert done.returncode == 4
    rows = lines(out)
    assert {r["error"]["kind"] for r in rows} == {"reply-too-large"}
    assert {len(r["reply"]) for r in rows} == {1600}  # 16 x max_tokens characters
    assert read_runlog(out).diagnostics == ()


ENDPOINT = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.slow
def test_the_base_url_actually_used_is_the_one_logged(protocol: str, tmp_path: Path) -> None:
    out = tmp_path / "env.jsonl"
    variable = f"{protocol.upper()}_BASE_URL"
    with ScriptedServer() as server:
        url = server.base_url(protocol)
        env = clean_env(**{variable: url})  # no --base-url: the SDK reads the variable
        done = run_cli(run_args(f"{protocol}:NAME", out, "--quiet"), env=env)
        assert done.returncode == 0, done.stderr
    rows = lines(out)
    root = f"http://127.0.0.1:{server_port(url)}"
    assert {r["params"]["base_url"] for r in rows} == {loggable_base_url(url)}
    assert {r["url"] for r in rows} == {root + ENDPOINT[protocol]}

    out = tmp_path / "redirected.jsonl"
    with ScriptedServer() as target, ScriptedServer() as first:
        moved = f"http://127.0.0.1:{target.port}{ENDPOINT[protocol]}"
        first.script = lambda request: Redirect(moved)
        first_url = first.base_url(protocol)
        done = run_cli(run_args(f"{protocol}:NAME", out, "--quiet", url=first_url))
        assert done.returncode == 0, done.stderr
        assert target.requests and all(r.path == ENDPOINT[protocol] for r in target.requests)
    rows = lines(out)
    assert {r["url"] for r in rows} == {moved}  # the URL that answered, after the redirect
    assert {r["params"]["base_url"] for r in rows} == {loggable_base_url(first_url)}


def server_port(url: str) -> int:
    from urllib.parse import urlsplit

    port = urlsplit(url).port
    assert port is not None
    return port


@pytest.mark.slow
def test_a_second_run_on_the_same_log_refuses_and_no_call_is_asked_twice(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.jsonl"
    with ScriptedServer(delay=0.2) as server:
        args = run_args("openai:NAME", out, "--concurrency", "2", "--quiet",
                        url=server.base_url("openai"))  # fmt: skip
        first = popen_interruptible(
            [sys.executable, "-m", "evalkit", *args], cwd=REPO_ROOT, env=clean_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not (out.exists() and out.stat().st_size) and time.monotonic() < deadline:
                time.sleep(0.1)
            second = run_cli(args)
        finally:
            first.send_signal(signal.SIGINT)
            first.wait(timeout=120)
    assert second.returncode == 1
    assert "is held by another judge run" in second.stderr
    rows = lines(out)
    keys = [(r["item_id"], r["repeat"], r["judge"]) for r in rows]
    assert len(keys) == len(set(keys))  # the second run asked nothing


@pytest.mark.slow
def test_a_run_with_errors_left_exits_4_and_a_rerun_that_answers_them_exits_0(
    tmp_path: Path,
) -> None:
    from evalkit.judge.scripted_server import Fail

    out = tmp_path / "run.jsonl"
    flaky = {"n": 0}

    def script(request: Any) -> Any:
        flaky["n"] += 1
        return Fail(400, "bad") if flaky["n"] % 10 == 0 else rules_reply(request)

    with ScriptedServer(script) as server:
        args = run_args("openai:NAME", out, "--quiet", "--max-retries", "0",
                        url=server.base_url("openai"))  # fmt: skip
        done = run_cli(args)
        assert done.returncode == 4, done.stderr
        assert "left without an answer" in done.stderr
        server.script = rules_reply
        again = run_cli(args)
        assert again.returncode == 0, again.stderr
    answered = {(r["item_id"], r["repeat"]) for r in lines(out) if r["outcome"] != "error"}
    assert len(answered) == 199


def test_the_default_timeout_is_a_whole_call_deadline() -> None:
    from evalkit.judge.model_judge import DEFAULT_DEADLINE, ModelJudge

    spec = parse_spec("openai:NAME", JudgeParams(base_url="http://127.0.0.1:9/v1"))
    judge = ModelJudge(spec, make_client(spec, resolve_key(spec, {}), Redactor()))
    assert judge.deadline == DEFAULT_DEADLINE
    spec = parse_spec("openai:NAME,timeout=3", JudgeParams(base_url="http://127.0.0.1:9/v1"))
    assert ModelJudge(spec, make_client(spec, resolve_key(spec, {}), Redactor())).deadline == 3


def test_a_judge_run_s_help_documents_its_exit_codes() -> None:
    done = run_cli(["judge", "run", "--help"])
    text = " ".join(done.stdout.split())
    assert "4 when any is left unanswered" in text and "--max-consecutive-errors" in text
