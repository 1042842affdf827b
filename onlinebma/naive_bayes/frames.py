"""Reading a pandas batch for the naive Bayes family: validated first, counted per column.

:func:`prepare_frame` checks a whole batch and converts its columns before the learner
changes anything, so a refused batch leaves the learner exactly as it was.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..records import NOMINAL, check_label, check_labels
from ..stats.gaussian import MAX_ABS_VALUE, GaussianMoments, check_magnitude
from ..stats.tables import NominalTable, NumericTable

__all__ = ["factorize", "nominal_counts", "numeric_moments", "prepare_frame", "records_of"]


def prepare_frame(kinds, X, y):
    """Validate ``X`` (a DataFrame) and its labels without changing ``kinds``.

    Returns ``(columns, new_kinds, labels)``: ``columns`` maps each column with an observed
    value to ``(kind, values, present)`` (numeric values as a float array, NaN where missing;
    nominal values factorised, ``(codes, distinct values)``), ``labels`` is an object Series.
    """
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
    labels = pd.Series(y.to_numpy(dtype=object) if isinstance(y, pd.Series)
                       else np.asarray(y, dtype=object))
    check_labels(labels)
    try:  # each distinct label once (issue 17); an unhashable one is found and named
        distinct = pd.unique(labels)
    except TypeError:
        distinct = labels
    for label in distinct:
        check_label(label)
    col_kinds, new = kinds.split_frame(X)
    columns = {}
    for f, kind in col_kinds.items():
        s = X[f]
        present = s.notna().to_numpy()
        if kind == NOMINAL:  # factorised once: (codes, distinct values), -1 where missing
            codes, uniques = pd.factorize(s)
            columns[f] = (kind, (codes, np.asarray(uniques)), present)  # ints stay ints
            continue
        values = np.full(len(s), np.nan)
        values[present] = s[present].to_numpy(dtype=float)
        big = np.abs(values) > MAX_ABS_VALUE
        if big.any():
            check_magnitude(f, float(values[big][0]))
        columns[f] = (kind, values, present)
    return columns, new, labels


def records_of(columns, n_rows: int) -> list:
    """The rows of prepared ``columns`` as sparse dicts of their observed values."""
    rows = [{} for _ in range(n_rows)]
    for f, (kind, values, present) in columns.items():
        if kind == NOMINAL:
            codes, uniques = values
            uniques = [v.item() if isinstance(v, np.generic) else v for v in uniques]
            for i in np.flatnonzero(present):
                rows[i][f] = uniques[codes[i]]
            continue
        for i in np.flatnonzero(present):
            rows[i][f] = values[i].item()
    return rows


def factorize(y):
    """Labels in order of first appearance and the code of each row."""
    codes, uniques = pd.factorize(y)
    return list(uniques), codes


def nominal_counts(col, present, ycodes, labels) -> NominalTable:
    """A :class:`NominalTable` of one factorised column ``(codes, values)``, counted with one
    ``bincount``."""
    vcodes, values = col
    k = len(labels)
    counts = np.bincount(vcodes[present] * k + ycodes[present], minlength=len(values) * k)
    t = NominalTable()
    for i, j in zip(*np.nonzero(counts.reshape(len(values), k))):
        t.update(values[i], labels[j], int(counts[i * k + j]))
    return t


def numeric_moments(col, present, ycodes, labels) -> NumericTable:
    """A :class:`NumericTable` of one column: per-class moments by two-pass bincounts."""
    x, yc = col[present], ycodes[present]
    k = len(labels)
    n = np.bincount(yc, minlength=k)
    mean = np.bincount(yc, weights=x, minlength=k) / np.maximum(n, 1)
    m2 = np.bincount(yc, weights=(x - mean[yc]) ** 2, minlength=k)
    t = NumericTable()
    for j in np.nonzero(n)[0]:
        t.by_class[labels[j]] = GaussianMoments(int(n[j]), float(mean[j]), float(m2[j]))
    if len(x):
        mu = float(x.mean())
        t.marginal = GaussianMoments(len(x), mu, float(((x - mu) ** 2).sum()))
    return t
