"""Seeded, synthetic default data for the studies: ledgers, rater labels, a model judge.

Nothing here is real data, and every page that shows it says so.

* :mod:`evalkit.simulate.ledgers`: metrics directories with the ledger shapes the orchestrator
  writes, and the preset ``rubric-v2-2026-09-19`` (:func:`build_preset`).
* :mod:`evalkit.simulate.labels`: rater labels over a latent true label (:func:`simulate_labels`).
* :mod:`evalkit.simulate.model_judge`: a model judge with a known confusion, per-item
  difficulty, repeats and parse failures (:class:`SimulatedModelJudge`), and targets with known
  class shares (:func:`simulate_target`).
"""

from __future__ import annotations

from evalkit.simulate.labels import DEFAULT_FAMILIES, DEFAULT_TARGETS, simulate_labels
from evalkit.simulate.ledgers import (
    PRESET_RUBRIC_V2,
    PRESETS,
    SimulatedLedger,
    build_preset,
    simulate_metrics_dir,
)
from evalkit.simulate.model_judge import (
    DEFAULT_JUDGE_CONFUSION,
    SIMULATED_JUDGE_NAME,
    SimulatedModelJudge,
    simulate_target,
)

__all__ = [
    "DEFAULT_FAMILIES",
    "DEFAULT_JUDGE_CONFUSION",
    "DEFAULT_TARGETS",
    "PRESETS",
    "PRESET_RUBRIC_V2",
    "SIMULATED_JUDGE_NAME",
    "SimulatedLedger",
    "SimulatedModelJudge",
    "build_preset",
    "simulate_labels",
    "simulate_metrics_dir",
    "simulate_target",
]
