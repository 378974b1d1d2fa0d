"""``agent-budget``: a made-up dimension of a made-up rubric-v3 (the acceptance test's one new
module; see ``test_rubric_v3_acceptance.py``).

Written exactly as a real dimension module is: its scorer for the version that defines it, its
evidence templates, their reader beside them, its named threshold, its facts reader and its
spec. Did the session stay within an agent budget? ``total_agents <= 8`` passes, more fails,
unknown is ``cannot-determine`` (never a guessed pass or fail).
"""

from __future__ import annotations

import re
from typing import Any, Final

from evalkit.js.values import js_string
from evalkit.record.dimension import Dimension, Method, Status
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import Misses, Number, Reading, RecordView, first_number
from evalkit.rubrics.dimensions.spec import DimensionSpec, FactsReader

ID: Final = "agent-budget"
#: rubric-v3's (made-up) threshold: pass iff total_agents <= 8.
AGENT_BUDGET: Final = 8


def agents_counted(total_agents: Any) -> str:
    return (
        f"total_agents={js_string(total_agents)} (v3 budget: pass iff total_agents <= "
        f"{AGENT_BUDGET})."
    )


def agents_unknown() -> str:
    return "total_agents unknown — agent budget not assessable."


TEMPLATES = (agents_counted, agents_unknown)

# agents_counted: "total_agents=N (v3 budget"
_AGENTS = re.compile(r"total_agents=(\d+) \(v3 budget", re.ASCII)


def read_agents(text: str) -> Number | None:
    """Reader of :func:`agents_counted`."""
    return first_number(_AGENTS, text)


def score_v3(ctx: ScoringContext) -> Dimension:
    agents = ctx.kpis.total_agents
    if agents is None:
        return Dimension(ID, Method.DETERMINISTIC, Status.CANNOT_DETERMINE, agents_unknown())
    status = Status.PASS if agents <= AGENT_BUDGET else Status.FAIL
    return Dimension(ID, Method.DETERMINISTIC, status, agents_counted(agents))


def read_facts(view: RecordView) -> Reading:
    text = view.evidence(ID)
    if text is None or text == agents_unknown():
        return Reading()
    misses = Misses(ID)
    agents = misses.required(read_agents(text), "agent_count", "no total_agents= count")
    return Reading({"agent_count": agents}, tuple(misses.items))


FACTS = FactsReader(ID, ("agent_count",), read_facts)

V3 = DimensionSpec(ID, score_v3, TEMPLATES, FACTS, event_derived=False)
