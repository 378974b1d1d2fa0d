"""Build the judges of a run from their specs: model judges on the SDKs, replays, the rules.

:func:`build_judges` resolves each model judge's key (:func:`evalkit.judge.specs.resolve_key`),
builds its SDK client and collects every key into one :class:`~evalkit.judge.redact.Redactor`
for the run. When no key is set for a judge, the placeholder key is sent and stderr says so
(naming the variables that were looked at, never a value).

Each judge says where its labels come from (``label_origin``: ``model-api``, ``replay`` or
``rules``), the base URL it sends to as the SDK resolved it (its ``--base-url``, else
``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``, else the SDK's default), and its whole-call
``deadline``: ``--timeout`` seconds (default :data:`DEFAULT_DEADLINE`) for a call, retries
included, however slowly a server trickles its bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from evalkit.judge.adapters import RulesJudge
from evalkit.judge.clients import Completion, ModelClient, make_client
from evalkit.judge.items import JudgeItem
from evalkit.judge.redact import Redactor
from evalkit.judge.replay import RunLogReplay
from evalkit.judge.specs import (
    KEY_ENV,
    REPLAY,
    RULES,
    RULES_MODEL,
    JudgeSpec,
    ResolvedKey,
    resolve_key,
)

__all__ = ["DEFAULT_DEADLINE", "ModelJudge", "RulesHandle", "build_judges"]

#: A call's whole-call deadline when ``--timeout`` is not given (the SDKs' own default).
DEFAULT_DEADLINE = 600.0


class ModelJudge:
    """A model judge: its spec's name and parameters, and its SDK client."""

    label_origin = "model-api"

    def __init__(self, spec: JudgeSpec, client: ModelClient) -> None:
        self.name = spec.name
        # the base URL the SDK really sends to: its argument, else its environment variable
        self.params_log: Mapping[str, Any] = {**spec.params.to_log(), "base_url": client.base_url}
        self.deadline: float | None = spec.params.timeout or DEFAULT_DEADLINE
        self._client = client

    def nonce(self, item_id: str, repeat: int) -> str | None:
        """None: every call gets a fresh random nonce."""
        return None

    def origin(self, item_id: str, repeat: int) -> dict[str, Any] | None:
        """None: the answer comes from the model, not from a log."""
        return None

    async def answer(self, item: JudgeItem, repeat: int, prompt: str) -> Completion:
        """The model's answer to ``prompt`` (one call through the SDK client)."""
        return await self._client.complete(prompt)

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.aclose()


class RulesHandle:
    """The rule judge as a judge of a run: :class:`~evalkit.judge.RulesJudge` in process."""

    label_origin = "rules"
    name = RULES
    # no parameter changes its answers; none is sent anywhere
    params_log: Mapping[str, Any] = {"temperature": None, "max_tokens": None, "seed": None}
    deadline: float | None = None
    _rules = RulesJudge()

    def nonce(self, item_id: str, repeat: int) -> str | None:
        """None: a fresh nonce (the rule judge reads the facts, outside the fence)."""
        return None

    def origin(self, item_id: str, repeat: int) -> dict[str, Any] | None:
        """None: the answer comes from the rules."""
        return None

    async def answer(self, item: JudgeItem, repeat: int, prompt: str) -> Completion:
        """The rules' verdict on the prompt's facts."""
        return Completion(self._rules(prompt), RULES_MODEL, None, None)

    async def aclose(self) -> None:
        """Nothing to close."""


def _key_note(spec: JudgeSpec, key: ResolvedKey) -> str:
    looked = ", ".join(KEY_ENV.get(spec.provider, ()))
    return (
        f"evalkit judge run: {spec.name}: no API key set ({looked} unset); sending a "
        "placeholder key, which a local server without keys accepts"
    )


Handle = ModelJudge | RunLogReplay | RulesHandle


def build_judges(
    specs: Sequence[JudgeSpec], stderr: TextIO | None = None
) -> tuple[list[Handle], Redactor]:
    """The judges of ``specs`` and the redactor that knows every key they hold."""
    out = stderr or sys.stderr
    keys: list[tuple[JudgeSpec, ResolvedKey]] = []
    for spec in specs:
        if spec.provider not in (REPLAY, RULES):
            keys.append((spec, resolve_key(spec)))
    redact = Redactor(key.secret for _, key in keys if not key.placeholder)
    judges: list[Handle] = []
    by_spec = {id(spec): key for spec, key in keys}
    for spec in specs:
        if spec.provider == REPLAY:
            judges.append(RunLogReplay(spec))
            continue
        if spec.provider == RULES:
            judges.append(RulesHandle())
            continue
        key = by_spec[id(spec)]
        if key.placeholder:
            print(_key_note(spec, key), file=out)
        judges.append(ModelJudge(spec, make_client(spec, key, redact)))
    return judges, redact
