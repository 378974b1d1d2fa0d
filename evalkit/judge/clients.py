"""Model clients on the official SDKs: ``openai`` (chat completions) and ``anthropic`` (Messages).

The SDKs are the extra ``evalkit[judges]`` and are imported only when a model judge is built, so
evalkit works without them; a missing SDK is an ``EvalkitError`` naming the extra to install.

Retries and backoff are the SDK's own (``max_retries``: 429 honouring ``Retry-After``, 408,
409, 5xx, timeouts and dropped connections, with exponential backoff and jitter). A call that
still fails raises :class:`CallFailed` with an error ``kind`` (:data:`ERROR_KINDS`) and a
message scrubbed of the key (:class:`~evalkit.judge.redact.Redactor`): the run records it as an
error outcome, never as a label. A reply that arrives but is not a chat completion / message
(a body that is not JSON, no choices) is ``bad-response``.

**Bounded replies.** A reply's text may hold at most :func:`reply_cap` characters (a multiple
of ``max_tokens``) and its HTTP body at most :func:`body_cap` bytes: a longer one is the error
``reply-too-large`` (its text stored cut to the cap), read no further than the cap, so memory
stays bounded and the run log never holds a line its reader refuses. The cap is applied on the
HTTP client's transport (every transport, a proxy's too), before the SDK sees the body. The
URL that answered (after any redirect; one from ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``
too) is returned with the completion, for the log.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import logging
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from evalkit.errors import EvalkitError
from evalkit.judge.redact import Redactor
from evalkit.judge.specs import JudgeSpec, ResolvedKey, loggable_base_url, normalize_base_url

__all__ = [
    "ERROR_KINDS",
    "AnthropicMessagesClient",
    "CallFailed",
    "Completion",
    "ModelClient",
    "OpenAIChatClient",
    "body_cap",
    "classify_error",
    "load_sdk",
    "make_client",
    "reply_cap",
]

#: Every error kind a run log may carry.
ERROR_KINDS = (
    "timeout",  # the SDK's timeout, after its retries
    "connection",  # refused, reset or dropped connections, after the SDK's retries
    "rate-limit",  # HTTP 429 after the SDK's retries
    "server-error",  # HTTP 5xx after the SDK's retries
    "auth",  # HTTP 401/403
    "not-found",  # HTTP 404 (a wrong base URL or model)
    "bad-request",  # HTTP 400/413/422
    "http-error",  # any other HTTP status
    "bad-response",  # a 2xx body that is not a completion (not JSON, no choices)
    "sdk-error",  # anything else the SDK raised
    "over-budget",  # the prompt is over the token budget: never sent
    "internal-error",  # evalkit failed on this call (a bug): recorded, the run goes on
    "replay-missing",  # replay: the run log has no answer for this item and repeat
    "replay-mismatch",  # replay: the logged answer was for different item content
    "reply-too-large",  # the reply's text or HTTP body is over its cap (stored cut to the cap)
)
#: Characters of reply text per ``max_tokens`` token at most (a token is about 4 characters;
#: 16 leaves room for any tokenizer and for JSON escapes).
REPLY_CHARS_PER_TOKEN = 16
_BODY_OVERHEAD = 64 << 10  # the completion's envelope around the text
_MESSAGE_CAP = 2000
_SDK_LOGGERS = ("openai", "anthropic", "httpx", "httpx2", "httpcore", "httpcore2")


@dataclass(frozen=True)
class Completion:
    """What a model answered: the reply text, the model id the API reported, token usage."""

    text: str
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    url: str | None = None  # the URL that answered (credentials stripped), after redirects


class CallFailed(Exception):
    """A judge call that failed.

    It carries ``kind`` (one of :data:`ERROR_KINDS`), a scrubbed message and the HTTP status
    when there was one; never a key and never a request object. ``reply`` is the text of a
    reply over its cap, cut to the cap (else None).
    """

    def __init__(
        self, kind: str, message: str, http_status: int | None = None, reply: str | None = None
    ) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.http_status = http_status
        self.reply = reply


def reply_cap(max_tokens: int) -> int:
    """The most characters of reply text a call may return (:data:`REPLY_CHARS_PER_TOKEN`)."""
    return REPLY_CHARS_PER_TOKEN * max_tokens


def body_cap(max_tokens: int) -> int:
    """The most bytes of HTTP body a call may return: the text cap, escaped, and an envelope."""
    return 8 * reply_cap(max_tokens) + _BODY_OVERHEAD


class BodyTooLarge(Exception):
    """A response body over its cap; raised while it is read, so no more of it is read."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"the response body is over its cap of {cap:,} bytes; read no further")
        self.cap = cap


class ModelClient(Protocol):
    """A model judge's client: one prompt in, one :class:`Completion` out.

    ``base_url`` is where it sends (credentials stripped): its argument, else the SDK's
    environment variable, else the SDK's default.
    """

    base_url: str | None

    async def complete(self, prompt: str) -> Completion:
        """The model's answer to ``prompt``; ``CallFailed`` when the call fails."""

    async def aclose(self) -> None:
        """Close the client's connections."""


