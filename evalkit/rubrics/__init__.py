"""Pre-registered rubrics: a registry keyed by version, one scorer table per version.

``get_rubric("rubric-v2")`` returns the :class:`~evalkit.rubrics.registry.Rubric` with its
``version``, ``text_path`` (``rubrics/rubric-v2.md``), ``sha256`` and ``dimension_ids``.
Each version is a table of dimensions (:mod:`evalkit.rubrics.v1`, :mod:`evalkit.rubrics.v2`);
each dimension's scorers, evidence templates, readers, thresholds and judge-facts reader live in
its own module under :mod:`evalkit.rubrics.dimensions`.
"""

from __future__ import annotations

from evalkit.rubrics.registry import RUBRIC_VERSIONS, Rubric, get_rubric

__all__ = ["RUBRIC_VERSIONS", "Rubric", "get_rubric"]
