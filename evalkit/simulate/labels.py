"""Seeded rater labels over a latent true label (the agreement study's default data).

Nothing here is real data: each simulated rater has its own confusion matrix around a latent
label drawn from a target's class shares (see :data:`DEFAULT_TARGETS`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError

if TYPE_CHECKING:  # pandas only where tables are the natural output
    import pandas as pd

__all__ = ["DEFAULT_FAMILIES", "DEFAULT_TARGETS", "simulate_labels"]


@dataclass(frozen=True)
class _TargetSpec:
    categories: tuple[str, ...]
    prevalence: tuple[float, ...]
    accuracy: float  # probability a rater reports the latent label


# The default targets: a moderately ambiguous three-way status, a variance-free one (every rater
# says pass on every item, as report-quality did), a skewed binary one (the kappa paradox:
# high raw agreement, low kappa) and a balanced binary one.
DEFAULT_TARGETS: dict[str, _TargetSpec] = {
    "ia_status": _TargetSpec(("pass", "fail", "cannot-determine"), (0.55, 0.2, 0.25), 0.62),
    "rq_status": _TargetSpec(("pass",), (1.0,), 1.0),
    "changes_verified": _TargetSpec(("yes", "no"), (0.94, 0.06), 0.93),
    "scope_kept": _TargetSpec(("yes", "no"), (0.5, 0.5), 0.88),
}
DEFAULT_FAMILIES: tuple[str, ...] = ("human", "model-a", "model-b")


def simulate_labels(
    n_items: int = 40,
    *,
    targets: Sequence[str] | None = None,
    families: Sequence[str] = DEFAULT_FAMILIES,
    raters_per_family: int = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """Rater labels over a latent true label, as a long table.

    Columns: ``item_id, target, family, rater, label`` (plus ``truth``, the latent label, kept
    for checks; an agreement study must not read it). Each rater has its own confusion matrix:
    with probability ``accuracy`` (shifted per rater by up to +-0.08) it reports the latent
    label, otherwise a label drawn from its own bias vector over the other categories.
    """
    import pandas as pd  # deferred: heavy; only the table needs it

    names = list(targets) if targets is not None else list(DEFAULT_TARGETS)
    unknown = [t for t in names if t not in DEFAULT_TARGETS]
    if unknown:
        raise EvalkitError(
            f"simulate_labels: unknown target(s) {unknown}; known: {', '.join(DEFAULT_TARGETS)}"
        )
    if not isinstance(n_items, int) or n_items < 2:
        raise EvalkitError(f"simulate_labels: n_items must be an int >= 2, got {n_items!r}")
    if raters_per_family < 1 or not families:
        raise EvalkitError("simulate_labels: need at least one family and one rater per family")
    rng = random.Random(seed)
    raters = [(f, f"{f}-{k + 1}") for f in families for k in range(raters_per_family)]
    rows = []
    for target in names:
        spec = DEFAULT_TARGETS[target]
        skill = {r: min(1.0, max(0.0, spec.accuracy + rng.uniform(-0.08, 0.08))) for _, r in raters}
        if len(spec.categories) == 1:
            skill = dict.fromkeys(skill, 1.0)
        bias = {r: [rng.random() + 0.1 for _ in spec.categories] for _, r in raters}
        for i in range(n_items):
            truth = rng.choices(spec.categories, weights=spec.prevalence)[0]
            for fam, r in raters:
                if rng.random() < skill[r]:
                    label = truth
                else:
                    others = [c for c in spec.categories if c != truth]
                    weights = [bias[r][spec.categories.index(c)] for c in others]
                    label = rng.choices(others, weights=weights)[0]
                rows.append(
                    {
                        "item_id": f"item-{i + 1:03d}",
                        "target": target,
                        "family": fam,
                        "rater": r,
                        "label": label,
                        "truth": truth,
                    }
                )
    return pd.DataFrame(rows, columns=["item_id", "target", "family", "rater", "label", "truth"])
