"""OrderMCMC and FixedOrderBMA on Dask: count tables per partition, summed; chains side by side.

The score tables of the order learners are K2 scores of contingency counts (``N_ijk`` and
``N_ij`` of every candidate family, :mod:`onlinebma.order_mcmc.incremental`). Each partition
is counted where it lies, in one layout that all partitions share (the numbers of values of
every node and which nodes have missing values, found in a first pass over the partitions);
the counts are summed in a tree of fan-in ``split_every`` and the scores computed once from
the sums. Only count tables travel, never records.

Candidate parents (``max_candidates``, :mod:`onlinebma.order_mcmc.candidates`) are chosen
first, from counts of every node under every other node and the class
(:class:`~onlinebma.order_mcmc.candidates.ClassPairCounts`, summed over the partitions in a
pass of their own), so the count tables hold the candidate families only: on a wide frame
their size is that of one machine's restricted tables, not of every parent set. The
candidates are those the learner chooses from the records on one machine. Counts are
integers, so the sums are those of one machine exactly, and so are the scores.

OrderMCMC's ``n_chains`` chains then run as Dask tasks side by side (distinct reproducible
seeds, see :class:`~onlinebma.order_mcmc.OrderMCMC`); their kept orders are pooled and the
split R-hat of their log-evidence traces is ``rhat_``. Chain 1 is the chain of ``fit`` on one
machine, so with one chain the learner is exactly ``model.clone().fit(X, y)`` on the whole
frame.

Supported: ``window=None`` (the stream state, which keeps counts; a window refits from stored
records) and nominal features (numeric ones are cut by the MDL rule on all records, which is
not a sum: a frame with numeric features trains through ``merge``, its records gathered;
declare them in ``nominal_attributes`` or discretize them first to keep them apart). The learner
holds the counts, not the records: it predicts and goes on learning a stream record by record
(new records are counted into the same tables), but a feature first seen later rebuilds the
tables from the records it stores, i.e. from the new records only.
"""

from __future__ import annotations

import numpy as np

from ..distributed import require_dask
from ..distributed.coding_pass import CodingPlan, refuse_window
from ..distributed.partitions import DaskPartitions
from ..distributed.protocol import MergePlan, Partitions, Plan
from .candidates import choose_candidates, class_pair_counts
from .chain import run_chain
from .incremental import StreamingScores
from .streaming import resolve_order

__all__ = ["CountsPlan", "count_tables", "fit_orders", "run_chains_on_dask"]


class CountsPlan(Plan):
    """The plan of OrderMCMC and FixedOrderBMA that have learned nothing and keep every record:
    a :class:`~onlinebma.distributed.coding_pass.CodingPlan` pass, then a pass that counts each
    partition where it lies (:class:`_CountPass`), then the fit from the summed tables
    (module docstring). A frame with numeric features trains through ``merge`` instead.

    ``listing`` is the learner's ``(listed nodes, restrict)``: the nodes its stream state
    lists first, and whether only their order is averaged (FixedOrderBMA's one order). The
    learner chooses this plan in its ``distributed_plan()``; built directly, it refuses a
    window.
    """

    def __init__(self, model, listing: tuple):
        refuse_window(model)
        self.model = model
        self.listing = listing

    def run(self, partitions: Partitions):
        coder, scores = self.count(partitions)
        if scores is None:  # cut points need every record at once: see the module docstring
            return MergePlan(self.model).run(partitions)
        coder.adopt_counts(scores, run_chains_on_dask)
        return coder

    def count(self, partitions: Partitions) -> tuple:
        """``(coder, scores)``: a clone of the learner that has learned the frame's coding
        and the K2 count tables of all the frame's records, or ``None`` for the tables when
        the frame has numeric features."""
        template = self.model.clone()
        coder, _ = CodingPlan(template).run(partitions)
        table = coder.data_
        if table.numeric_features:
            return coder, None
        names = tuple(table.nominal_features) + (self.model.class_name,)
        room = np.maximum(1, np.array(list(table.n_values) + [len(table.classes)],
                                      dtype=np.int64))
        missing = np.append((table.codes < 0).any(axis=0), False)
        layout = _Layout(self.model, self.listing, names, room, missing)
        k, n = self.model.max_candidates, len(names)
        if k is not None and k < n - 1:  # candidates first (module docstring)
            pairs = partitions.reduce(_PairPass(template, table, room))
            layout.candidates = choose_candidates(np.zeros((0, n), np.int64), k,
                                                  self.model.alpha, n - 1, layout.order, pairs)
        else:
            pairs = None
        total = partitions.reduce(_CountPass(template, table, layout))
        scores = layout.scores()
        scores.add_counts(total)
        scores.selection = pairs  # the learner chooses its candidates from them again
        return coder, scores


