"""Named constants with one home: the dimension ids (evalkit.record.dimension.DimensionId) and the ~10%
fire-rate ceiling of rule HR-101 (evalkit.stats.FIRE_RATE_CEILING)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from pathlib import Path

import pytest

import evalkit
from evalkit.judge.parse import JUDGE_DIMENSION_IDS
from evalkit.record.dimension import Dimension, DimensionId, Method, Status
from evalkit.rubrics.registry import RUBRIC_VERSIONS, get_rubric
from evalkit.scoring.engine import SAMPLE_METRICS_DIR
from evalkit.stats import FIRE_RATE_CEILING, threshold_study
from evalkit.studies.run import declared_parameters

DIMENSION_MODULES = (
    "verification_evidence",
    "plan_fidelity",
    "gate_health",
    "process_safety",
    "guard_friction",
    "efficiency_kpis",
)


def test_the_enum_holds_exactly_the_ids_of_the_shipped_rubrics() -> None:
    shipped = {spec.id for v in RUBRIC_VERSIONS for spec in get_rubric(v).dimensions}
    judged = {i for ids in JUDGE_DIMENSION_IDS.values() for i in ids}
    assert {m.value for m in DimensionId} == shipped | judged
    assert len(DimensionId) == 8  # six deterministic, instruction-adherence, report-quality


@pytest.mark.parametrize("name", DIMENSION_MODULES)
def test_each_dimension_module_names_its_id_from_the_enum(name: str) -> None:
    module = importlib.import_module(f"evalkit.rubrics.dimensions.{name}")
    assert isinstance(module.ID, DimensionId)
    assert module.ID.value == name.replace("_", "-")


def test_records_and_facts_carry_plain_strings() -> None:
    dim = Dimension(DimensionId.GATE_HEALTH, Method.DETERMINISTIC, Status.PASS, "x")
    assert type(dim.id) is str and dim.id == "gate-health"
    for rubric in RUBRIC_VERSIONS:
        record = evalkit.score_session(SAMPLE_METRICS_DIR, rubric=rubric)
        assert all(type(d.id) is str for d in record.dimensions)
        as_dict = record.to_dict()
        assert all(type(d["id"]) is str for d in as_dict["dimensions"])
        assert json.loads(json.dumps(as_dict)) == as_dict
    # a reader's parse miss names its dimension as a plain string too
    facts = evalkit.compute_facts(
        [{"id": "gate-health", "method": "deterministic", "status": "pass", "evidence": "?"}]
    )
    assert facts["parse_misses"]
    assert all(type(m["dimension"]) is str for m in facts["parse_misses"])


def test_no_module_spells_a_dimension_id_but_the_enum() -> None:
    # one home: every id, judge ids included, is spelled in evalkit/record/dimension.py only
    ids = {m.value for m in DimensionId}
    root = Path(evalkit.__file__).parent
    spelled = [
        f"{path.relative_to(root)}:{node.lineno}: {node.value}"
        for path in sorted(root.rglob("*.py"))
        if path != root / "record" / "dimension.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in ids
    ]
    assert spelled == []


def test_the_judge_ids_are_the_enum_s_plain_strings() -> None:
    from evalkit.analyses.label_families import TARGET
    from evalkit.judge.prompt import JUDGE_QUESTIONS
    from evalkit.judge.reply import TARGET_DIMENSION

    assert JUDGE_DIMENSION_IDS == {
        "rubric-v1": (DimensionId.INSTRUCTION_ADHERENCE, DimensionId.REPORT_QUALITY),
        "rubric-v2": (DimensionId.INSTRUCTION_ADHERENCE,),
    }
    for version, questions in JUDGE_QUESTIONS.items():
        assert tuple(questions) == JUDGE_DIMENSION_IDS[version]
    # records, run logs and messages carry the plain id (its repr is 'instruction-adherence')
    plain = [*(i for ids in JUDGE_DIMENSION_IDS.values() for i in ids), TARGET_DIMENSION, TARGET]
    plain += [i for questions in JUDGE_QUESTIONS.values() for i in questions]
    assert all(type(i) is str for i in plain)
    assert TARGET_DIMENSION == TARGET == DimensionId.INSTRUCTION_ADHERENCE


def test_the_ceiling_is_one_constant() -> None:
    from evalkit.analyses import replay, threshold
    from evalkit.stats.thresholds import ThresholdStudy

    assert FIRE_RATE_CEILING == 0.10
    defaults = [
        inspect.signature(threshold_study).parameters["ceiling"].default,
        inspect.signature(replay.dead_instrument_flags).parameters["ceiling"].default,
        inspect.signature(replay.plot_rates).parameters["ceiling"].default,
        inspect.signature(threshold.study).parameters["ceiling"].default,
        ThresholdStudy.ceiling,
    ]
    assert all(d is FIRE_RATE_CEILING for d in defaults)
    # the notebooks' pre-registered parameter is the same number (their cells are hashed by
    # the lock, so they keep their literal)
    for study in ("threshold-study", "rubric-replay"):
        assert declared_parameters(study)["ceiling"].default == FIRE_RATE_CEILING
