"""Train on Dask, exactly: the learner one machine would build from the whole frame.

Every learner here is built on sufficient statistics that add up, so training can be split
over a Dask DataFrame's partitions and combined without approximation: each partition is
learned by a fresh copy of the learner (``learn_many``) on whichever worker holds it, and the
partial learners are combined with ``merge`` in a tree whose fan-in is ``split_every``. Only
the learners travel (count tables and moments, never records). The tree keeps the partitions
in order (each merge combines neighbours left to right), so the result has the labels, in the
same order, and the predictions of ``learn_many`` on the whole frame in partition order.

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

import copy

__all__ = ["fit", "predict_proba"]


def _require_dask():
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            'onlinebma.distributed needs Dask: pip install "onlinebma[dask]"'
        ) from exc
    return dask, dd


def _check_frame(ddf, name: str = "ddf"):
    _, dd = _require_dask()
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(
            f"{name} must be a dask DataFrame, not {type(ddf).__name__}; "
            "wrap a pandas frame with dask.dataframe.from_pandas"
        )


def _check_mergeable(model):
    if not callable(getattr(model, "merge", None)) or not callable(
        getattr(model, "learn_many", None)
    ):
        raise TypeError(
            f"{type(model).__name__} cannot be trained on Dask: it has no exact merge "
            "(supported: NaiveBayes, ModelAveragedNB, BMANB)"
        )


def _fresh(model):
    """An untrained learner with ``model``'s hyperparameters."""
    return model.clone()


def _learn_partition(template, part, target):
    """A fresh copy of ``template`` that has learned one partition (empty ones included)."""
    learner = _fresh(template)
    if len(part):
        learner.learn_many(part.drop(columns=[target]), part[target])
    return learner


def _merge_in_order(*learners):
    """Merge neighbouring learners left to right (labels keep the partitions' order)."""
    out = learners[0]
    for other in learners[1:]:
        out = out.merge(other)
    return out


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
        Fan-in of the merge tree (≥ 2): a smaller one gives a deeper tree, a larger one
        merges more learners per task.

    Returns
    -------
    A new learner of ``model``'s class. If any partition is refused, the error propagates and
    nothing half-trained is returned.
    """
    dask, _ = _require_dask()
    _check_mergeable(model)
    _check_frame(ddf)
    if target not in ddf.columns:
        raise ValueError(f"target column {target!r} is not among the columns {list(ddf.columns)}")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an integer ≥ 2, got {split_every!r}")
    template = _fresh(model)
    level = [dask.delayed(_learn_partition)(template, part, target)
             for part in ddf.to_delayed()]
    while len(level) > 1:
        level = [dask.delayed(_merge_in_order)(*level[i:i + split_every])
                 for i in range(0, len(level), split_every)]
    (learned,) = dask.compute(level[0])
    return copy.deepcopy(model).merge(learned)


def predict_proba(model, ddf):
    """Class probabilities of every row of ``ddf``: a dask DataFrame, one column per label.

    Each partition is predicted by ``model.predict_proba_many`` where it lies; the learner is
    sent to the workers once per partition (it holds statistics, not records).
    """
    _require_dask()
    _check_frame(ddf)
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
