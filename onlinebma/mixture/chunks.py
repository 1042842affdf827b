"""EM on records split in chunks: what each chunk contributes, as sums (no Dask here).

The E step of EM (:mod:`~onlinebma.mixture.em`) is a sum over records: the data term of the
objective and the expected sufficient statistics (:class:`~onlinebma.mixture.em.Expected`) of
the responsibilities. So is everything else a fit needs from the records, except two medians:

- the constants of EM (:class:`~onlinebma.mixture.em.Totals`): records, classes, the
  features' marginal moments;
- the criteria's sums (:meth:`~onlinebma.mixture.em.EMEngine.score_sums`);
- the split start's component totals (:func:`~onlinebma.mixture.starts.split_parts`);
- the medians behind the robust coordinates of the numeric features and the split start's
  threshold: order statistics, found exactly by narrowing an interval with counts from every
  chunk (:func:`interval_summary`, :func:`counts_at`) until few enough values are left to
  gather (:func:`values_between`);
- the seed records of the random starts, fetched by position (:func:`records`).

Each function here takes one chunk — its :class:`~onlinebma.mixture.em.Design` or its
:class:`~onlinebma.mixture.em.EMEngine` (built with the constants of all records) — and
returns something small that adds up with :func:`add`. :mod:`onlinebma.mixture.distributed_em` runs
them where the partitions of a Dask frame lie and runs the M step once on the sums; one chunk
holding every record gives the single-machine fit.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from .arrays import Design, Params
from .em import EMEngine
from .starts import split_parts, split_tau

__all__ = ["SplitStart", "add", "counts_at", "deviations", "dev_sums", "em_round",
           "expected_of", "interval_summary", "observed", "records", "score_round", "split_totals",
           "split_values", "totals", "values_between"]


def add(*parts):
    """Sum of chunk results, left to right: numbers, :class:`~onlinebma.mixture.em.Expected`,
    :class:`~onlinebma.mixture.em.Totals`, numpy arrays, or lists/tuples of them (summed
    element by element)."""
    first = parts[0]
    if isinstance(first, (list, tuple)):
        return type(first)(add(*items) for items in zip(*parts))
    out = first
    for p in parts[1:]:
        out = out + p
    return out


# ------------------------------------------------------------- the constants of EM

def observed(design: Design, j: int) -> np.ndarray:
    """The observed values of numeric feature ``j``."""
    return design.x[design.obs[:, j], j]


def deviations(design: Design, j: int, center: float) -> np.ndarray:
    """``|x - center|`` of the observed values of numeric feature ``j`` (inf on overflow)."""
    with np.errstate(over="ignore"):
        return np.abs(observed(design, j) - center)


def dev_sums(design: Design, center: np.ndarray, n_total: int) -> np.ndarray:
    """Per numeric feature, the sum of the deviations behind the mean-deviation fallback of
    :func:`~onlinebma.mixture.em.coordinates` (each capped as there); with the counts of
    observed values it gives their mean."""
    with np.errstate(over="ignore"):
        dev = np.abs(design.x - center)
    capped = np.minimum(dev, np.finfo(float).max / max(n_total, 1))
    return np.where(design.obs, capped, 0.0).sum(axis=0)


def totals(s: EMEngine):
    """The chunk's :class:`~onlinebma.mixture.em.Totals`."""
    return s.chunk_totals()


def with_totals(s: EMEngine, all_totals) -> EMEngine:
    """A shallow copy of the chunk's engine with the constants of all records."""
    out = copy.copy(s)
    out.use_totals(all_totals)
    return out


# ------------------------------------------------------------------ EM rounds

@dataclass
class SplitStart:
    """The start that splits component ``j`` of the ``K - 1`` fit ``smaller`` at
    ``threshold`` (:func:`~onlinebma.mixture.starts.split_tau`)."""

    smaller: Params
    hard: bool
    j: int
    threshold: float | None


def expected_of(s: EMEngine, start):
    """The :class:`~onlinebma.mixture.em.Expected` statistics of a start on the chunk:
    ``"one"`` (every record in one component) or a :class:`SplitStart`."""
    if isinstance(start, SplitStart):
        joint, best, tau = split_parts(s.joint(start.smaller, jitter=False), start.hard)
        return s.expected(split_tau(joint, best, tau, start.j, start.threshold))
    if start == "one":
        return s.expected(s.all_in_one())
    raise ValueError(f"unknown start {start!r}")


def em_round(s: EMEngine, params: list, hard: bool) -> list:
    """One E step of each parameter set on the chunk: ``[(data term, Expected)]``."""
    out = []
    for p in params:
        data, tau = s.responsibilities(p, hard)
        out.append((data, s.expected(tau)))
    return out


def score_round(s: EMEngine, params: list) -> list:
    """:meth:`~onlinebma.mixture.em.EMEngine.score_sums` of each parameter set on the chunk."""
    return s.sums_for_scores(params)


def split_totals(s: EMEngine, smaller: Params, hard: bool) -> np.ndarray:
    """Responsibility totals per component of the ``K - 1`` fit (which one is heaviest)."""
    return split_parts(s.joint(smaller, jitter=False), hard)[2].sum(axis=0)


def split_values(s: EMEngine, smaller: Params, hard: bool, j: int) -> np.ndarray:
    """Log joints in component ``j`` of the chunk's records whose most probable component is
    ``j`` (the split start takes their median)."""
    joint, best, _ = split_parts(s.joint(smaller, jitter=False), hard)
    return joint[best == j, j]


def records(s: EMEngine, index) -> tuple:
    """``(onehot, x, obs)`` of the chunk's records at positions ``index``."""
    return s.records(np.asarray(index, dtype=np.int64))


# ------------------------------------------------------------- order statistics

def _above(values: np.ndarray, lo: float) -> np.ndarray:
    """Values above ``lo``; all of them when ``lo`` is -inf."""
    return values if lo == -np.inf else values[values > lo]


def _inside(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Values strictly between ``lo`` and ``hi``, sorted; an infinite bound excludes none."""
    above = _above(values, lo)
    return np.sort(above if hi == np.inf else above[above < hi])


def interval_summary(values: np.ndarray, lo: float, hi: float, size: int) -> tuple:
    """``(count, samples)``: how many values lie strictly between ``lo`` and ``hi``, and up to
    ``size`` of them evenly spaced in rank (the pivots of the next narrowing)."""
    inside = _inside(values, lo, hi)
    if len(inside) <= size:
        return len(inside), inside
    return len(inside), inside[np.linspace(0, len(inside) - 1, size).astype(np.int64)]


def counts_at(values: np.ndarray, lo: float, pivots: np.ndarray) -> tuple:
    """``(le, lt)``: per pivot, how many values above ``lo`` are ``<=`` and ``<`` it."""
    above = np.sort(_above(values, lo))
    return (np.searchsorted(above, pivots, side="right"),
            np.searchsorted(above, pivots, side="left"))


def values_between(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The values strictly between ``lo`` and ``hi``, sorted."""
    return _inside(values, lo, hi)
