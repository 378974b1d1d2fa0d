"""Adding a dimension to a rubric version is one new module plus one line of the registry.

The made-up ``agent-budget`` dimension lives in ``tests/made_up_dimension.py`` (the one new
module, written as a real dimension module is). The made-up rubric-v3 is rubric-v2's table plus
that one line (:data:`V3_TABLE`); the registry learns it in a fixture, without a file edited
(:func:`evalkit.rubrics.registry.registered`). Nothing else in evalkit is touched, and the tests
below show the new dimension scored, journaled, read back by the judge facts, and rubric-v1 and
rubric-v2 unchanged while rubric-v3 is known and after.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import made_up_dimension
import pytest
from test_rubric_v1_rows import TS, gate, noise, session, write_ledger

from evalkit.errors import EvalkitError, VersionMismatchError
from evalkit.journal import reader as journal
from evalkit.judge.facts import FACT_KEYS, compute_facts
from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric, v1, v2
from evalkit.rubrics.registry import Rubric, registered
from evalkit.scoring.engine import score_session

#: The whole of rubric-v3's table: rubric-v2's, plus one line.
V3_TABLE = (*v2.DIMENSIONS, made_up_dimension.V3)

V3_TEXT = "# rubric-v3 (made up)\n\nrubric-v2's six dimensions, plus `agent-budget`.\n"


def make_rubric_v3(tmp_path: Path) -> Rubric:
    """rubric-v3 with its pre-registered text in ``tmp_path``."""
    texts = tmp_path / "rubrics"
    texts.mkdir(exist_ok=True)
    (texts / "rubric-v3.md").write_text(V3_TEXT, encoding="utf-8")
    return Rubric("rubric-v3", V3_TABLE, "rotation", text_dir=texts)  # the registry line


@pytest.fixture
def rubric_v3(tmp_path: Path) -> Iterator[Rubric]:
    """rubric-v3, known to the registry for the test only."""
    with registered(make_rubric_v3(tmp_path)) as (rubric,):
        yield rubric


def _ledger(root: Path, **overrides: object) -> Path:
    return write_ledger(
        root,
        [session(**overrides)],
        [noise(), gate("2026-09-19T08:30:00.000Z"), gate("2026-09-19T09:30:00.000Z", 1)],
    )


def _record(root: Path, rubric: str) -> dict:
    return score_session(root, "s1", rubric, timestamp=TS).to_dict()


@pytest.mark.usefixtures("rubric_v3")
@pytest.mark.parametrize(
    ("agents", "status", "evidence"),
    [
        (3, "pass", "total_agents=3 (v3 budget: pass iff total_agents <= 8)."),
        (12, "fail", "total_agents=12 (v3 budget: pass iff total_agents <= 8)."),
        (None, "cannot-determine", "total_agents unknown — agent budget not assessable."),
    ],
)
def test_the_new_dimension_is_scored(
    tmp_path: Path, agents: int | None, status: str, evidence: str
) -> None:
    record = _record(_ledger(tmp_path, total_agents=agents), "rubric-v3")
    assert record["rubric_version"] == "rubric-v3"
    assert record["provenance"]["rubric_sha256"] == hashlib.sha256(V3_TEXT.encode()).hexdigest()
    assert [d["id"] for d in record["dimensions"]] == [
        *get_rubric("rubric-v2").dimension_ids,
        "agent-budget",
    ]
    new = record["dimensions"][-1]
    assert (new["method"], new["status"], new["evidence"]) == ("deterministic", status, evidence)


def test_the_new_dimension_is_journaled_and_read_back_by_the_facts(
    tmp_path: Path, rubric_v3: Rubric
) -> None:
    record = _record(_ledger(tmp_path / "ledger", total_agents=12), "rubric-v3")
    path = tmp_path / "eval.jsonl"
    journal.append(path, record)
    (stored,) = journal.read(path).records
    facts = compute_facts(stored["dimensions"], rubric="rubric-v3")
    assert list(facts) == [*FACT_KEYS, "agent_count"]
    assert facts["agent_count"] == 12
    # The fifteen reference facts are what rubric-v2's reader makes of the same record.
    v2_facts = compute_facts(stored["dimensions"])
    assert {k: facts[k] for k in FACT_KEYS} == v2_facts
    assert v2_facts["gate_runs_total"] == 2 and v2_facts["parse_misses"] == []
    # Its reader goes blind like any other: a reworded string is a parse miss, not a null.
    reworded = [
        dict(d, evidence=d["evidence"].replace("total_agents=", "agents: "))
        if d["id"] == "agent-budget"
        else d
        for d in stored["dimensions"]
    ]
    blind = compute_facts(reworded, rubric=rubric_v3)
    assert blind["agent_count"] is None
    assert blind["parse_misses"] == [
        {"fact": "agent_count", "dimension": "agent-budget", "reason": "no total_agents= count"}
    ]


def test_rubric_v1_and_v2_are_unchanged(tmp_path: Path) -> None:
    root = _ledger(tmp_path / "ledger", total_agents=12)
    shipped = ("rubric-v1", "rubric-v2")
    before = {version: _record(root, version) for version in shipped}
    with registered(make_rubric_v3(tmp_path)):
        during = {version: _record(root, version) for version in shipped}
        v3_record = _record(root, "rubric-v3")
        assert get_rubric("rubric-v1").dimensions == v1.DIMENSIONS
        assert get_rubric("rubric-v2").dimensions == v2.DIMENSIONS
        assert shipped == RUBRIC_VERSIONS
    after = {version: _record(root, version) for version in shipped}
    assert before == during == after
    # v3 is v2 plus one dimension: the six dimensions it shares with v2 are v2's, byte for byte.
    assert v3_record["dimensions"][:-1] == before["rubric-v2"]["dimensions"]
    # The facts of v1 and v2 records are the fifteen keys, whatever rubric-v3 adds.
    for record in before.values():
        assert list(compute_facts(record["dimensions"])) == list(FACT_KEYS)
    # Once the block is left, rubric-v3 is unknown again.
    with pytest.raises(VersionMismatchError):
        get_rubric("rubric-v3")


def test_a_shipped_version_cannot_be_replaced() -> None:
    impostor = Rubric("rubric-v2", V3_TABLE, "rotation")
    with pytest.raises(EvalkitError, match="already registered"), registered(impostor):
        pass  # pragma: no cover - never entered
    assert get_rubric("rubric-v2").dimensions == v2.DIMENSIONS
