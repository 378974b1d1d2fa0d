"""Build the judges of a run from their specs: model judges on the SDKs, or replays.

:func:`build_judges` resolves each model judge's key (:func:`evalkit.judge.specs.resolve_key`),
builds its SDK client and collects every key into one :class:`~evalkit.judge.redact.Redactor`
for the run. When no key is set for a judge, the placeholder key is sent and stderr says so
(naming the variables that were looked at, never a value).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from evalkit.judge.clients import Completion, ModelClient, make_client
from evalkit.judge.items import JudgeItem
from evalkit.judge.redact import Redactor
from evalkit.judge.replay import RunLogReplay
from evalkit.judge.specs import KEY_ENV, REPLAY, JudgeSpec, ResolvedKey, resolve_key

__all__ = ["ModelJudge", "build_judges"]


class ModelJudge:
    """A model judge: its spec's name and parameters, and its SDK client."""

    def __init__(self, spec: JudgeSpec, client: ModelClient) -> None:
        self.name = spec.name
        self.params_log: Mapping[str, Any] = spec.params.to_log()
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


def _key_note(spec: JudgeSpec, key: ResolvedKey) -> str:
    looked = ", ".join(KEY_ENV.get(spec.provider, ()))
    return (
        f"evalkit judge run: {spec.name}: no API key set ({looked} unset); sending a "
        "placeholder key, which a local server without keys accepts"
    )


def build_judges(
    specs: Sequence[JudgeSpec], stderr: TextIO | None = None
) -> tuple[list[ModelJudge | RunLogReplay], Redactor]:
    """The judges of ``specs`` and the redactor that knows every key they hold."""
    out = stderr or sys.stderr
    keys: list[tuple[JudgeSpec, ResolvedKey]] = []
    for spec in specs:
        if spec.provider != REPLAY:
            keys.append((spec, resolve_key(spec)))
    redact = Redactor(key.secret for _, key in keys if not key.placeholder)
    judges: list[ModelJudge | RunLogReplay] = []
    by_spec = {id(spec): key for spec, key in keys}
    for spec in specs:
        if spec.provider == REPLAY:
            judges.append(RunLogReplay(spec))
            continue
        key = by_spec[id(spec)]
        if key.placeholder:
            print(_key_note(spec, key), file=out)
        judges.append(ModelJudge(spec, make_client(spec, key, redact)))
    return judges, redact
