"""Train on Dask, exactly: the learner one machine would build from the whole frame.

Most learners here are built on sufficient statistics that add up, or on stored records that
concatenate, so training can be split over a Dask DataFrame's partitions and combined without
approximation; a learner whose state depends on the order of the records is trained exactly by
learning the partitions one after the other. :func:`fit` is the one entry point. It asks
the learner how to train through the learner's public ``distributed_plan()`` (the protocol of
:mod:`.protocol`) and drives the :class:`~onlinebma.distributed.protocol.Plan` it gets: each
partition learned where it lies, the partial results combined in a tree in partition order,
the result finished on the client.
A learner chooses its plan:

- every learner with an exact ``merge`` (the naive Bayes family, whose count tables and
  moments add up, and every batch learner — ISA, FixedOrderBMA, OrderMCMC, FAN, FiniteMixture
  — whose stores concatenate, see :meth:`onlinebma.batch.BufferRefitClassifier.merge`):
  :class:`~onlinebma.distributed.protocol.MergePlan`, the partial learners merged in order;
- the tree-augmented learners (TAN, AODE, ModelAveragedTAN of one numeric representation)
  that forget nothing, whose cut points must agree before partitions merge:
  :class:`~onlinebma.distributed.first_pass.SampledMergePlan`, a first pass drawing each
  numeric column's sample from the whole frame as ``learn_many`` draws it, the cut points
  fixed from it, then the merge plan;
- ModelAveragedTAN's default ``numeric="auto"`` that forgets nothing, on numeric columns
  (its representations weighed by stacking, :mod:`onlinebma.tan.stacking`):
  :class:`~onlinebma.tan.merging.StackingPlan`, the same first pass, then each partition's
  fold states counted in parallel and merged per fold, then each partition's
  cross-validated probabilities (:class:`~onlinebma.distributed.first_pass.OffsetPass`,
  passes whose partial results depend on where a partition's rows lie);
- the tree-augmented learners whose state depends on the order of the records (those that
  forget): :class:`~onlinebma.distributed.chain.ChainPlan`, the same first pass, then the
  partitions learned one after the other by one learner, a chain of Dask tasks (exact, but
  one partition at a time: for frames larger than memory, not for speed);
- FAN and FiniteMixture with a criterion computed from sums (``"bic"``, ``"aic"``, ``"cs"``,
  ``"icl"``): distributed EM, the records staying where they lie
  (:mod:`onlinebma.mixture.distributed_em`);
- OrderMCMC and FixedOrderBMA on nominal features: per-partition count tables summed, only
  tables travelling, ``n_chains`` chains as Dask tasks
  (:mod:`onlinebma.order_mcmc.distributed_counts`);

  both start from a learner that has learned nothing and has no window, and give the model
  of ``fit(X, y)`` on the whole frame; any other state (a learner that has learned already,
  a window, the mixtures' prequential criterion) trains through ``merge``, exactly too, with
  the records gathered;
- :func:`predict_proba` predicts each test partition where it lies, with the learner (for ISA,
  its stored records) sent to each worker once (:mod:`.predict`).

This package imports no learner family: each family implements its plan in its own package (the
two above in ``mixture/`` and ``order_mcmc/``), from :mod:`.protocol`, :mod:`.partitions`,
:mod:`.coding_pass` (the first pass of a plan fitted from whole-frame statistics),
:mod:`.first_pass` (the first pass that samples the numeric columns) and :mod:`.chain` (the
partitions learned in order by one learner). A new learner
joins by implementing ``distributed_plan()`` (see :mod:`.protocol` and docs/architecture.md); a
learner without it is refused with a ``TypeError``, and a learner that cannot be trained
exactly (a naive Bayes learner that forgets) refuses in ``distributed_plan()``, before any
partition is learned, rather than being trained in some approximate way.

Files in: a frame need not come from memory. ``dask.dataframe.read_parquet`` of Parquet files
written beforehand (one file per partition, nominal columns read back as Arrow strings) is
read lazily, each partition where it is learned, and :func:`fit` gives the same learner as
``learn_many`` on the records in memory (``tests/test_distributed.py`` checks every learner).

Dask does the scheduling: :func:`fit` and :func:`predict_proba` run on whatever scheduler is
active — the synchronous or threaded one, a ``distributed.LocalCluster``, a real cluster
(create a ``distributed.Client`` first and Dask uses it).

Needs the ``dask`` extra: ``pip install -e ".[dask]"`` from a clone (the package is not on PyPI).

Examples
--------
>>> import dask
>>> import dask.dataframe as dd
>>> from onlinebma import distributed
>>> from onlinebma.datasets import UCIDataset
>>> from onlinebma.naive_bayes import ModelAveragedNB
>>> X, y = UCIDataset("house-votes-84").to_frame()
>>> frame = X.assign(party=y)
>>> ddf = dd.from_pandas(frame, npartitions=4)
>>> with dask.config.set(scheduler="synchronous"):
...     model = distributed.fit(ModelAveragedNB(), ddf, target="party")
...     proba = distributed.predict_proba(model, ddf.drop(columns="party")).compute()
>>> one = ModelAveragedNB()
>>> one.learn_many(X, y)
>>> list(proba.columns) == list(one.predict_proba_many(X).columns)
True
>>> bool((proba - one.predict_proba_many(X)).abs().max().max() < 1e-9)
True
"""

