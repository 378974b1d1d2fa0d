"""``--judge replay:RUNLOG``: answer from a run log, without any network.

The replay judge takes the judge of the source log (the only one, or the one named after ``#``)
and answers each (item, repeat) with what that judge answered: the same reply text, model id,
token counts and the same prompt nonce, so the rebuilt prompt is byte-identical (same
``prompt_sha256``) when the item is unchanged. The reply is read again by this evalkit's reply
reader, so a study re-rendered from a replayed log gives the figures of the original. An
original error outcome replays as the same error (a rerun against the model retries it).

Refused, as errors of the new line and never as labels: an (item, repeat) the source log has no
line for (``replay-missing``), an item whose content hash differs from the one the answer was
given for, a rebuilt prompt whose sha256 is not the logged ``prompt_sha256``, and a logged line
whose ``status`` is not what its ``reply`` reads as (``replay-mismatch``: the answer was about
another prompt, or the line was edited).

``repeats`` is the number of repeats the log holds for the judge (its largest repeat plus one):
``judge run`` without ``--repeats`` replays every one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.judge.clients import CallFailed, Completion
from evalkit.judge.items import JudgeItem
from evalkit.judge.reply import CANNOT_PARSE, read_reply
from evalkit.judge.runlog import RunLogEntry, read_runlog
from evalkit.judge.specs import JudgeSpec

__all__ = ["RunLogReplay"]

_NONCE = re.compile(r"[A-Za-z0-9_-]{1,128}", re.ASCII)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class RunLogReplay:
    """A judge that answers from a run log (module docstring). Opens no connection."""

    label_origin = "replay"
    deadline: float | None = None

    def __init__(self, spec: JudgeSpec) -> None:
        self.path = spec.model
        log = read_runlog(self.path)
        judges = log.judges()
        if not judges:
            raise EvalkitError(f"{self.path}: the run log holds no answer to replay")
        if spec.replay_of is not None:
            if spec.replay_of not in judges:
                raise EvalkitError(
                    f"{self.path}: no judge {spec.replay_of!r} in the run log "
                    f"(it holds {', '.join(judges)})"
                )
            judge = spec.replay_of
        elif len(judges) > 1:
            raise EvalkitError(
                f"{self.path}: the run log holds {len(judges)} judges ({', '.join(judges)}); "
                f"name one: --judge 'replay:{self.path}#{judges[0]}'"
            )
        else:
            judge = judges[0]
        first = log.first_of(judge)
        params = first.data.get("params") if first is not None else None
        self.name = judge
        self.params_log: Mapping[str, Any] = dict(params) if isinstance(params, Mapping) else {}
        self._answers: dict[tuple[str, int], RunLogEntry] = {
            (e.item_id, e.repeat): e for e in log.final().values() if e.judge == judge
        }
        self.repeats = max((repeat for _, repeat in self._answers), default=-1) + 1

    def _entry(self, item_id: str, repeat: int) -> RunLogEntry | None:
        return self._answers.get((item_id, repeat))

    def nonce(self, item_id: str, repeat: int) -> str | None:
        """The logged prompt nonce, so the rebuilt prompt is the one the answer was for."""
        entry = self._entry(item_id, repeat)
        nonce = entry.data.get("nonce") if entry is not None else None
        return nonce if isinstance(nonce, str) and _NONCE.fullmatch(nonce) else None

    def origin(self, item_id: str, repeat: int) -> dict[str, Any] | None:
        """Where the replayed answer is: ``{path, line}`` (None when there is none)."""
        entry = self._entry(item_id, repeat)
        return {"path": self.path, "line": entry.line} if entry is not None else None

    async def answer(self, item: JudgeItem, repeat: int, prompt: str) -> Completion:
        """The logged answer of (item, repeat); ``CallFailed`` as the module docstring says."""
        entry = self._entry(item.item_id, repeat)
        if entry is None:
            raise CallFailed(
                "replay-missing",
                f"{self.path} has no answer of {self.name} for item {item.item_id!r} "
                f"repeat {repeat}",
            )
        if entry.data.get("item_sha256") != item.sha256:
            raise CallFailed(
                "replay-mismatch",
                f"{self.path} line {entry.line} answered item {item.item_id!r} with content "
                f"sha256 {str(entry.data.get('item_sha256'))[:12]}..., this item's is "
                f"{item.sha256[:12]}...",
            )
        logged_prompt = entry.data.get("prompt_sha256")
        if logged_prompt != hashlib.sha256(prompt.encode("utf-8")).hexdigest():
            raise CallFailed(
                "replay-mismatch",
                f"{self.path} line {entry.line} answered another prompt (prompt_sha256 "
                f"{str(logged_prompt)[:12]}...) than the one rebuilt for item {item.item_id!r}",
            )
        if entry.outcome != "error":
            reading = read_reply(
                entry.data.get("reply"),
                item_id=item.item_id,
                rubric_version=item.rubric_version,
                nonce=entry.data.get("nonce"),
            )
            if (reading.status or CANNOT_PARSE) != entry.status:
                raise CallFailed(
                    "replay-mismatch",
                    f"{self.path} line {entry.line}: its status {entry.status!r} is not what its "
                    f"reply reads as ({reading.status or CANNOT_PARSE!r}); the line was edited",
                )
        if entry.outcome == "error":
            error = entry.data["error"]
            status = error.get("http_status")
            raise CallFailed(
                error["kind"],
                str(error.get("message")),
                status if isinstance(status, int) and not isinstance(status, bool) else None,
            )
        reply = entry.data.get("reply")
        model = entry.data.get("model")
        return Completion(
            text=reply if isinstance(reply, str) else "",
            model=model if isinstance(model, str) else None,
            input_tokens=_count(entry.data.get("input_tokens")),
            output_tokens=_count(entry.data.get("output_tokens")),
        )

    async def aclose(self) -> None:
        """Nothing to close: no connection was opened."""