def load_sdk(provider: str) -> ModuleType:
    """Import the SDK of ``provider``; ``EvalkitError`` naming the extra when it is missing."""
    try:
        module = importlib.import_module(provider)
    except ImportError:
        raise EvalkitError(
            f"the {provider} SDK is not installed; model judges need the extra: "
            "pip install 'evalkit[judges]'"
        ) from None
    # The SDKs log request details at debug level when their *_LOG variable asks for it;
    # nothing of a judge run is logged by them, whatever the environment says.
    for name in _SDK_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return module


def _cap(text: str) -> str:
    return text if len(text) <= _MESSAGE_CAP else text[:_MESSAGE_CAP] + "... [cut]"


def _status_kind(status: int) -> str:
    if status == 429:
        return "rate-limit"
    if status >= 500:
        return "server-error"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not-found"
    if status in (400, 413, 422):
        return "bad-request"
    return "http-error"


def classify_error(exc: BaseException, redact: Redactor) -> CallFailed:
    """The :class:`CallFailed` for what an SDK call raised (by the SDK's exception classes)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = _cap(redact(str(exc) or type(exc).__name__))
    cause = exc if isinstance(exc, BodyTooLarge) else (exc.__cause__ or exc.__context__)
    if isinstance(cause, BodyTooLarge):
        return CallFailed("reply-too-large", str(cause))
    if "APITimeoutError" in names:
        return CallFailed("timeout", message)
    if "APIConnectionError" in names:
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {redact(str(cause))})" if cause else ""
        return CallFailed("connection", _cap(message + detail))
    if "APIResponseValidationError" in names or isinstance(exc, json.JSONDecodeError):
        return CallFailed("bad-response", f"the response body is not a valid reply: {message}")
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and "APIStatusError" in names:
        return CallFailed(_status_kind(status), message, status)
    return CallFailed("sdk-error", f"{type(exc).__name__}: {message}")


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]`` (a lenient SDK model may hold either), else None."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _model_id(response: Any) -> str | None:
    model = _field(response, "model")
    return model if isinstance(model, str) else None


def _not_a_reply(response: Any, what: str) -> CallFailed:
    if isinstance(response, str | bytes):
        return CallFailed("bad-response", f"the server answered with a body that is not {what}")
    return CallFailed("bad-response", f"the response is not {what}")


def _bounded(completion: Completion, cap: int | None) -> Completion:
    """``completion``; ``CallFailed`` (reply-too-large, the text cut to ``cap``) when over it."""
    if cap is None or len(completion.text) <= cap:
        return completion
    raise CallFailed(
        "reply-too-large",
        f"the reply holds {len(completion.text):,} characters, over its cap of {cap:,} "
        "(16 x max_tokens); stored cut to the cap",
        reply=completion.text[:cap],
    )


def openai_completion(response: Any) -> Completion:
    """The :class:`Completion` of a chat completion; ``CallFailed`` when it is none."""
    choices = _field(response, "choices") if not isinstance(response, str | bytes) else None
    if not isinstance(choices, list) or not choices:
        raise _not_a_reply(response, "a chat completion with a choice")
    content = _field(_field(choices[0], "message"), "content")
    if content is not None and not isinstance(content, str):
        raise CallFailed("bad-response", "the first choice's message content is not text")
    usage = _field(response, "usage")
    return Completion(
        text=content or "",
        model=_model_id(response),
        input_tokens=_count(_field(usage, "prompt_tokens")),
        output_tokens=_count(_field(usage, "completion_tokens")),
    )


def anthropic_completion(response: Any) -> Completion:
    """The :class:`Completion` of a Messages API message; ``CallFailed`` when it is none."""
    blocks = _field(response, "content") if not isinstance(response, str | bytes) else None
    if not isinstance(blocks, list):
        raise _not_a_reply(response, "a message with content blocks")
    texts = [_field(b, "text") for b in blocks if _field(b, "type") == "text"]
    usage = _field(response, "usage")
    return Completion(
        text="".join(t for t in texts if isinstance(t, str)),
        model=_model_id(response),
        input_tokens=_count(_field(usage, "input_tokens")),
        output_tokens=_count(_field(usage, "output_tokens")),
    )


def _http_client(sdk: ModuleType, cap: int) -> Any:
    """The SDK's own default HTTP client, every transport of it capped at ``cap`` bytes."""
    import httpx2  # the SDKs' HTTP library (a dependency of both)

    class CappedStream(httpx2.AsyncByteStream):  # type: ignore[misc]
        """A response body that stops, raising :class:`BodyTooLarge`, past ``cap`` bytes."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def __aiter__(self) -> Any:
            seen = 0
            async for part in self._inner:
                seen += len(part)
                if seen > cap:
                    raise BodyTooLarge(cap)
                yield part

        async def aclose(self) -> None:
            await self._inner.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):  # type: ignore[misc]
        """A transport whose responses carry at most ``cap`` bytes of body."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            response = await self._inner.handle_async_request(request)
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > cap:
                await response.aclose()
                raise BodyTooLarge(cap)
            response.stream = CappedStream(response.stream)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    class CappedClient(sdk.DefaultAsyncHttpxClient):  # type: ignore[misc,name-defined]
        def _transport_for_url(self, url: Any) -> Any:
            return CappedTransport(super()._transport_for_url(url))

    return CappedClient()


