"""A simulated model judge: synthetic labels with a known confusion, item difficulty and repeats.

Nothing here is a real model. The judge-calibration and prevalence studies need a model judge
whose behaviour is *known*, so that a page can show an estimate beside the truth it should
recover. :class:`SimulatedModelJudge` labels items whose true class is given (gold labels, or a
simulated target from :func:`simulate_target`):

* **per-class confusion**: row ``c`` of ``confusion`` is the distribution of the judge's label
  when the true class is ``c``, for an item of average difficulty;
* **per-item difficulty**: each item gets a difficulty ``d ~ Normal(0, difficulty_sd)`` on the
  logit scale; the chance of the correct label is ``sigmoid(logit(confusion[c][c]) - d)``, and a
  wrong label is drawn from the row's off-diagonal weights. Repeats of one item share its
  difficulty, so hard items are the ones whose repeats disagree (as with a real model at
  temperature > 0);
* **parse failures**: each call fails to give a readable label with probability
  ``parse_failure_rate`` (outcome ``cannot-parse``, label None, never a guessed label).

Output is long format, one row per (item, repeat): ``item_id, judge, repeat, label, outcome``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_JUDGE_CONFUSION",
    "SIMULATED_JUDGE_NAME",
    "STATUSES",
    "SimulatedModelJudge",
    "simulate_target",
]

#: The three statuses a judge may give an ``instruction-adherence`` item.
STATUSES: tuple[str, ...] = ("pass", "fail", "cannot-determine")

#: The name the demo's simulated judge carries on every page: synthetic, said plainly.
SIMULATED_JUDGE_NAME = "simulated-model-judge (synthetic)"

#: The demo judge: good on clear passes, weaker on fails, and it over-uses ``pass`` when the
#: record does not settle the question (the typical failure of an LLM judge on abstentions).
DEFAULT_JUDGE_CONFUSION: Mapping[str, Mapping[str, float]] = {
    "pass": {"pass": 0.88, "fail": 0.05, "cannot-determine": 0.07},
    "fail": {"pass": 0.10, "fail": 0.80, "cannot-determine": 0.10},
    "cannot-determine": {"pass": 0.16, "fail": 0.08, "cannot-determine": 0.76},
}

_COLUMNS = ["item_id", "judge", "repeat", "label", "outcome"]


def _check_confusion(confusion: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    if set(confusion) != set(STATUSES):
        raise EvalkitError(f"confusion: rows must be exactly {STATUSES}, got {sorted(confusion)}")
    out: dict[str, dict[str, float]] = {}
    for truth, row in confusion.items():
        if set(row) != set(STATUSES):
            raise EvalkitError(f"confusion[{truth!r}]: columns must be exactly {STATUSES}")
        values = [float(row[s]) for s in STATUSES]
        if any(not math.isfinite(v) or v < 0 for v in values) or not math.isclose(
            sum(values), 1.0, abs_tol=1e-9
        ):
            raise EvalkitError(
                f"confusion[{truth!r}]: must be non-negative and sum to 1, got {values}"
            )
        if not 0 < row[truth] < 1:
            raise EvalkitError(
                f"confusion[{truth!r}][{truth!r}] must be strictly between 0 and 1 (the logit of "
                f"the correct-label chance is shifted by each item's difficulty), got {row[truth]}"
            )
        out[truth] = {s: float(row[s]) for s in STATUSES}
    return out


@dataclass(frozen=True)
class SimulatedModelJudge:
    """A synthetic model judge with a known confusion (see the module docstring)."""

    confusion: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: dict(DEFAULT_JUDGE_CONFUSION)
    )
    difficulty_sd: float = 1.0
    parse_failure_rate: float = 0.02
    name: str = SIMULATED_JUDGE_NAME

    def __post_init__(self) -> None:
        """Check the confusion matrix, the difficulty spread and the parse-failure rate."""
        object.__setattr__(self, "confusion", _check_confusion(self.confusion))
        if not math.isfinite(self.difficulty_sd) or self.difficulty_sd < 0:
            raise EvalkitError(f"difficulty_sd must be >= 0, got {self.difficulty_sd!r}")
        if not 0 <= self.parse_failure_rate < 1:
            raise EvalkitError(
                f"parse_failure_rate must be in [0, 1), got {self.parse_failure_rate!r}"
            )

    def correct_probability(self, truth: str, difficulty: float) -> float:
        """Chance of the correct label for an item of class ``truth`` and this difficulty."""
        p = self.confusion[truth][truth]
        logit = math.log(p / (1 - p)) - difficulty
        return 1 / (1 + math.exp(-logit))

    def label(
        self,
        truth: Sequence[str],
        item_ids: Sequence[str] | None = None,
        *,
        repeats: int = 5,
        rng: int | np.random.Generator = 0,
    ) -> pd.DataFrame:
        """Label every item ``repeats`` times; long format (see the module docstring).

        ``truth`` holds each item's true status; ``item_ids`` names them (default
        ``item-0001``...). The same ``rng`` seed gives the same labels.
        """
        import pandas as pd  # deferred: heavy; only the table needs it

        columns = self.label_columns(truth, item_ids, repeats=repeats, rng=rng)
        return pd.DataFrame(columns, columns=_COLUMNS)

    def label_columns(
        self,
        truth: Sequence[str],
        item_ids: Sequence[str] | None = None,
        *,
        repeats: int = 5,
        rng: int | np.random.Generator = 0,
    ) -> dict[str, list[Any]]:
        """:meth:`label`'s calls column by column, as lists: no table to build and read back."""
        ids = _item_ids(truth, item_ids)
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise EvalkitError(f"repeats must be an int >= 1, got {repeats!r}")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        item_col: list[str] = []
        repeat_col: list[int] = []
        label_col: list[str | None] = []
        outcome_col: list[str] = []
        per_class = {status: self._wrong_draw(status) for status in STATUSES}
        for item_id, true_status in zip(ids, truth, strict=True):
            if true_status not in STATUSES:
                raise EvalkitError(
                    f"truth of {item_id!r}: {true_status!r} is not one of {STATUSES}"
                )
            difficulty = float(gen.normal(0.0, self.difficulty_sd)) if self.difficulty_sd else 0.0
            p_correct = self.correct_probability(true_status, difficulty)
            wrong, first_below = per_class[true_status]
            for k in range(repeats):
                if gen.random() < self.parse_failure_rate:
                    given, outcome = None, "cannot-parse"
                elif gen.random() < p_correct:
                    given, outcome = true_status, "ok"
                else:  # Generator.choice(2, p=weights): one uniform draw against the cdf
                    given, outcome = wrong[0 if gen.random() < first_below else 1], "ok"
                item_col.append(item_id)
                repeat_col.append(k)
                label_col.append(given)
                outcome_col.append(outcome)
        columns = (item_col, [self.name] * len(item_col), repeat_col, label_col, outcome_col)
        return dict(zip(_COLUMNS, columns, strict=True))

    def _wrong_draw(self, truth: str) -> tuple[list[str], float]:
        """The wrong labels of class ``truth`` and the cdf's first step between them.

        The draw is the one ``Generator.choice(2, p=weights)`` makes (the cdf normalised by
        its last value, one uniform), so a seed gives the labels it always gave.
        """
        wrong = [s for s in STATUSES if s != truth]
        weights = np.array([self.confusion[truth][s] for s in wrong])
        weights = weights / weights.sum() if weights.sum() > 0 else np.full(2, 0.5)
        cdf = weights.cumsum()
        cdf /= cdf[-1]
        return wrong, float(cdf[0])


