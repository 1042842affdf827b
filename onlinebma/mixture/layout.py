"""The canonical table (:class:`onlinebma.table.Table`) in the EM engine's layout."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import sparse

from .. import tuning
from ..table import Table
from .arrays import Design

__all__ = ["design", "row_key", "rows_of"]



def design(table: Table, rows: Table, y, n_classes: int) -> Design:
    """``rows`` (coded by ``table``) in the EM engine's layout: one one-hot column per value
    present in ``table``; features without any value present have no columns."""
    r = np.asarray(table.n_values, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(r)[:-1]]).astype(np.int64)
    observed, feats = np.nonzero(rows.codes >= 0)
    columns = offsets[feats] + rows.codes[observed, feats]
    shape = (rows.n, int(r.sum()))
    if shape[0] * shape[1] <= tuning.DENSE_CELLS:
        onehot = np.zeros(shape)
        onehot[observed, columns] = 1.0
    else:
        onehot = sparse.csr_matrix((np.ones(columns.shape[0]), (observed, columns)), shape=shape)
    used = r[r > 0]
    obs = ~np.isnan(rows.numeric)
    return Design(onehot=onehot, x=np.where(obs, rows.numeric, 0.0), obs=obs, y=y,
                  block=np.repeat(np.arange(len(used)), used), r=used, n_classes=n_classes)


def row_key(rows: Table) -> tuple:
    return rows.codes.tobytes(), rows.numeric.tobytes()


def rows_of(table: Table, rows: slice) -> Table:
    """Some of a table's records, in the same coding."""
    return replace(table, codes=table.codes[rows], numeric=table.numeric[rows], y=table.y[rows])
