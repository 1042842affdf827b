"""FAN and the finite mixture on Dask: distributed EM, the records staying where they lie.

Every partition of the frame becomes one chunk of EM (:mod:`onlinebma.mixture.chunks`),
built where the partition lies and kept there (``persist``). Each EM round sends the current
parameters to the chunks, which return the data term of the objective and the expected
sufficient statistics of their records' responsibilities; these are summed in a tree of
fan-in ``split_every`` and the M step runs once, on the sums. The random restarts of every
number of components (``n_init``) go side by side: one round does the E steps of all runs
still going. Only parameters and statistics travel (their size depends on the features'
values and the components, not on the records), plus ``n_init - 1`` seed records per K.

The result is the model of ``model.clone().fit(X, y)`` on the whole frame (its records in
partition order): the same coding (values and classes in order of first appearance), the same
random starts, the same EM iterates up to the order in which sums are added (1e-9 in tests),
the same fitted attributes and predictions. Two medians are not sums (the robust coordinates
of the numeric features and the split start's threshold): they are found exactly by narrowing
an interval with counts from every chunk, then gathering the few values left.

The prequential criterion (the default) is refused: its evidence is the log loss of fits of
the first half of the records on the second half followed by warm-started refits, an order
that the pandas ``fit`` defines on one machine; the four criteria of the paper (``"bic"``,
``"aic"``, ``"cs"``, ``"icl"``) are computed from sums. A ``window`` is refused too (a stream
setting). See docs/fan.md.
"""

from __future__ import annotations

import math

import numpy as np

from .. import tuning
from ..distributed import require_dask
from ..distributed.coding_pass import CodingPlan, refuse_window
from ..distributed.partitions import DaskPartitions, split_partition, tree
from ..distributed.protocol import Partitions, Plan
from . import chunks
from .arrays import Expected
from .em import EMEngine
from .engine import Engine
from .layout import design as _design
from .layout import rows_of

__all__ = ["EMPlan", "PartitionedEngine", "fit_em", "median",
           "partitioned_engine", "select", "tree"]



def _chunk_design(template, part, target, index, table):
    """One partition in the EM engine's layout, coded by ``table`` (all records' coding)."""
    clone = template.clone()
    X, y = split_partition(part, target, index)
    clone.learn_many(X, y)
    rows = table.translate(clone.data_)
    return _design(table, rows, rows.y, len(table.classes))


def _chunk_engine(template, design, coords):
    return template.em_engine(design, coords=coords)


# ------------------------------------------------------------ the engine