def _item_ids(truth: Sequence[str], item_ids: Sequence[str] | None) -> list[str]:
    if isinstance(truth, str) or not isinstance(truth, Sequence):
        raise EvalkitError("truth must be a sequence of status strings")
    if item_ids is None:
        return [f"item-{i + 1:04d}" for i in range(len(truth))]
    ids = [str(i) for i in item_ids]
    if len(ids) != len(truth):
        raise EvalkitError(f"item_ids ({len(ids)}) and truth ({len(truth)}) differ in length")
    if len(set(ids)) != len(ids):
        raise EvalkitError("item_ids must be unique")
    return ids


def simulate_target(
    n_items: int,
    shares: Mapping[str, float],
    *,
    rng: int | np.random.Generator = 0,
    prefix: str = "target",
) -> pd.DataFrame:
    """A simulated target with known class shares: columns ``item_id, truth``.

    Each item's true status is drawn independently from ``shares`` (status -> probability),
    so the realised shares scatter around ``shares`` as a real sample would; a study shows
    both (the known share the estimators should recover is ``shares``).
    """
    import pandas as pd  # deferred: heavy; only the table needs it

    if not isinstance(n_items, int) or isinstance(n_items, bool) or n_items < 1:
        raise EvalkitError(f"n_items must be an int >= 1, got {n_items!r}")
    unknown = set(shares) - set(STATUSES)
    if unknown:
        raise EvalkitError(f"shares: unknown status(es) {sorted(unknown)}; known: {STATUSES}")
    probs = np.array([float(shares.get(s, 0.0)) for s in STATUSES])
    if np.any(~np.isfinite(probs)) or np.any(probs < 0) or not math.isclose(probs.sum(), 1.0):
        raise EvalkitError(f"shares must be non-negative and sum to 1, got {dict(shares)}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    draws = gen.choice(len(STATUSES), size=n_items, p=probs)
    return pd.DataFrame(
        {
            "item_id": [f"{prefix}-{i + 1:05d}" for i in range(n_items)],
            "truth": [STATUSES[int(d)] for d in draws],
        }
    )