def _client_options(spec: JudgeSpec, sdk: ModuleType) -> dict[str, Any]:
    options: dict[str, Any] = {
        "max_retries": spec.params.max_retries,
        "http_client": _http_client(sdk, body_cap(spec.params.max_tokens)),
    }
    base_url = normalize_base_url(spec.provider, spec.params.base_url)
    if base_url is not None:
        options["base_url"] = base_url
    if spec.params.timeout is not None:
        options["timeout"] = spec.params.timeout
    return options


async def _parsed(raw: Any) -> Any:
    """The parsed body of an SDK raw response (``parse()`` is a coroutine in some SDKs)."""
    parsed = raw.parse()
    return await parsed if inspect.isawaitable(parsed) else parsed


def _answered_url(raw: Any) -> str | None:
    """The URL of the response that answered (after redirects), credentials stripped."""
    url = getattr(getattr(raw, "http_response", None), "url", None)
    return loggable_base_url(str(url)) if url is not None else None


def client_base_url(client: Any) -> str | None:
    """The base URL an SDK client sends to (its argument, else its environment variable)."""
    url = getattr(client, "base_url", None)
    return loggable_base_url(str(url).rstrip("/")) if url is not None else None


class OpenAIChatClient:
    """``openai:MODEL``: one user message to ``/chat/completions`` per call."""

    def __init__(self, spec: JudgeSpec, key: ResolvedKey, redact: Redactor) -> None:
        sdk = load_sdk("openai")
        self.spec = spec
        self._redact = redact
        self._client = sdk.AsyncOpenAI(api_key=key.secret, **_client_options(spec, sdk))
        self.base_url = client_base_url(self._client)

    async def complete(self, prompt: str) -> Completion:
        """One chat completion of ``prompt``; ``CallFailed`` (scrubbed) when it fails."""
        params = self.spec.params
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": params.max_tokens,
        }
        if params.temperature is not None:
            kwargs["temperature"] = params.temperature
        if params.seed is not None:
            kwargs["seed"] = params.seed
        try:
            raw = await self._client.chat.completions.with_raw_response.create(**kwargs)
            response = await _parsed(raw)
        except Exception as exc:  # the SDK's errors, and a JSON body it could not decode
            failed = classify_error(exc, self._redact)
        else:
            completion = openai_completion(response)
            completion = dataclasses.replace(completion, url=_answered_url(raw))
            return _bounded(completion, reply_cap(params.max_tokens))
        raise failed  # outside the handler: no __context__ holding the unscrubbed error

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()


class AnthropicMessagesClient:
    """``anthropic:MODEL``: one user message to ``/v1/messages`` per call."""

    def __init__(self, spec: JudgeSpec, key: ResolvedKey, redact: Redactor) -> None:
        sdk = load_sdk("anthropic")
        self.spec = spec
        self._redact = redact
        credential = {"auth_token" if key.auth_token else "api_key": key.secret}
        self._client = sdk.AsyncAnthropic(**credential, **_client_options(spec, sdk))
        self.base_url = client_base_url(self._client)

    async def complete(self, prompt: str) -> Completion:
        """One message of ``prompt``; ``CallFailed`` (scrubbed) when it fails."""
        params = self.spec.params
        # The anthropic SDK 1.x dropped sampling keywords from messages.create; extra_body sends
        # the same wire field with every SDK version (the API still takes it where supported).
        extra = {"temperature": params.temperature} if params.temperature is not None else {}
        try:
            raw = await self._client.messages.with_raw_response.create(
                model=self.spec.model,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=params.max_tokens,
                extra_body=extra or None,
            )
            response = await _parsed(raw)
        except Exception as exc:  # the SDK's errors, and a JSON body it could not decode
            failed = classify_error(exc, self._redact)
        else:
            completion = anthropic_completion(response)
            completion = dataclasses.replace(completion, url=_answered_url(raw))
            return _bounded(completion, reply_cap(params.max_tokens))
        raise failed  # outside the handler: no __context__ holding the unscrubbed error

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()


def make_client(spec: JudgeSpec, key: ResolvedKey, redact: Redactor) -> ModelClient:
    """The SDK client of an ``openai:`` or ``anthropic:`` spec."""
    if spec.provider == "openai":
        return OpenAIChatClient(spec, key, redact)
    if spec.provider == "anthropic":
        return AnthropicMessagesClient(spec, key, redact)
    raise EvalkitError(f"judge {spec.name}: no model client for provider {spec.provider!r}")
