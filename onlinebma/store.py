"""The batch adapter's buffer: records as growable arrays in arrival order, with a window.

Nominal values are stored as integer codes in order of first arrival (``-1`` = missing),
numeric ones as floats (NaN = missing), labels as class codes. The adapter builds its
canonical table (:mod:`onlinebma.table`) from the live rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RecordStore"]


class RecordStore:
    """Growable arrays of coded records in arrival order, with an optional window."""

    def __init__(self):
        self.codes = np.empty((16, 0), dtype=np.int32)
        self.numeric = np.empty((16, 0), dtype=np.float64)
        self.y = np.empty(16, dtype=np.int32)
        self.start = 0
        self.end = 0

    def __len__(self):
        return self.end - self.start

    def add_columns(self, n_nominal: int, n_numeric: int):
        if n_nominal:
            pad = np.full((self.codes.shape[0], n_nominal), -1, dtype=np.int32)
            self.codes = np.hstack([self.codes, pad])
        if n_numeric:
            pad = np.full((self.numeric.shape[0], n_numeric), np.nan)
            self.numeric = np.hstack([self.numeric, pad])

    def _reserve(self, k: int):
        cap = self.y.shape[0]
        if self.end + k <= cap:
            return
        live = slice(self.start, self.end)
        n = len(self)
        new_cap = max(16, 2 * (n + k)) if n + k > cap // 2 else cap
        codes = np.full((new_cap, self.codes.shape[1]), -1, dtype=np.int32)
        numeric = np.full((new_cap, self.numeric.shape[1]), np.nan)
        y = np.empty(new_cap, dtype=np.int32)
        codes[:n], numeric[:n], y[:n] = self.codes[live], self.numeric[live], self.y[live]
        self.codes, self.numeric, self.y = codes, numeric, y
        self.start, self.end = 0, n

    def append(self, codes: np.ndarray, numeric: np.ndarray, y: np.ndarray, window):
        k = y.shape[0]
        self._reserve(k)
        rows = slice(self.end, self.end + k)
        self.codes[rows], self.numeric[rows], self.y[rows] = codes, numeric, y
        self.end += k
        if window is not None and len(self) > window:
            self.start = self.end - window

    def view(self):
        live = slice(self.start, self.end)
        return self.codes[live], self.numeric[live], self.y[live]
