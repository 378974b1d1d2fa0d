"""Judge specs: which model judges, with which parameters, and where its key comes from.

A spec names a judge as ``PROVIDER:MODEL``:

* ``openai:MODEL`` — the chat completions API of any OpenAI-compatible server (OpenAI, vLLM,
  llama.cpp's server, Ollama, LM Studio), through the official ``openai`` SDK;
* ``anthropic:MODEL`` — the Messages API, through the official ``anthropic`` SDK;
* ``replay:RUNLOG`` (or ``replay:RUNLOG#SPEC`` when the log holds several judges) — answers
  from a run log, without any network (:mod:`evalkit.judge.replay`);
* ``rules`` — the rule judge (:func:`evalkit.judge.apply_rules` over the prompt's facts), in
  process, logged like any judge.

Parameters come from the command line's flags (the defaults of every judge of a run) and may be
set per judge after the model, comma-separated: ``openai:llama3,base_url=http://127.0.0.1:8080``.
Keys: ``base_url``, ``temperature``, ``max_tokens``, ``seed``, ``timeout``, ``max_retries``,
``api_key_env``; ``temperature=none`` and ``seed=none`` send none (the API's default: newer
Claude models refuse any temperature but their default).

Base URLs: the ``openai`` SDK appends ``/chat/completions`` to its base URL, which by convention
ends in ``/v1``; the ``anthropic`` SDK appends ``/v1/messages`` to a base URL without it. Both
forms are accepted for both providers: an OpenAI base URL that is a bare server root
(``http://host:port`` or ``.../``) gets ``/v1`` appended, and an Anthropic base URL ending in
``/v1`` has it removed. Any other path is used as given.

The key: ``--api-key-env NAME`` names the environment variable that holds it; otherwise the
SDK's usual one (``OPENAI_API_KEY``; ``ANTHROPIC_API_KEY``, then ``ANTHROPIC_AUTH_TOKEN``).
When none is set, the placeholder :data:`PLACEHOLDER_KEY` is sent (the SDKs refuse to run
without a key; a local server ignores it) and the run says so on stderr. A key lives only in
the client object: never in a spec, a run-log line, a message or a page.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evalkit.errors import EvalkitError

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "KEY_ENV",
    "PLACEHOLDER_KEY",
    "PROVIDERS",
    "RULES",
    "RULES_MODEL",
    "JudgeParams",
    "JudgeSpec",
    "ResolvedKey",
    "loggable_base_url",
    "normalize_base_url",
    "parse_spec",
    "resolve_key",
]

PROVIDERS = ("openai", "anthropic")
REPLAY = "replay"
RULES = "rules"
#: The model id a rule judge's run-log lines report.
RULES_MODEL = "evalkit.judge.apply_rules"
DEFAULT_MAX_TOKENS = 1024
#: Connection failures or timeouts in a row after which a run starts no new call.
DEFAULT_MAX_CONSECUTIVE_ERRORS = 20
#: The SDK's own environment variables, in the order the SDK reads them.
KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
}
#: Sent when no key is set (the SDKs need one); a local server without keys ignores it.
PLACEHOLDER_KEY = "evalkit-no-api-key"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class JudgeParams:
    """The call parameters of one judge.

    ``None`` means the SDK's default (``timeout``) or not sent (``seed``; ``temperature``: the
    API's default, for models that refuse any other; ``base_url``: the SDK's default endpoint
    or its environment variable).
    """

    base_url: str | None = None
    temperature: float | None = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    timeout: float | None = None
    max_retries: int = 2
    api_key_env: str | None = None

    def identity(self) -> dict[str, Any]:
        """The parameters that change what a judge answers (a resumed run must keep them)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}

    def to_log(self) -> dict[str, Any]:
        """The parameters as a run-log line records them (never a key, never URL credentials)."""
        return {
            "base_url": loggable_base_url(self.base_url),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "api_key_env": self.api_key_env,
        }


@dataclass(frozen=True)
class JudgeSpec:
    """A judge: ``provider`` (openai, anthropic or replay), ``model`` and its parameters.

    ``model`` is the replay run log's path for replay, and ``replay_of`` the judge of that log
    to replay.
    """

    provider: str
    model: str
    params: JudgeParams = field(default_factory=JudgeParams)
    replay_of: str | None = None

    @property
    def name(self) -> str:
        """``provider:model`` (``rules`` for the rule judge): its name in a run log."""
        return RULES if self.provider == RULES else f"{self.provider}:{self.model}"


def _number(key: str, raw: str, *, integer: bool) -> float | int:
    try:
        value: float | int = int(raw) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise EvalkitError(f"judge parameter {key}: {raw!r} is not {kind}") from None
    if not math.isfinite(value):
        raise EvalkitError(f"judge parameter {key}: {raw!r} is not a finite number")
    return value