from __future__ import annotations

from ._dask import check_frame, check_split_every, check_target, require_dask
from .partitions import DaskPartitions
from .predict import predict_proba
from .protocol import MergePlan, Partitions, Plan

__all__ = ["MergePlan", "Partitions", "Plan", "fit", "plan_of", "predict_proba"]


def plan_of(model) -> Plan:
    """``model.distributed_plan()``, or a ``TypeError`` for a learner without one."""
    make = getattr(model, "distributed_plan", None)
    if not callable(make) and hasattr(model, "steps"):  # a River pipeline
        raise TypeError(
            f"{type(model).__name__} cannot be trained on Dask: a pipeline has no "
            "distributed_plan() (a transformer fitted on every value, such as a discretiser's "
            "cut points, does not add up over partitions). Either let the learner read the "
            "numbers itself (the tree-augmented learners' numeric='MDL' agree their cut "
            "points from the whole frame in a first pass), or fit the transformer first "
            "(learn_many on the frame, or a sample of it), transform each partition "
            "(ddf.map_partitions(transformer.transform_many)) and fit the learner alone")
    if not callable(make):
        raise TypeError(
            f"{type(model).__name__} cannot be trained on Dask: it has no distributed_plan() "
            "(no exact merge, nor sums or counts that add up over partitions); a learner "
            "joins by implementing it, see onlinebma.distributed.protocol")
    return make()


def fit(model, ddf, target: str = "class", split_every: int = 8):
    """``model`` after learning every record of ``ddf``, in partition order, on Dask.

    Parameters
    ----------
    model
        The learner to start from: its hyperparameters, and what it has learned already (the
        result equals ``model`` followed by ``learn_many`` on ``ddf``). It is not modified.
        It says how it trains on Dask through ``distributed_plan()`` (:mod:`.protocol`).
    ddf
        A dask DataFrame of records with the label in column ``target``. A column absent
        from some partitions reads as missing values there, as everywhere in the library.
    target
        Name of the label column. Every label must be present: a missing label, or a
        partition without the column, is an error naming the partition and the row.
    split_every
        Fan-in of the reduction tree (≥ 2): a smaller one gives a deeper tree, a larger one
        combines more partial results per task.

    Returns
    -------
    A new learner of ``model``'s class: ``model`` followed by ``learn_many`` on the frame in
    partition order. One exception: an untrained OrderMCMC without a window (fitted from
    count tables) is the model of ``fit(X, y)`` on the whole frame, whose chain runs in full
    (``burn_in``, ``n_iter``), where ``learn_many`` on one machine advances the streaming
    chain record by record. If any partition is refused, the error propagates and
    nothing half-trained is returned.

    Raises
    ------
    TypeError
        ``model`` has no ``distributed_plan()``, before any partition is learned.
    ValueError
        ``model`` cannot be trained exactly on Dask (a naive Bayes learner that forgets),
        before any partition is learned; or a partition is refused (naming it).
    """
    require_dask()
    check_frame(ddf)
    check_target(ddf, target)
    check_split_every(split_every)
    plan = plan_of(model)  # refusals come here, before any partition is learned
    return plan.run(DaskPartitions(ddf, target, split_every))
