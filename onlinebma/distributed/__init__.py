"""Train on Dask, exactly: the learner one machine would build from the whole frame.

Every learner here is built on sufficient statistics that add up, so training can be split
over a Dask DataFrame's partitions and combined without approximation. :func:`fit` is the one
entry point; how it splits the work depends on the learner (see :mod:`.merge_tree` for the
naive Bayes family: learn each partition where it lies, merge the partial learners in order).

Dask does the scheduling: :func:`fit` and :func:`predict_proba` run on whatever scheduler is
active — the synchronous or threaded one, a ``distributed.LocalCluster``, a real cluster
(create a ``distributed.Client`` first and Dask uses it).

Supported now: the naive Bayes family (``NaiveBayes``, ``ModelAveragedNB``, ``BMANB``). A
learner without an exact ``merge`` is refused with a ``TypeError`` rather than trained in some
approximate way.

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

__all__ = ["fit", "predict_proba"]


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
        Name of the label column. Every label must be present (a missing label is an error
        naming the row, raised by the learner's ``learn_many``).
    split_every
        Fan-in of the reduction tree (≥ 2): a smaller one gives a deeper tree, a larger one
        combines more partial results per task.

    Returns
    -------
    A new learner of ``model``'s class. If any partition is refused, the error propagates and
    nothing half-trained is returned.
    """
    require_dask()
    check_frame(ddf)
    check_target(ddf, target)
    check_split_every(split_every)
    from ..mixture.base import MixtureClassifier

    if isinstance(model, MixtureClassifier):  # FAN, FiniteMixture: distributed EM
        from .em import fit_em

        return fit_em(model, ddf, target, split_every)
    from ..order_mcmc.fixed_order import OrderAveragingClassifier

    if isinstance(model, OrderAveragingClassifier):  # OrderMCMC, FixedOrderBMA: count tables
        from .orders import fit_orders

        return fit_orders(model, ddf, target, split_every)
    return fit_by_merge(model, ddf, target, split_every)


def predict_proba(model, ddf):
    """Class probabilities of every row of ``ddf``: a dask DataFrame, one column per label.

    Each partition is predicted by ``model.predict_proba_many`` where it lies; the learner is
    sent to the workers once per partition (it holds statistics, not records).
    """
    require_dask()
    check_frame(ddf)
    import pandas as pd

    # The learner's own answer on the frame's empty schema names the label columns.
    empty = pd.DataFrame({c: pd.Series(dtype=t) for c, t in ddf.dtypes.items()})
    labels = list(model.predict_proba_many(empty).columns)
    meta = pd.DataFrame({label: pd.Series(dtype=float) for label in labels})

    def one(part):
        if not len(part):
            return meta.copy()
        return model.predict_proba_many(part)[labels].astype(float)

    return ddf.map_partitions(one, meta=meta)
