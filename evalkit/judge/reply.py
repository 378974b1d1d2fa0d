"""Read one model reply into a label, or into ``cannot-parse`` with the reason.

The reply is read by the strict parser (:func:`evalkit.judge.parse.parse_response`, strict
mode: exactly one fenced json block holding valid JSON) and then held to what the run asked
for, one judgment of ``instruction-adherence`` about THIS item. ``cannot-parse`` (never a
guessed label) when:

* the reply is empty;
* it contains an untrusted-data fence marker (``<<<UNTRUSTED-DATA`` / ``<<<END-UNTRUSTED-DATA``)
  or the prompt's nonce: a forged or echoed fence, so the reply may carry the record's text
  rather than a judgment;
* it names another item (an ``item: "ID"`` header line as the prompt has, or an
  ``item``/``item_id``/``run_id`` field, that is neither this item's id nor its handle,
  :func:`evalkit.judge.prompt.item_handle`): it answers about something else;
* the parser finds no block, several blocks, or invalid JSON;
* there is no valid entry of the dimension read (``instruction-adherence`` unless another
  judge dimension is asked for; the reason says why: a missing id, an unknown status such as
  ``"maybe"``, evidence that is not text, a non-finite score);
* two entries give that dimension different statuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.judge.parse import (
    DIMENSION_STATUSES,
    JudgeResponseError,
    json_blocks,
    parse_response,
)
from evalkit.judge.prompt import item_handle
from evalkit.record.dimension import DimensionId

__all__ = ["CANNOT_PARSE", "TARGET_DIMENSION", "ReplyReading", "read_reply"]

TARGET_DIMENSION: str = DimensionId.INSTRUCTION_ADHERENCE.value
CANNOT_PARSE = "cannot-parse"
_FENCE_MARK = re.compile(r"<<<\s*(?:END-)?UNTRUSTED-DATA", re.I)
# the prompt's own header form, ``item: "<id>"`` (a JSON string), echoed or forged
_ITEM_LINE = re.compile(r'^[ \t]*item[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*")[ \t]*$', re.I | re.M)
_ITEM_KEYS = ("item", "item_id", "run_id")


@dataclass(frozen=True)
class ReplyReading:
    """The label a reply gives (``status``, ``evidence``, ``score``), or ``reason`` why not."""

    status: str | None
    evidence: str | None = None
    reason: str | None = None
    score: float | int | None = None

    @property
    def outcome(self) -> str:
        """``ok`` or ``cannot-parse``."""
        return "ok" if self.status is not None else CANNOT_PARSE


def _cannot(reason: str) -> ReplyReading:
    return ReplyReading(None, None, reason)


def _as_item(raw: str) -> str:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def _named_items(text: str, entries: list[Any]) -> list[str]:
    """Items the reply names: its ``item:`` lines and its entries' item fields."""
    named = [_as_item(m.group(1)) for m in _ITEM_LINE.finditer(text)]
    for entry in entries:
        if isinstance(entry, Mapping):
            named += [str(entry[key]) for key in _ITEM_KEYS if key in entry]
    return named


def _why_missing(targets: list[Mapping[str, Any]], dimension: str) -> str:
    if not targets:
        return f"the json block has no judgment with id {dimension!r}"
    entry = targets[0]
    status = entry.get("status")
    if not isinstance(status, str) or status not in DIMENSION_STATUSES:
        return f"status {status!r} is not one of {', '.join(DIMENSION_STATUSES)}"
    if not isinstance(entry.get("evidence"), str):
        return "the judgment's evidence is not a string"
    return "the judgment's score is not null or a finite number"


def read_reply(
    text: Any,
    *,
    item_id: str,
    rubric_version: str = "rubric-v2",
    nonce: str | None = None,
    dimension: str = TARGET_DIMENSION,
) -> ReplyReading:
    """Read ``text`` as the reply about ``item_id`` for ``dimension`` (module docstring)."""
    if not isinstance(text, str) or not text.strip():
        return _cannot("the reply is empty")
    if _FENCE_MARK.search(text) or (nonce and nonce.lower() in text.lower()):
        return _cannot(
            "the reply contains an untrusted-data fence marker or the prompt's nonce "
            "(a forged or echoed fence)"
        )
    try:
        dims = parse_response(text, rubric_version, strict=True)
    except JudgeResponseError as exc:
        return _cannot(str(exc))
    value = json.loads(json_blocks(text)[0], parse_constant=float)  # parsed once already
    entries = value if isinstance(value, list) else [value]
    known = {item_id, item_handle(item_id)}
    others = sorted({name for name in _named_items(text, entries) if name not in known})
    if others:
        return _cannot(f"the reply names item {others[0]!r}, not {item_id!r}")
    targets = [e for e in entries if isinstance(e, Mapping) and e.get("id") == dimension]
    statuses = sorted({str(e.get("status")) for e in targets})
    if len(statuses) > 1:
        return _cannot(f"the reply gives {dimension} several statuses: {statuses}")
    dim = next((d for d in dims if d["id"] == dimension), None)
    if dim is None:
        return _cannot(_why_missing(targets, dimension))
    return ReplyReading(dim["status"], dim["evidence"], None, dim["score"])
