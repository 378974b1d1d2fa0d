"""Pre-registered rubrics: a registry keyed by version, one scorer table per version.

``get_rubric("rubric-v2")`` returns the :class:`~evalkit.rubrics.registry.Rubric` with its
``version``, ``text_path`` (``rubrics/rubric-v2.md``), ``sha256`` and ``dimension_ids``.
Evidence templates live in :mod:`evalkit.rubrics.evidence`, their readers in
:mod:`evalkit.rubrics.patterns`.
"""

from __future__ import annotations

from evalkit.rubrics.registry import RUBRIC_VERSIONS, Rubric, get_rubric

__all__ = ["RUBRIC_VERSIONS", "Rubric", "get_rubric"]
