"""The order of a learner's classes, as a scikit-learn user relies on it.

Every learner has ``classes_``: the labels it has learned, **sorted when they sort** (numbers,
strings, bools, tuples of those: whatever ``<`` orders totally), **else in order of first
arrival** (labels of mixed types, such as ``1`` and ``"a"``). The columns of
``predict_proba_many`` (and ``predict_proba``) come in ``classes_`` order, so that
``sklearn.metrics.log_loss(y, model.predict_proba_many(X).to_numpy())``, which reads the
columns as the sorted labels, scores what the learner predicted. ``predict_proba_one`` returns
a dict keyed by label; its keys are not ordered.

The order is a function of the set of labels learned (when they sort), not of the stream's
order; learners count classes by their own codes (first arrival) and apply the order only
when they answer (:func:`proba_frame`).

>>> ordered_labels([True, False])
(False, True)
>>> ordered_labels(["b", 1, "a"])  # mixed types do not sort: first arrival
('b', 1, 'a')
>>> import numpy as np
>>> proba_frame(np.array([[0.9, 0.1]]), [True, False], [7])
   False  True
7    0.1   0.9
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["class_order", "in_class_order", "ordered_labels", "proba_frame"]


def class_order(labels) -> np.ndarray:
    """The positions of ``labels`` (distinct, hashable) in ``classes_`` order: sorted when
    every pair of them compares and the sorted sequence strictly increases, else as given.

    >>> class_order([3, 1, 2]).tolist()
    [1, 2, 0]
    >>> class_order([frozenset({1}), frozenset({2})]).tolist()  # not ordered by <: as given
    [0, 1]
    """
    labels = list(labels)
    positions = list(range(len(labels)))
    try:
        positions.sort(key=labels.__getitem__)
        ordered = all(bool(labels[a] < labels[b]) for a, b in zip(positions, positions[1:]))
    except (TypeError, ValueError):  # labels of types that do not compare
        ordered = False
    return np.array(positions if ordered else range(len(labels)), dtype=np.intp)


def ordered_labels(labels) -> tuple:
    """``labels`` in ``classes_`` order (:func:`class_order`)."""
    labels = list(labels)
    return tuple(labels[i] for i in class_order(labels))


def proba_frame(proba, labels, index) -> pd.DataFrame:
    """Class probabilities as ``predict_proba_many`` returns them: ``proba`` (rows × classes,
    its columns in the order of ``labels``) as a DataFrame with one column per label in
    ``classes_`` order and the given ``index``; no column when nothing has been learned."""
    labels = list(labels)
    if not labels:
        return pd.DataFrame(index=index)
    order = class_order(labels)
    columns = pd.Index([labels[i] for i in order], dtype=object, tupleize_cols=False)
    return pd.DataFrame(np.asarray(proba)[:, order], columns=columns, index=index)


def in_class_order(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame of predictions whose columns are labels, with its columns in ``classes_``
    order (:func:`class_order`), for a learner that builds its frame in its own order.

    >>> in_class_order(pd.DataFrame([[0.9, 0.1]], columns=[True, False])).to_dict("records")
    [{False: 0.1, True: 0.9}]
    """
    return frame.iloc[:, class_order(frame.columns)]