class _Layout:
    """Empty count tables of the learner's families in the layout all partitions share."""

    def __init__(self, model, listing, names, room, missing):
        listed, restrict = listing
        self.order = resolve_order(listed, names) if restrict else None  # FixedOrderBMA
        self.args = (len(names), model.max_parents, model.alpha)
        self.room, self.missing = room, missing
        self.candidates = None  # candidate parents per node (None: every other node)

    def scores(self) -> StreamingScores:
        scores = StreamingScores(*self.args, n_values=self.room, order=self.order,
                                 candidates=self.candidates)
        scores.reserve(self.room, self.missing)
        return scores


def _node_rows(template, table, X, y) -> np.ndarray:
    """A partition's records as node codes in the frame's coding ``table``."""
    clone = template.clone()
    clone.learn_many(X, y)
    rows = table.translate(clone.data_)
    return np.column_stack([rows.codes, rows.y]).astype(np.int64)


class _CountPass(Plan):
    """The counts of each partition's records (coded by ``table``) in the shared layout,
    summed; integers, so the sums are those of one machine exactly."""

    def __init__(self, template, table, layout: _Layout):
        self.template, self.table, self.layout = template, table, layout

    def learn_partition(self, X, y):
        if not len(X):
            return 0
        return self.layout.scores().count(_node_rows(self.template, self.table, X, y))

    def combine(self, partials: list):
        out = partials[0]
        for counts in partials[1:]:
            out = out + counts
        return out


class _PairPass(_CountPass):
    """The :class:`~onlinebma.order_mcmc.candidates.ClassPairCounts` of each partition's
    records (shape fixed by ``room``, the class last), summed."""

    def __init__(self, template, table, room):
        self.template, self.table, self.room = template, table, room

    def learn_partition(self, X, y):
        n = len(self.room)
        rows = _node_rows(self.template, self.table, X, y) if len(X) else \
            np.zeros((0, n), np.int64)
        return class_pair_counts(rows, n - 1, self.room)


def _counts_plan(model) -> CountsPlan:
    """``model``'s plan, which must be a :class:`CountsPlan` (a window is refused first)."""
    refuse_window(model)
    plan = model.distributed_plan()
    if not isinstance(plan, CountsPlan):
        raise TypeError(f"count tables are for an OrderMCMC or FixedOrderBMA that has learned "
                        f"nothing, not this {type(model).__name__}")
    return plan


def count_tables(model, ddf, target: str, split_every: int):
    """:meth:`CountsPlan.count` of ``model`` on ``ddf``."""
    require_dask()
    return _counts_plan(model).count(DaskPartitions(ddf, target, split_every))


def run_chains_on_dask(model, jobs, n_iter, burn_in, n_orders, show_progress=False) -> list:
    """:func:`~onlinebma.order_mcmc.chain.run_chain` of every ``(rng, init_order)`` of
    ``jobs`` as Dask tasks, side by side (the order model is sent once)."""
    dask, _ = require_dask()
    shared = dask.delayed(model, traverse=False)
    return list(dask.compute(*[dask.delayed(run_chain)(shared, rng, order, n_iter, burn_in,
                                                       n_orders, False)
                               for rng, order in jobs]))


def fit_orders(model, ddf, target: str, split_every: int):
    """``model.clone().fit(X, y)`` for the whole frame from count tables summed over the
    partitions (module docstring). Numeric features need their MDL cut points from every
    record at once: such a frame trains through ``merge`` instead, its records gathered."""
    return _counts_plan(model).run(DaskPartitions(ddf, target, split_every))
