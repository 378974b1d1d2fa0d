"""The SDK clients against the scripted loopback server, one wire behaviour at a time.

Real ``openai`` / ``anthropic`` SDK clients make real HTTP requests to 127.0.0.1; the server's
script decides per request. Retries are the SDK's: the tests count the requests the server saw.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from evalkit.judge.clients import CallFailed, Completion, make_client
from evalkit.judge.redact import Redactor
from evalkit.judge.scripted_server import Drop, Fail, RawBody, Reply, ScriptedServer, Stall
from evalkit.judge.specs import parse_spec, resolve_key

PROTOCOLS = ("openai", "anthropic")
PROMPT = 'item: "ia-042"\n\nJudge this.'


def complete(server: ScriptedServer, protocol: str, options: str = "") -> Completion:
    spec = parse_spec(f"{protocol}:judge-model,base_url={server.base_url(protocol)}{options}")
    client = make_client(spec, resolve_key(spec, {}), Redactor())

    async def go() -> Completion:
        try:
            return await client.complete(PROMPT)
        finally:
            await client.aclose()

    return asyncio.run(go())


def failure(server: ScriptedServer, protocol: str, options: str = "") -> CallFailed:
    with pytest.raises(CallFailed) as info:
        complete(server, protocol, options)
    return info.value


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.slow
def test_a_plain_reply_gives_text_model_and_tokens(protocol: str) -> None:
    with ScriptedServer(lambda r: Reply("the answer", model="judge-model-2026-01-01")) as s:
        got = complete(s, protocol)
        (request,) = s.requests
    assert got.text == "the answer" and got.model == "judge-model-2026-01-01"
    assert got.input_tokens == len(PROMPT) // 4 and got.output_tokens == len("the answer") // 4
    assert request.prompt == PROMPT and request.body["model"] == "judge-model"
    assert request.body["max_tokens"] == 1024 and request.body["temperature"] == 0.0
    assert request.body["messages"] == [{"role": "user", "content": PROMPT}]


@pytest.mark.slow
def test_openai_sends_the_seed_and_an_unset_temperature_is_not_sent() -> None:
    with ScriptedServer(lambda r: Reply("ok")) as s:
        complete(s, "openai", ",seed=7,temperature=none,max_tokens=64")
        complete(s, "anthropic", ",temperature=none")
        first, second = s.requests
    assert first.body["seed"] == 7 and first.body["max_tokens"] == 64
    assert "temperature" not in first.body and "temperature" not in second.body


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.slow
def test_429_with_retry_after_is_waited_out_then_answered(protocol: str) -> None:
    def script(request):
        if request.attempt == 0:
            return Fail(429, "rate limited", {"retry-after": "1"})
        return Reply("after the wait")

    with ScriptedServer(script) as s:
        started = time.monotonic()
        got = complete(s, protocol)
        waited = time.monotonic() - started
        assert [r.attempt for r in s.requests] == [0, 1]
    assert got.text == "after the wait"
    assert waited >= 1.0  # the SDK honoured Retry-After: 1 (its own backoff would be < 1 s)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_500_then_success_is_retried_by_the_sdk(protocol: str) -> None:
    def script(request):
        return Fail(500, "oops") if request.attempt == 0 else Reply("fine")

    with ScriptedServer(script) as s:
        assert complete(s, protocol).text == "fine"
        assert len(s.requests) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.slow
def test_a_5xx_that_persists_is_a_server_error_after_the_retries(protocol: str) -> None:
    with ScriptedServer(lambda r: Fail(503, "still down")) as s:
        exc = failure(s, protocol, ",max_retries=2")
        assert len(s.requests) == 3  # one call, two retries
    assert exc.kind == "server-error" and exc.http_status == 503 and "still down" in exc.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_server_that_never_answers_is_a_timeout(protocol: str) -> None:
    with ScriptedServer(lambda r: Stall(5.0)) as s:
        started = time.monotonic()
        exc = failure(s, protocol, ",timeout=0.5,max_retries=0")
        assert time.monotonic() - started < 4.0
    assert exc.kind == "timeout"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.slow
def test_a_dropped_connection_is_retried_then_a_connection_error(protocol: str) -> None:
    with ScriptedServer(lambda r: Drop()) as s:
        exc = failure(s, protocol, ",max_retries=1")
        assert len(s.requests) == 2
    assert exc.kind == "connection"
    with ScriptedServer(lambda r: Drop() if r.attempt == 0 else Reply("second try")) as s:
        assert complete(s, protocol).text == "second try"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_a_body_that_is_not_json_is_a_bad_response(protocol: str, content_type: str) -> None:
    with ScriptedServer(lambda r: RawBody(b"<html>gateway</html>", content_type)) as s:
        exc = failure(s, protocol)
    assert exc.kind == "bad-response"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_json_that_is_not_a_completion_is_a_bad_response(protocol: str) -> None:
    with ScriptedServer(lambda r: RawBody(b'{"hello": "world"}')) as s:
        exc = failure(s, protocol)
    assert exc.kind == "bad-response"


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "bad-request"), (401, "auth"), (403, "auth"), (404, "not-found"), (418, "http-error")],
)
def test_client_errors_are_not_retried_and_are_classified(status: int, kind: str) -> None:
    with ScriptedServer(lambda r: Fail(status, "no")) as s:
        exc = failure(s, "openai", ",max_retries=3")
        assert len(s.requests) == 1
    assert exc.kind == kind and exc.http_status == status


def test_the_key_is_sent_as_each_sdk_sends_it_and_scrubbed_from_errors() -> None:
    key = "sk-evalkit-client-test-0123456789"
    for protocol in PROTOCOLS:
        with ScriptedServer(lambda r: Fail(401, f"Incorrect API key provided: {key}")) as s:
            spec = parse_spec(f"{protocol}:m,base_url={s.base_url(protocol)},max_retries=0")
            resolved = resolve_key(spec, {"OPENAI_API_KEY": key, "ANTHROPIC_API_KEY": key})
            client = make_client(spec, resolved, Redactor([key]))
            with pytest.raises(CallFailed) as info:
                asyncio.run(client.complete(PROMPT))
            assert s.sent_key(s.requests[0]) == key
        assert key not in str(info.value) and "[REDACTED]" in info.value.message
        assert info.value.__cause__ is None and info.value.__context__ is None
