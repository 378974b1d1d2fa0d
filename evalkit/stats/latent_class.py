"""Dawid-Skene latent-class model: each judge's confusion matrix and the class shares, no gold.

Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
algorithm", Applied Statistics 28(1): 20-28. Every item has an unknown true class ``z`` with
``P(z = k) = p_k``; judge ``j`` gives label ``l`` to an item of class ``k`` with probability
``e_j[k, l]``, independently of the other judges given ``z``. EM, as crowd-kit's
``DawidSkene`` (the implementation the tests compare against):

* **init**: each item's class probabilities are its vote shares (soft majority vote), and
  ``p`` is their mean;
* **M-step**: ``e_j[k, l]`` proportional to the expected number of items of class k judge j
  labelled l, each entry floored at 1e-10 before normalising (a label a judge never gave
  would otherwise have probability 0 and a log of minus infinity);
* **E-step**: item class probabilities proportional to ``p_k prod_j e_j[k, y_ij]`` (in logs,
  ``p`` floored at 1e-10), then ``p`` = their mean;
* **stop** when the evidence lower bound per label (expected complete-data log-likelihood
  plus the entropy of the item class probabilities) rises by less than ``tol`` (default
  1e-8) *and* no class share or error rate moved by more than ``tol`` in the round, or
  after ``max_iter`` (default 1000) E/M rounds. The bound alone is not enough: near its
  optimum it is flat to second order, so a gain below 1e-8 still leaves parameters ~1e-4
  per round from it (on R irr's ``video`` data the bound-only rule stopped with shares
  2e-6 off the optimum). crowd-kit's defaults (100 rounds, 1e-5) stop earlier, and its
  bound counts the log prior once per label instead of once per item, so the two stop at
  different rounds; run to convergence they agree (the tests check 1e-6).

Items without any label are left out. Class shares and error rates are identified only up to
a relabelling of the latent classes; starting from the majority vote ties each latent class
to the label of the same name, which holds when the judges are better than chance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_shares
from evalkit.errors import EvalkitError
from evalkit.stats import _shares as sh
from evalkit.stats._labels import as_panel, check_classes, encode, order_classes

__all__ = ["DawidSkeneResult", "dawid_skene", "dawid_skene_codes"]

_EPS = 1e-10


@dataclass(frozen=True, repr=False)
class DawidSkeneResult(Readable):
    """Latent-class estimates.

    ``class_shares`` (class -> share; the ``statistic``), ``confusion`` (judge -> true class ->
    label -> probability), per-item ``posterior`` (items x classes, rows of the items used) and
    ``most_likely`` class per item used.
    """

    class_shares: Mapping[Any, float]
    confusion: Mapping[Any, Mapping[Any, Mapping[Any, float]]]
    classes: tuple[Any, ...]
    judges: tuple[Any, ...]
    n: int
    n_labels: int
    iterations: int
    converged: bool
    elbo: float
    items: tuple[int, ...] = field(repr=False, default=())
    posterior: NDArray[np.float64] = field(repr=False, default_factory=lambda: np.empty((0, 0)))

    @property
    def statistic(self) -> Mapping[Any, float]:
        """The class shares (scipy-style name)."""
        return self.class_shares

    def _headline(self) -> str:
        converged = "converged" if self.converged else "NOT converged"
        return (
            f"Dawid-Skene class shares {fmt_shares(self.class_shares, None, self.classes)}, "
            f"n = {self.n}, {len(self.judges)} judges ({converged}, {self.iterations} iterations)"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("class shares", fmt_shares(self.class_shares, None, self.classes)),
            ("items", self.n),
            ("labels", self.n_labels),
            ("judges", ", ".join(str(j) for j in self.judges)),
            ("iterations", self.iterations),
            ("converged", self.converged),
            ("evidence lower bound", self.elbo),
        ]

    @property
    def most_likely(self) -> tuple[Any, ...]:
        """The most likely class of each item used."""
        return tuple(self.classes[i] for i in np.argmax(self.posterior, axis=1))

    def to_dict(self) -> dict[str, Any]:
        """The estimates as JSON-simple values."""
        return {
            "class_shares": sh.json_shares(self.class_shares),
            "confusion": {
                str(j): {str(k): sh.json_shares(row) for k, row in m.items()}
                for j, m in self.confusion.items()
            },
            "n": self.n,
            "n_labels": self.n_labels,
            "iterations": self.iterations,
            "converged": self.converged,
        }


def _m_step(codes: NDArray[np.intp], post: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """Judges x classes x labels error rates from item class probabilities."""
    m = codes.shape[1]
    err = np.zeros((m, k, k))
    for j in range(m):
        seen = codes[:, j] >= 0
        onehot = np.eye(k)[codes[seen, j]]  # items x labels
        err[j] = post[seen].T @ onehot
    err = np.maximum(err, _EPS)
    rates: NDArray[np.float64] = err / err.sum(axis=2, keepdims=True)
    return rates


def _log_terms(
    codes: NDArray[np.intp], err: NDArray[np.float64], prior: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Items x classes: log p_k + sum_j log e_j[k, y_ij] (missing labels add nothing)."""
    n, m = codes.shape
    out = np.tile(np.log(np.maximum(prior, _EPS)), (n, 1))
    for j in range(m):
        seen = codes[:, j] >= 0
        out[seen] += np.log(err[j][:, codes[seen, j]]).T
    return out


