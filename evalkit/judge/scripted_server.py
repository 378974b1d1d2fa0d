"""A scripted model server on 127.0.0.1 that speaks the OpenAI and Anthropic wire protocols.

For tests and benchmarks of ``evalkit judge run``: the official SDKs make real HTTP requests to
it. It serves ``POST /v1/chat/completions`` (OpenAI chat completions) and ``POST /v1/messages``
(Anthropic Messages) with the response bodies and headers of those APIs (``x-request-id`` /
``request-id``, ``retry-after`` on 429, the error envelopes ``{"error": {...}}`` and
``{"type": "error", "error": {...}}``); anything else is a 404 in the API's error shape.

What it answers is a *script*: a function of the :class:`Request` (protocol, headers, body, the
prompt, the item the prompt names, and ``attempt``, how many times this very prompt came
before) returning an action: :class:`Reply` (a completion, after an optional delay),
:class:`Fail` (an HTTP error status, e.g. 429 with ``Retry-After``), :class:`Stall` (answer
only after the client has given up), :class:`RawBody` (a 200 whose body is not a completion,
e.g. not JSON), :class:`Drop` (close the connection without a response), or the hostile ones:
:class:`Trickle` (a slow-loris: one byte of body every ``interval`` seconds, never done),
:class:`Endless` (a chunked body that never ends), :class:`Huge` (a completion whose reply is
``size`` bytes, streamed from a small buffer) and :class:`Redirect` (a 307 to another URL).
The default script answers every prompt as the rule judge would (:class:`evalkit.judge.
RulesJudge`).

It binds to a loopback address only, on an ephemeral port.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalkit.judge.adapters import RulesJudge, prompt_item_id

__all__ = [
    "Drop",
    "Endless",
    "Fail",
    "Huge",
    "RawBody",
    "Redirect",
    "Reply",
    "Request",
    "ScriptedServer",
    "Stall",
    "Trickle",
    "rules_reply",
]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass(frozen=True)
class Request:
    """One request as the script sees it."""

    protocol: str  # "openai" or "anthropic"
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: Any  # the parsed JSON body (None when it was not JSON)
    prompt: str
    item_id: str | None
    attempt: int  # 0 for the first time this exact prompt arrives, 1 for its first retry...


@dataclass(frozen=True)
class Reply:
    """A completion with ``text``; ``model`` is the id reported (default: the requested one)."""

    text: str
    delay: float = 0.0
    model: str | None = None


@dataclass(frozen=True)
class Fail:
    """An HTTP error ``status`` with the API's error envelope (``message``) and ``headers``."""

    status: int
    message: str = "scripted failure"
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Stall:
    """Say nothing for ``seconds`` (the client's timeout fires first), then a rules reply."""

    seconds: float


@dataclass(frozen=True)
class RawBody:
    """A 200 response whose body is ``body`` as is (e.g. not JSON)."""

    body: bytes
    content_type: str = "application/json"


@dataclass(frozen=True)
class Drop:
    """Close the connection without sending a response."""


@dataclass(frozen=True)
class Trickle:
    """A slow-loris: headers promising a large body, then one byte every ``interval`` s."""

    interval: float = 0.5
    seconds: float = 120.0  # gives up after this long (the client should have long before)


@dataclass(frozen=True)
class Endless:
    """A 200 with a chunked body that never ends (until the client hangs up or ``seconds``)."""

    seconds: float = 120.0


@dataclass(frozen=True)
class Huge:
    """A valid completion whose reply text is ``size`` bytes (sent with its Content-Length)."""

    size: int = 80 << 20
    chunked: bool = False  # True: no Content-Length, the size is only known by reading


@dataclass(frozen=True)
class Redirect:
    """A ``status`` redirect to ``location`` (the same path on another server, say)."""

    location: str
    status: int = 307


Action = Reply | Fail | Stall | RawBody | Drop | Trickle | Endless | Huge | Redirect
Script = Callable[[Request], Action]
_RULES = RulesJudge()


def rules_reply(request: Request) -> Action:
    """The default script: the rule judge's answer to the prompt."""
    return Reply(_RULES(request.prompt))


def _prompt_of(protocol: str, body: Any) -> str:
    """The text of the last user message (a string, or the text blocks of a content list)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return ""
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


_ERROR_TYPES = {
    "openai": {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"},
    "anthropic": {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    },
}


def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    """The API's error envelope for ``status``."""
    default = "server_error" if protocol == "openai" else "api_error"
    kind = _ERROR_TYPES[protocol].get(status, default if status >= 500 else "invalid_request_error")
    if protocol == "openai":
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def success_body(protocol: str, request: Request, reply: Reply, serial: int) -> dict[str, Any]:
    """The API's completion body for ``reply``."""
    model = reply.model or (request.body.get("model") if isinstance(request.body, dict) else None)
    tokens_in, tokens_out = len(request.prompt) // 4, len(reply.text) // 4
    if protocol == "openai":
        return {
            "id": f"chatcmpl-scripted{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
            "system_fingerprint": None,
        }
    return {
        "id": f"msg_scripted{serial}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": reply.text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }


_BEARER = re.compile(r"(?i)^bearer\s+(.+)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, protocol: str, status: int, obj: Any, extra: Mapping[str, str]) -> None:
        serial = next(self.server.serials)
        id_header = "x-request-id" if protocol == "openai" else "request-id"
        headers = {"Content-Type": "application/json", id_header: f"req_scripted{serial}"}
        self._send(status, json.dumps(obj).encode("utf-8"), {**headers, **extra})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        protocol = {OPENAI_PATH: "openai", ANTHROPIC_PATH: "anthropic"}.get(self.path.split("?")[0])
        if protocol is None:
            body = error_body("openai", 404, f"no route {self.path}")
            self._send_json("openai", 404, body, {})
            return
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        request = self.server.record(self, protocol, parsed)
        try:
            self._act(protocol, request, self.server.decide(request))
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _hostile(self, protocol: str, request: Request, action: Action) -> bool:
        """Act out a hostile action; False when ``action`` is none of them."""
        if isinstance(action, Redirect):
            self._send(action.status, b"", {"Location": action.location})
            return True
        if isinstance(action, Trickle):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "4096")  # under any cap: only time stops it
            self.end_headers()
            deadline = time.monotonic() + action.seconds
            while time.monotonic() < deadline:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(action.interval)
            self.close_connection = True
            return True
        if isinstance(action, Endless):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            deadline, block = time.monotonic() + action.seconds, b" " * 65536
            while time.monotonic() < deadline:
                self._chunk(block)
            self.close_connection = True
            return True
        if isinstance(action, Huge):
            self._huge(protocol, request, action)
            return True
        return False

    def _huge(self, protocol: str, request: Request, action: Huge) -> None:
        """A completion of ``action.size`` bytes of text, streamed from one small buffer."""
        marker = "\u0000HUGE\u0000"
        body = success_body(protocol, request, Reply(marker), next(self.server.serials))
        head, tail = json.dumps(body).encode().split(json.dumps(marker)[1:-1].encode())
        block = b"x" * 65536
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if action.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + action.size + len(tail)))
        self.end_headers()
        write = self._chunk if action.chunked else self.wfile.write
        write(head)
        left = action.size
        while left > 0:
            write(block[: min(left, len(block))])
            left -= len(block)
        write(tail)
        if action.chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _act(self, protocol: str, request: Request, action: Action) -> None:
        if self._hostile(protocol, request, action):
            return
        if isinstance(action, Drop):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(action, Stall):
            time.sleep(action.seconds)
            action = rules_reply(request)
        if isinstance(action, RawBody):
            self._send(200, action.body, {"Content-Type": action.content_type})
            return
        assert isinstance(action, Reply | Fail)
        time.sleep(action.delay)
        if isinstance(action, Fail):
            body = error_body(protocol, action.status, action.message)
            self._send_json(protocol, action.status, body, dict(action.headers))
            return
        assert isinstance(action, Reply)
        serial = next(self.server.serials)
        self._send_json(protocol, 200, success_body(protocol, request, action, serial), {})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: ScriptedServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner
        self.serials = itertools.count(1)
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()

    def record(self, handler: _Handler, protocol: str, body: Any) -> Request:
        prompt = _prompt_of(protocol, body)
        with self._lock:
            attempt = self._seen[prompt]
            self._seen[prompt] += 1
            request = Request(
                protocol=protocol,
                path=handler.path,
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=body,
                prompt=prompt,
                item_id=prompt_item_id(prompt),
                attempt=attempt,
            )
            self.owner.requests.append(request)
        return request

    def decide(self, request: Request) -> Action:
        key = self.owner.api_key
        if key is not None and self.owner.sent_key(request) != key:
            return Fail(401, f"Incorrect API key provided: {self.owner.sent_key(request)}")
        return self.owner.script(request)


class ScriptedServer:
    """The server (module docstring), used as a context manager.

    ``base_url(protocol)`` is the base URL each SDK expects; ``requests`` lists every request
    received, in order.

    ``api_key``: when set, a request without that key (``Authorization: Bearer`` or
    ``x-api-key``) gets a 401 whose message echoes the key it did send, as real APIs do.
    """

    def __init__(
        self, script: Script | None = None, *, delay: float = 0.0, api_key: str | None = None
    ) -> None:
        self.script: Script = script or (
            (lambda r: Reply(_RULES(r.prompt), delay=delay)) if delay else rules_reply
        )
        self.api_key = api_key
        self.requests: list[Request] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def sent_key(request: Request) -> str | None:
        """The key a request carried (``x-api-key``, else the bearer token), or None."""
        if "x-api-key" in request.headers:
            return request.headers["x-api-key"]
        match = _BEARER.match(request.headers.get("authorization", ""))
        return match.group(1) if match else None

    @property
    def port(self) -> int:
        """The port it listens on (``RuntimeError`` when it is not running)."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        return int(self._server.server_address[1])

    def base_url(self, protocol: str = "openai") -> str:
        """The base URL the ``openai`` or ``anthropic`` SDK expects."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if protocol == "openai" else root

    def start(self) -> ScriptedServer:
        """Serve on a free loopback port in a daemon thread; returns the server."""
        self._server = _Server(self)
        host = str(self._server.server_address[0])
        if not ipaddress.ip_address(host).is_loopback:  # never anything but loopback
            self._server.server_close()
            raise RuntimeError(f"refusing to serve on {host}")
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its socket (nothing when it is not running)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedServer:
        """Start the server."""
        return self.start()

    def __exit__(self, *exc: object) -> None:
        """Stop the server."""
        self.stop()
