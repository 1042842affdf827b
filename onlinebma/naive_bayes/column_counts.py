"""Counting a prepared batch (:func:`onlinebma.reading.prepare_columns`) for the naive Bayes
family: one column's counts or moments per class, with one ``bincount`` each."""

from __future__ import annotations

import numpy as np

from ..stats.gaussian import GaussianMoments
from ..stats.tables import NominalTable, NumericTable

__all__ = ["nominal_counts", "numeric_moments"]


def nominal_counts(col, present, ycodes, labels) -> NominalTable:
    """A :class:`NominalTable` of one factorised column ``(codes, values)``, counted with one
    ``bincount``."""
    vcodes, values = col
    k = len(labels)
    if not present.all():
        vcodes, ycodes = vcodes[present], ycodes[present]
    cells = vcodes * k
    cells += ycodes
    counts = np.bincount(cells, minlength=len(values) * k)
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