def _e_step(log_terms: NDArray[np.float64]) -> NDArray[np.float64]:
    shifted = np.exp(log_terms - log_terms.max(axis=1, keepdims=True))
    posterior: NDArray[np.float64] = shifted / shifted.sum(axis=1, keepdims=True)
    return posterior


def _elbo(post: NDArray[np.float64], log_terms: NDArray[np.float64], n_labels: int) -> float:
    p = np.maximum(post, _EPS)
    return float((np.sum(post * log_terms) - np.sum(p * np.log(p))) / n_labels)


def dawid_skene_codes(
    codes: NDArray[np.intp], k: int, *, max_iter: int = 1000, tol: float = 1e-8
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], int, bool, float]:
    """EM on items x judges class codes (-1 missing; every item has a label).

    Returns ``(class shares, errors judges x k x k, posterior items x k, iterations,
    converged, elbo)``.
    """
    n_labels = int(np.sum(codes >= 0))
    votes = np.zeros((codes.shape[0], k))
    for j in range(codes.shape[1]):
        seen = codes[:, j] >= 0
        np.add.at(votes, (np.nonzero(seen)[0], codes[seen, j]), 1.0)
    post = votes / votes.sum(axis=1, keepdims=True)
    prior = post.mean(axis=0)
    err = _m_step(codes, post, k)
    elbo, converged, it = -np.inf, False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        post = _e_step(_log_terms(codes, err, prior))
        old_prior, old_err = prior, err
        prior = post.mean(axis=0)
        err = _m_step(codes, post, k)
        new = _elbo(post, _log_terms(codes, err, prior), n_labels)
        moved = max(float(np.max(np.abs(prior - old_prior))), float(np.max(np.abs(err - old_err))))
        if new - elbo < tol and moved < tol:
            elbo, converged = new, True
            break
        elbo = new
    return prior, err, post, it, converged, elbo


def _check_iter(max_iter: Any, tol: Any) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise EvalkitError(f"max_iter must be a positive int, got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol > 0:
        raise EvalkitError(f"tol must be a positive number, got {tol!r}")


def panel_codes(
    columns: Sequence[Sequence[Any]], classes: tuple[Any, ...] | None, argname: str
) -> tuple[tuple[Any, ...], NDArray[np.intp]]:
    """Classes and the items x judges code matrix (-1 missing) of a panel."""
    cls = classes or order_classes([lab for col in columns for lab in col])
    if not cls:
        raise EvalkitError(f"{argname} has no label at all (every value is missing)")
    codes = np.stack(
        [encode(col, cls, f"{argname} (judge {g})") for g, col in enumerate(columns)], axis=1
    )
    return cls, codes


def dawid_skene(
    labels: Any, *, classes: Any = None, max_iter: int = 1000, tol: float = 1e-8
) -> DawidSkeneResult:
    """Dawid-Skene estimates of each judge's confusion matrix and of the class shares.

    ``labels``: a mapping judge -> label sequence over the same items (None = not labelled),
    a DataFrame with one column per judge, or items x judges rows. See the module docstring
    for the EM, its initialisation and its stopping rule.
    """
    _check_iter(max_iter, tol)
    judges, columns = as_panel(labels)
    cls, codes = panel_codes(columns, check_classes(classes), "labels")
    used = np.nonzero((codes >= 0).any(axis=1))[0]
    k = len(cls)
    prior, err, post, it, conv, elbo = dawid_skene_codes(
        codes[used], k, max_iter=int(max_iter), tol=float(tol)
    )
    return DawidSkeneResult(
        class_shares={c: float(prior[i]) for i, c in enumerate(cls)},
        confusion={
            j: {
                c: {lab: float(err[g, i, b]) for b, lab in enumerate(cls)}
                for i, c in enumerate(cls)
            }
            for g, j in enumerate(judges)
        },
        classes=cls,
        judges=judges,
        n=int(used.size),
        n_labels=int(np.sum(codes >= 0)),
        iterations=it,
        converged=conv,
        elbo=elbo,
        items=tuple(int(i) for i in used),
        posterior=post,
    )
