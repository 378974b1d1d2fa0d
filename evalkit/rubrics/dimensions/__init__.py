"""One module per deterministic dimension: its scorers, evidence templates, readers and facts.

Each module (``verification_evidence``, ``plan_fidelity``, ``gate_health``, ``process_safety``,
``guard_friction``, ``efficiency_kpis``) holds everything about its dimension:

* the scorer of each rubric version that defines one (``score_v1``, ``score_v2``), a pure
  function of the frozen :class:`~evalkit.record.scoring_context.ScoringContext`;
* the evidence templates those scorers write, byte for byte the reference engine's;
* the readers of those templates, beside them, so a reworded template and its reader are one
  edit;
* its named thresholds;
* its part of the judge facts (a :class:`~evalkit.rubrics.dimensions.spec.FactsReader`);
* one :class:`~evalkit.rubrics.dimensions.spec.DimensionSpec` per rubric version that scores it
  differently (``V1``, ``V2``), which the version tables (:mod:`evalkit.rubrics.v1`,
  :mod:`evalkit.rubrics.v2`) list.

Adding a dimension to a new rubric version: write its module (templates, readers, ``score_v3``,
a ``FactsReader`` when the judge should read it, ``V3 = DimensionSpec(...)``) and add ``V3`` to
that version's table. Changing a dimension for a new version: add ``score_v3``/``V3`` beside the
old ones; the frozen versions keep naming their own spec. :mod:`.shared` holds the evidence
fragments several dimensions append, :mod:`.reading` the reading helpers, :mod:`.gates` the
questions analyses ask of either gate dimension's evidence.

This ``__init__`` imports nothing on purpose: the dimension modules import :mod:`.spec` and
:mod:`.reading`, and an eager import here would make that a cycle.
"""
