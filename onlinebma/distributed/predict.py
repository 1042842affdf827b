"""Predict on Dask: the learner is prepared once, sent to each worker once, and every test
partition is predicted where it lies.

A lazy learner such as ISA predicts from its stored records, so the learner *is* the data a
prediction needs: it is prepared on the client (the refits a prediction would do, done once),
then scattered to every worker once (``Client.scatter(..., broadcast=True)`` when a
``distributed`` client is the active scheduler; one shared node of the task graph on the
synchronous and threaded schedulers), and each partition's task refers to that copy instead of
carrying the learner itself. A prediction of one row does not depend on the other rows, so the
result equals ``predict_proba_many`` on the whole frame on one machine. Tasks on one worker
share its copy and take turns on it (a learner's prediction caches are not thread-safe).
"""

from __future__ import annotations

import copy
import threading

import pandas as pd

from ._dask import check_frame, require_dask

__all__ = ["predict_proba"]

_LOCKS: dict = {}  # id of a worker's copy of a learner -> the lock its tasks take turns with
_LOCKS_LOCK = threading.Lock()


def _lock_for(model) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(id(model), threading.Lock())


def _predict_partition(model, part, labels, meta):
    if not len(part):
        return meta.copy()
    with _lock_for(model):
        proba = model.predict_proba_many(part)
    return proba.reindex(columns=labels).astype(float)  # labels may be bools: no mask


def _active_client():
    """The ``distributed`` client that runs computations now, if any."""
    dask, _ = require_dask()
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - the dask extra installs distributed
        return None
    try:
        client = default_client()
    except ValueError:  # no client
        return None
    return client if dask.base.get_scheduler() == client.get else None


def predict_proba(model, ddf):
    """Class probabilities of every row of ``ddf``: a dask DataFrame, one column per label
    (the learner's ``classes_`` order), equal to ``model.predict_proba_many`` on the whole
    frame. ``model`` is not modified."""
    dask, dd = require_dask()
    check_frame(ddf)
    ready = copy.deepcopy(model)
    # The learner's answer on the frame's empty schema names the label columns, and does the
    # refits that a prediction would do, once, before the learner is sent anywhere.
    empty = pd.DataFrame({c: pd.Series(dtype=t) for c, t in ddf.dtypes.items()})
    labels = list(ready.predict_proba_many(empty).columns)
    meta = pd.DataFrame({label: pd.Series(dtype=float) for label in labels})
    client = _active_client()
    if client is not None:
        shared = client.scatter(ready, broadcast=True, hash=False)
    else:
        shared = dask.delayed(ready, traverse=False)
    parts = [dask.delayed(_predict_partition)(shared, part, labels, meta)
             for part in ddf.to_delayed()]
    divisions = ddf.divisions if ddf.known_divisions else None
    return dd.from_delayed(parts, meta=meta, divisions=divisions, verify_meta=False)