class PartitionedEngine(Engine):
    """The engine interface (:class:`~onlinebma.mixture.engine.Engine`) over chunks that
    live on Dask's workers: each E step, M step from a start, score or split is one round of
    per-chunk work summed in a tree; everything that needs no records (the M step on sums,
    the prior, coordinates, prediction) is the engine without records ``proto``."""

    _CONSTANTS = ("alpha", "class_parent", "n_total", "class_counts", "eps", "marginal",
                  "center", "scale", "log_jacobian", "block_totals", "centred", "log_prior",
                  "log_joint_classes", "var_smoothing")

    def __init__(self, parts: list, sizes: list, proto: EMEngine, split_every: int):
        self.parts = parts  # persisted delayed chunk engines, in partition order
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.proto = proto
        self.d = proto.d  # the coding (no rows)
        self.split_every = split_every
        self.rounds = 0  # rounds over the chunks so far (for the benchmark)

    def __getattr__(self, name):
        if name in self._CONSTANTS:
            return getattr(self.__dict__["proto"], name)
        raise AttributeError(name)

    def map_chunks(self, fn, *args, reduce=True):
        """``fn(chunk, *args)`` on every chunk: their sum (a tree), or the list."""
        dask, _ = require_dask()
        self.rounds += 1
        out = [dask.delayed(fn)(part, *args) for part in self.parts]
        if not reduce:
            return list(dask.compute(*out))
        return dask.compute(tree(out, chunks.add, self.split_every))[0]

    # -------------------------------------------------------------- EM

    def m_steps(self, starts: list, floor, fallback) -> list:
        todo = [i for i, t in enumerate(starts) if not isinstance(t, Expected)]
        if todo:
            sums = self.map_chunks(_expected_of_starts, [starts[i] for i in todo])
            starts = list(starts)
            for i, e in zip(todo, sums):
                starts[i] = e
        return [self.proto.m_step(e, floor, fallback) for e in starts]

    def m_step(self, start, floor, fallback):
        return self.m_steps([start], floor, fallback)[0]

    def e_steps(self, params: list, hard: bool) -> list:
        if not params:
            return []
        sums = self.map_chunks(chunks.em_round, params, hard)
        return [(float(data + self.proto.log_prior(p)), e) for p, (data, e) in zip(params, sums)]

    def e_step(self, p, hard: bool):
        return self.e_steps([p], hard)[0]

    def sums_for_scores(self, params: list) -> list:
        return self.map_chunks(chunks.score_round, params)

    def all_in_one(self):
        return "one"

    def records(self, index) -> tuple:
        dask, _ = require_dask()
        index = np.asarray(index, dtype=np.int64)
        which = np.searchsorted(self.offsets, index, side="right") - 1
        self.rounds += 1
        got = dask.compute(*[dask.delayed(chunks.records)(self.parts[c], [i - self.offsets[c]])
                             for c, i in zip(which, index)])
        return tuple(np.concatenate([rows[part] for rows in got]) for part in range(3))

    def split_start(self, smaller, hard: bool):
        j = int(self.map_chunks(chunks.split_totals, smaller, hard).argmax())
        values = (chunks.split_values, smaller, hard, j)
        threshold = median(self, values)
        return chunks.SplitStart(smaller, hard, j, threshold)

    def without_records(self) -> EMEngine:
        return self.proto.without_records()


def _expected_of_starts(s, starts):
    return [chunks.expected_of(s, t) for t in starts]


# ------------------------------------------------------------ order statistics

def select(engine, values: tuple, k: int, count: int | None = None) -> float:
    """The ``k``-th smallest (0-based) of the values ``values[0](chunk, *values[1:])`` over
    every chunk of ``engine``, exactly: an open interval known to hold it is narrowed with
    per-chunk samples and counts until few values are left, which are gathered."""
    fn, args = values[0], values[1:]
    lo, hi, below = -math.inf, math.inf, 0
    while True:
        found = engine.map_chunks(_summary, fn, args, lo, hi, reduce=False)
        total = sum(n for n, _ in found)
        if total <= tuning.ORDER_STATISTIC_GATHER:
            left = np.sort(np.concatenate(engine.map_chunks(_between, fn, args, lo, hi,
                                                      reduce=False)))
            return float(left[k - below])
        pivots = np.unique(np.concatenate([s for _, s in found]))
        le, lt = engine.map_chunks(_counts, fn, args, lo, pivots)
        i = int(np.searchsorted(le, k - below, side="right"))  # first pivot past rank k
        if i < len(pivots) and lt[i] <= k - below:
            return float(pivots[i])  # rank k is a copy of this pivot
        if i > 0:
            lo, below = float(pivots[i - 1]), below + int(le[i - 1])
        if i < len(pivots):
            hi = float(pivots[i])


