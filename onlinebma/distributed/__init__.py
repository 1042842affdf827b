"""Train on Dask, exactly: the learner one machine would build from the whole frame.

Every learner here is built on sufficient statistics that add up, or on stored records that
concatenate, so training can be split over a Dask DataFrame's partitions and combined without
approximation. :func:`fit` is the one entry point; how it splits the work depends on the
learner:

- every learner with an exact ``merge`` (the naive Bayes family, whose count tables and
  moments add up, and every batch learner — ISA, FixedOrderBMA, OrderMCMC, FAN, FiniteMixture
  — whose stores concatenate, see :meth:`onlinebma.batch.BufferRefitClassifier.merge`): each
  partition learned where it lies, the partial learners merged in order in a tree
  (:mod:`.merge_tree`);
- FAN and FiniteMixture with a criterion computed from sums (``"bic"``, ``"aic"``, ``"cs"``,
  ``"icl"``): distributed EM, the records staying where they lie (:mod:`.em`);
- OrderMCMC and FixedOrderBMA on nominal features: per-partition count tables summed, only
  tables travelling, ``n_chains`` chains as Dask tasks (:mod:`.orders`);

  both paths start from a learner that has learned nothing and has no window, and give the
  model of ``fit(X, y)`` on the whole frame; any other state (a learner that has learned
  already, a window, the mixtures' prequential criterion) trains through ``merge``, exactly
  too, with the records gathered;
- :func:`predict_proba` predicts each test partition where it lies, with the learner (for ISA,
  its stored records) sent to each worker once (:mod:`.predict`).

Dask does the scheduling: :func:`fit` and :func:`predict_proba` run on whatever scheduler is
active — the synchronous or threaded one, a ``distributed.LocalCluster``, a real cluster
(create a ``distributed.Client`` first and Dask uses it). A learner without an exact
``merge`` is refused with a ``TypeError`` rather than trained in some approximate way.

Needs the ``dask`` extra: ``pip install "onlinebma[dask]"``.

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
from .merge_tree import fit_by_merge
from .predict import predict_proba

__all__ = ["fit", "predict_proba"]


def _from_sums(model) -> bool:
    """Whether ``model`` can be fitted from statistics summed over the partitions (distributed
    EM, count tables): it has learned nothing yet, keeps every record (no window) and, for a
    mixture, weighs its numbers of components by a criterion computed from sums (not the
    prequential one, whose held-out half and warm-started refits are an order of fits)."""
    if getattr(model, "_n_learned", None) != 0 or getattr(model, "window", None) is not None:
        return False
    return getattr(model, "criterion", None) != "prequential"


def fit(model, ddf, target: str = "class", split_every: int = 8):
    """``model`` after learning every record of ``ddf``, in partition order, on Dask.

    Parameters
    ----------
    model
        The learner to start from: its hyperparameters, and what it has learned already (the
        result equals ``model`` followed by ``learn_many`` on ``ddf``). It is not modified.
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
    """
    require_dask()
    check_frame(ddf)
    check_target(ddf, target)
    check_split_every(split_every)
    if _from_sums(model):
        from ..mixture.base import MixtureClassifier

        if isinstance(model, MixtureClassifier):  # FAN, FiniteMixture: distributed EM
            from .em import fit_em

            return fit_em(model, ddf, target, split_every)
        from ..order_mcmc.fixed_order import OrderAveragingClassifier

        if isinstance(model, OrderAveragingClassifier):  # OrderMCMC, FixedOrderBMA: counts
            from .orders import fit_orders

            return fit_orders(model, ddf, target, split_every)
    # Every other learner, and every learner in a state the sums cannot start from, merges.
    return fit_by_merge(model, ddf, target, split_every)
