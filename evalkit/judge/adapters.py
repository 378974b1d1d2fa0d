"""Pluggable judges: the ``Judge`` protocol and three adapters.

A judge is anything callable as ``judge(prompt: str) -> str`` (the reply text). Nothing here
opens a network connection: a local model or an API client of the user's own plugs in through
:class:`CallableJudge` (the SDK clients of ``evalkit judge run`` are in
:mod:`evalkit.judge.clients`). Two offline judges come with it:

* :class:`ReplayJudge` replays labels from a CSV file (``item_id,label``; item_id = run id);
* :class:`RulesJudge` answers with :func:`evalkit.judge.apply_rules` over the facts block of
  the prompt — the deterministic baseline rater.

The rule judge reads only what evalkit wrote OUTSIDE the untrusted-data fence (the first
fenced json block, the facts, which comes before the fence). The replay looks its label up by
the ``run_id`` of the fenced record slice (the header names the item by an opaque handle); the
slice is JSON whose strings cannot close it, so the id read back is the record's own.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from evalkit.errors import EvalkitError
from evalkit.files.errors import input_file_error
from evalkit.judge.parse import DIMENSION_STATUSES
from evalkit.judge.reply import TARGET_DIMENSION
from evalkit.judge.rules import apply_rules

_FENCED = re.compile(
    r"^<<<UNTRUSTED-DATA nonce=([A-Za-z0-9_-]+)>>>\n(.*?)\n<<<END-UNTRUSTED-DATA nonce=\1>>>$",
    re.M | re.S,
)
_FIRST_JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.M | re.S)


@runtime_checkable
class Judge(Protocol):
    """A judge: takes the prompt text, returns the reply text."""

    def __call__(self, prompt: str) -> str:
        """The reply text to ``prompt``."""


def _reply(dim_id: str, status: str, evidence: str) -> str:
    body = json.dumps([{"id": dim_id, "status": status, "evidence": evidence, "score": None}])
    return f"```json\n{body}\n```\n"


def _json_match(pattern: re.Pattern[str], prompt: str) -> Any:
    """The JSON value of ``pattern``'s first group at its first match; None if none or bad."""
    match = pattern.search(prompt)
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def prompt_slice(prompt: str) -> dict[str, Any] | None:
    """The record slice inside the prompt's untrusted-data fence, decoded, or None."""
    match = _FENCED.search(prompt)
    if match is None:
        return None
    try:
        value = json.loads(match.group(2))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def prompt_item_id(prompt: str) -> str | None:
    """The item (its run id) of the prompt's fenced record slice, or None."""
    value = (prompt_slice(prompt) or {}).get("run_id")
    return value if isinstance(value, str) else None


def prompt_facts(prompt: str) -> dict[str, Any] | None:
    """The facts evalkit put in the prompt's first fenced json block, or None."""
    value = _json_match(_FIRST_JSON_BLOCK, prompt)
    return value if isinstance(value, dict) else None


class CallableJudge:
    """Wrap any ``callable(prompt) -> str`` (a local model, a user-supplied API client)."""

    def __init__(self, fn: Callable[[str], str]) -> None:
        if not callable(fn):
            raise TypeError("CallableJudge needs a callable(prompt: str) -> str")
        self._fn = fn

    def __call__(self, prompt: str) -> str:
        """The callable's reply; ``EvalkitError`` when it returns anything but a string."""
        reply = self._fn(prompt)
        if not isinstance(reply, str):
            raise EvalkitError(f"the judge callable returned {type(reply).__name__}, not str")
        return reply


class ReplayJudge:
    """Replay labels from a CSV file with columns ``item_id,label`` (item_id = run id).

    The label answers ``instruction-adherence``. An item without a label is answered with no
    json block, so it yields no judge dimension (never a guessed label). A file that is missing,
    a directory or unreadable raises an ``EvalkitError`` that is also the matching ``OSError``
    subclass (:mod:`evalkit.files.errors`), naming the file.
    """

    def __init__(self, source: str | Path | Mapping[str, str]) -> None:
        self.source = str(source) if not isinstance(source, Mapping) else "<mapping>"
        self.labels: dict[str, str] = (
            dict(source) if isinstance(source, Mapping) else self._read(Path(source))
        )

    @staticmethod
    def _read(path: Path) -> dict[str, str]:
        labels: dict[str, str] = {}
        try:
            handle = path.open(newline="", encoding="utf-8")
        except OSError as exc:
            raise input_file_error(exc, "replay labels file", path) from exc
        with handle:
            reader = csv.DictReader(handle)
            missing = {"item_id", "label"} - set(reader.fieldnames or ())
            if missing:
                raise EvalkitError(
                    f"{path}: line 1: missing column(s) {', '.join(sorted(missing))}"
                )
            for line_no, row in enumerate(reader, start=2):
                item, label = (row.get("item_id") or "").strip(), (row.get("label") or "").strip()
                if not item:
                    raise EvalkitError(f"{path}: line {line_no}: field item_id is empty")
                if label not in DIMENSION_STATUSES:
                    raise EvalkitError(
                        f"{path}: line {line_no}: field label {label!r} is not one of "
                        f"{', '.join(DIMENSION_STATUSES)}"
                    )
                if item in labels and labels[item] != label:
                    raise EvalkitError(
                        f"{path}: line {line_no}: item_id {item!r} has two different labels"
                    )
                labels[item] = label
        return labels

    def __call__(self, prompt: str) -> str:
        """The replayed label of the prompt's item as a reply, or a reply with no json block."""
        item = prompt_item_id(prompt)
        label = self.labels.get(item) if item is not None else None
        if label is None:
            return f"no replayed label for item {item!r}"
        return _reply(TARGET_DIMENSION, label, f"replayed label from {self.source}")


class RulesJudge:
    """The rule judge as a judge: ``apply_rules`` over the facts block of the prompt."""

    def __call__(self, prompt: str) -> str:
        """The rules' verdict on the prompt's facts as a reply (the rule and reason as evidence)."""
        verdict = apply_rules(prompt_facts(prompt))
        return _reply(
            TARGET_DIMENSION,
            str(verdict.status),
            f"rule {verdict.rule}: {verdict.reason}",
        )


__all__ = [
    "CallableJudge",
    "Judge",
    "ReplayJudge",
    "RulesJudge",
    "prompt_facts",
    "prompt_item_id",
    "prompt_slice",
]