def check_params(params: JudgeParams) -> JudgeParams:
    """``params`` when every value is in range; ``EvalkitError`` naming the first that is not."""
    if params.temperature is not None and not (
        math.isfinite(params.temperature) and params.temperature >= 0
    ):
        raise EvalkitError(f"temperature must be >= 0, got {params.temperature!r}")
    if params.max_tokens < 1:
        raise EvalkitError(f"max_tokens must be >= 1, got {params.max_tokens!r}")
    if params.timeout is not None and not (math.isfinite(params.timeout) and params.timeout > 0):
        raise EvalkitError(f"timeout must be > 0 seconds, got {params.timeout!r}")
    if params.max_retries < 0:
        raise EvalkitError(f"max_retries must be >= 0, got {params.max_retries!r}")
    if params.api_key_env is not None and not _ENV_NAME.fullmatch(params.api_key_env):
        raise EvalkitError(
            f"api_key_env must name an environment variable, got {params.api_key_env!r}"
        )
    if params.base_url is not None:
        parts = urlsplit(params.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EvalkitError(
                f"base URL {loggable_base_url(params.base_url)!r} must be an http:// or "
                "https:// URL with a host"
            )
    return params


def _overrides(text: str, defaults: JudgeParams) -> JudgeParams:
    """Apply ``key=value,...`` (the part of a spec after the model) to ``defaults``."""
    changes: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise EvalkitError(f"judge parameter {part!r}: expected key=value")
        if key in ("base_url", "api_key_env"):
            changes[key] = raw.strip() or None
        elif key in ("max_tokens", "max_retries"):
            changes[key] = _number(key, raw, integer=True)
        elif key in ("seed", "temperature") and raw.strip().lower() in ("", "none"):
            changes[key] = None  # not sent
        elif key == "seed":
            changes[key] = _number(key, raw, integer=True)
        elif key in ("temperature", "timeout"):
            changes[key] = float(_number(key, raw, integer=False))
        else:
            known = "base_url, temperature, max_tokens, seed, timeout, max_retries, api_key_env"
            raise EvalkitError(f"judge parameter {key!r} is unknown (known: {known})")
    return replace(defaults, **changes)


def parse_spec(text: str, defaults: JudgeParams | None = None) -> JudgeSpec:
    """Parse ``openai:MODEL[,k=v...]``, ``anthropic:MODEL[,k=v...]`` or ``replay:RUNLOG[#SPEC]``.

    Raises ``EvalkitError`` naming what is wrong (unknown provider, empty model, a bad
    parameter).
    """
    defaults = defaults or JudgeParams()
    if text == RULES:  # in process: no model, no call parameter changes its answers
        return JudgeSpec(RULES, RULES_MODEL)
    provider, sep, rest = text.partition(":")
    if not sep or provider not in (*PROVIDERS, REPLAY):
        raise EvalkitError(
            f"judge spec {text!r}: expected openai:MODEL, anthropic:MODEL, replay:RUNLOG or rules"
        )
    if provider == REPLAY:
        path, replay_of = rest, None
        if "#" in rest and not os.path.exists(rest):
            path, _, replay_of = rest.rpartition("#")
        if not path:
            raise EvalkitError(f"judge spec {text!r}: replay needs a run log path")
        return JudgeSpec(REPLAY, path, defaults, replay_of or None)
    model, _, options = rest.partition(",")
    model = model.strip()
    if not model:
        raise EvalkitError(f"judge spec {text!r}: the model name is empty")
    params = _overrides(options, defaults) if options else defaults
    check_params(params)
    if provider == "anthropic" and params.seed is not None:
        raise EvalkitError(
            f"judge spec {text!r}: the Anthropic Messages API takes no seed; drop --seed"
        )
    return JudgeSpec(provider, model, params)


def normalize_base_url(provider: str, url: str | None) -> str | None:
    """The base URL the provider's SDK expects (see the module docstring); None stays None."""
    if url is None:
        return None
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    if provider == "openai" and not path:
        path = "/v1"
    elif provider == "anthropic" and path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def loggable_base_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (where a key could hide), for logs."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True)
class ResolvedKey:
    """A judge's credential.

    The secret, which variable it came from (None: the placeholder), and, for Anthropic,
    whether it is an auth token rather than an API key.
    """

    secret: str = field(repr=False)
    source: str | None
    auth_token: bool = False

    @property
    def placeholder(self) -> bool:
        """Whether no variable was set and the placeholder key is sent."""
        return self.source is None


def resolve_key(spec: JudgeSpec, environ: Mapping[str, str] | None = None) -> ResolvedKey:
    """The key of ``spec`` from the environment (module docstring); never logged.

    ``--api-key-env NAME`` that is unset or empty is an ``EvalkitError`` naming the variable
    (never its value).
    """
    env = os.environ if environ is None else environ
    wanted = spec.params.api_key_env
    if wanted is not None:
        value = env.get(wanted, "")
        if not value:
            raise EvalkitError(
                f"judge {spec.name}: environment variable {wanted} (--api-key-env) is not set"
            )
        return ResolvedKey(value, wanted)
    for name in KEY_ENV.get(spec.provider, ()):
        value = env.get(name, "")
        if value:
            return ResolvedKey(value, name, auth_token=name == "ANTHROPIC_AUTH_TOKEN")
    return ResolvedKey(PLACEHOLDER_KEY, None)