def median(engine, values: tuple):
    """``np.median`` of the values over every chunk (``None`` when there are none)."""
    fn, args = values[0], values[1:]
    m = int(sum(n for n, _ in engine.map_chunks(_summary, fn, args, -math.inf, math.inf,
                                          reduce=False)))
    if m == 0:
        return None
    low = select(engine, values, (m - 1) // 2)
    if m % 2:
        return np.float64(low)
    return np.mean(np.array([low, select(engine, values, m // 2)]))


def _summary(chunk, fn, args, lo, hi):
    return chunks.interval_summary(fn(chunk, *args), lo, hi, tuning.ORDER_STATISTIC_SAMPLES)


def _between(chunk, fn, args, lo, hi):
    return chunks.values_between(fn(chunk, *args), lo, hi)


def _counts(chunk, fn, args, lo, pivots):
    return chunks.counts_at(fn(chunk, *args), lo, pivots)


class _Designs:
    """Chunks that are still designs (before the coordinates are known): what
    :func:`select` needs of an engine."""

    def __init__(self, parts, split_every):
        self.parts, self.split_every, self.rounds = parts, split_every, 0

    map_chunks = PartitionedEngine.map_chunks


def _coordinates(designs: _Designs, q: int, n_total: int) -> tuple:
    """:func:`onlinebma.mixture.em.coordinates` of all records: per numeric feature the
    median of its observed values and their median absolute deviation from it (else their
    mean absolute deviation, else 1; a feature never observed: centre 0, scale 1)."""
    center, mad = np.zeros(q), np.zeros(q)
    for j in range(q):
        c = median(designs, (chunks.observed, j))
        if c is not None:
            center[j] = c
            mad[j] = median(designs, (chunks.deviations, j, c))
    mean_dev = np.zeros(q)
    if (mad == 0).any():
        w = designs.map_chunks(_observed_counts)
        mean_dev = designs.map_chunks(chunks.dev_sums, center, n_total) / np.maximum(w, 1)
    return center, np.where(mad > 0, mad, np.where(mean_dev > 0, mean_dev, 1.0))


def _observed_counts(design):
    return design.obs.sum(axis=0)


# ------------------------------------------------------------------ fit

class EMPlan(Plan):
    """The plan of FAN and FiniteMixture fitted cold with a criterion computed from sums
    (``"bic"``, ``"aic"``, ``"cs"``, ``"icl"``), without a window: a :class:`CodingPlan`
    pass, then distributed EM over the partitions where they lie (module docstring). The
    mixture chooses it in its ``distributed_plan()``; built directly, it refuses the
    prequential criterion and a window."""

    def __init__(self, model):
        if model.criterion == "prequential":
            raise ValueError(
                "criterion='prequential' cannot be fitted on Dask: its evidence is the log "
                "loss of a fit of the first half of the records on the second half, then "
                "warm-started refits (an order of fits over the whole frame); pass "
                "criterion='bic', 'aic', 'cs' or 'icl' (computed from sums), or fit with pandas")
        refuse_window(model)
        self.model = model

    def run(self, partitions: Partitions):
        out, engine, table = self.engine(partitions)
        out.fit_on_engine(engine, table)
        out.em_rounds_ = engine.rounds
        return out

    def engine(self, partitions: DaskPartitions) -> tuple:
        """``(coder, engine, table)``: a clone of the learner that has learned the frame's
        coding, the :class:`PartitionedEngine` over its partitions (chunks persisted on the
        workers) and the coding's table without rows."""
        dask, _ = require_dask()
        template = self.model.clone()
        out, sizes = CodingPlan(template).run(partitions)
        table = rows_of(out.data_, slice(0, 0))
        kept = [(i, p, n) for i, (p, n) in enumerate(zip(partitions.parts, sizes)) if n]
        n_total = sum(sizes)
        q = len(table.numeric_features)
        target, split_every = partitions.target, partitions.split_every
        designs = dask.persist(*[dask.delayed(_chunk_design)(template, p, target, i, table)
                                 for i, p, _ in kept])
        coords = _coordinates(_Designs(list(designs), split_every), q, n_total)
        engines = dask.persist(*[dask.delayed(_chunk_engine)(template, d, coords)
                                 for d in designs])
        totals = dask.compute(tree([dask.delayed(chunks.totals)(e) for e in engines],
                                   chunks.add, split_every))[0]
        engines = dask.persist(*[dask.delayed(chunks.with_totals)(e, totals) for e in engines])
        del designs
        proto = template.em_engine(_design(table, table, table.y, len(table.classes)),
                                   coords=coords, totals=totals)
        engine = PartitionedEngine(list(engines), [n for _, _, n in kept], proto, split_every)
        return out, engine, table


def fit_em(model, ddf, target: str, split_every: int):
    """``model.clone().fit(X, y)`` for the whole frame, by distributed EM (module docstring)."""
    return EMPlan(model).run(DaskPartitions(ddf, target, split_every))


def partitioned_engine(model, ddf, target: str, split_every: int) -> tuple:
    """:meth:`EMPlan.engine` of ``model`` on ``ddf``."""
    return EMPlan(model).engine(DaskPartitions(ddf, target, split_every))
