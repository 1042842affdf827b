"""OrderMCMC and FixedOrderBMA on Dask: count tables per partition, summed; chains side by side.

The score tables of the order learners are K2 scores of contingency counts (``N_ijk`` and
``N_ij`` of every candidate family, :mod:`onlinebma.order_mcmc.incremental`). Each partition
is counted where it lies, in one layout that all partitions share (the numbers of values of
every node and which nodes have missing values, found in a first pass over the partitions);
the counts are summed in a tree of fan-in ``split_every`` and the scores computed once from
the sums. Only count tables travel, never records. Counts are integers, so the sums are those
of one machine exactly, and so are the scores.

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

from ..order_mcmc.incremental import StreamingScores
from ..order_mcmc.sampler import run_chain
from ..order_mcmc.streaming import resolve_order
from ._dask import require_dask
from .em import learn_coding, tree
from .merge_tree import fit_by_merge

__all__ = ["count_tables", "fit_orders", "run_chains_on_dask"]


def _sum(*counts):
    out = counts[0]
    for c in counts[1:]:
        out = out + c
    return out


def _layout(model, names, room, missing) -> StreamingScores:
    """Empty count tables of the learner's families in the layout shared by all partitions."""
    listed, restrict = model._live_listing()
    order = resolve_order(listed, names) if restrict else None  # FixedOrderBMA: one order
    scores = StreamingScores(len(names), model.max_parents, model.alpha, n_values=room,
                             order=order)
    scores.reserve(room, missing)
    return scores


def _partition_counts(template, part, target, table, names, room, missing):
    """The counts of one partition's records (coded by ``table``) in the shared layout."""
    clone = template.clone()
    clone.learn_many(part.drop(columns=[target]), part[target])
    rows = table.translate(clone.data_)
    nodes = np.column_stack([rows.codes, rows.y]).astype(np.int64)
    return _layout(template, names, room, missing).count(nodes)


def count_tables(model, ddf, target: str, split_every: int):
    """``(coder, scores)``: a clone of ``model`` that has learned the frame's coding (its store
    holds the rows that show it) and the K2 count tables of all the frame's records, or
    ``None`` for the tables when the frame has numeric features."""
    from ..order_mcmc.fixed_order import OrderAveragingClassifier

    dask, _ = require_dask()
    if not isinstance(model, OrderAveragingClassifier):
        raise TypeError(f"count tables are for OrderMCMC or FixedOrderBMA, not "
                        f"{type(model).__name__}")
    template, parts, coder, sizes = learn_coding(model, ddf, target)
    if coder._numeric_cols:
        return coder, None  # cut points need every record at once: see fit_orders
    table = coder.data_
    names = tuple(table.nominal_features) + (model.class_name,)
    room = np.maximum(1, np.array(list(table.n_values) + [len(table.classes)], dtype=np.int64))
    missing = np.append((table.codes < 0).any(axis=0), False)
    counts = [dask.delayed(_partition_counts)(template, p, target, table, names, room, missing)
              for p, n in zip(parts, sizes) if n]
    total = dask.compute(tree(counts, _sum, split_every))[0]
    scores = _layout(model, names, room, missing)
    scores.add_counts(total)
    return coder, scores


def run_chains_on_dask(model, jobs, n_iter, burn_in, n_orders, show_progress=False) -> list:
    """:func:`~onlinebma.order_mcmc.sampler.run_chain` of every ``(rng, init_order)`` of
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
    coder, scores = count_tables(model, ddf, target, split_every)
    if scores is None:
        return fit_by_merge(model, ddf, target, split_every)
    coder._adopt_counts(scores, run_chains_on_dask)
    return coder
