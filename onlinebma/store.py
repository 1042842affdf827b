"""The coding's record store: records as growable arrays in arrival order, with a window.

Nominal values are stored as integer codes (``-1`` = missing), numeric ones as floats (NaN =
missing), labels as class codes. :class:`~onlinebma.coding.Coding` owns the store, says what
the codes mean and builds the canonical table (:mod:`onlinebma.table`) from the live rows.

Rows have global positions: ``total`` rows were ever appended, the live ones are the last
``len(store)``. Rows that left the window stay in the arrays, readable by :meth:`rows`, until
the arrays are compacted (when they grow); :attr:`kept_from` is the first position still held.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RecordStore"]


class RecordStore:
    """Growable arrays of coded records in arrival order, with an optional window.

    >>> s = RecordStore()
    >>> s.add_columns(1, 0)
    >>> for code in range(5):
    ...     s.append(np.array([[code]]), np.empty((1, 0)), np.array([0]), window=2)
    >>> s.view()[0].ravel().tolist(), s.total, s.first
    ([3, 4], 5, 3)
    >>> s.rows(1, 3)[0].ravel().tolist()  # rows that left the window, while still held
    [1, 2]
    """

    def __init__(self):
        self.codes = np.empty((16, 0), dtype=np.int32)
        self.numeric = np.empty((16, 0), dtype=np.float64)
        self.y = np.zeros(16, dtype=np.int32)
        self.start = 0
        self.end = 0
        self._origin = 0  # global position of the arrays' row 0

    def __len__(self):
        return self.end - self.start

    @property
    def total(self) -> int:
        """Rows ever appended (the global position after the last one)."""
        return self._origin + self.end

    @property
    def first(self) -> int:
        """Global position of the first live row."""
        return self._origin + self.start

    @property
    def kept_from(self) -> int:
        """Global position of the first row still held (live or left the window)."""
        return self._origin

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
        y = np.zeros(new_cap, dtype=np.int32)
        codes[:n], numeric[:n], y[:n] = self.codes[live], self.numeric[live], self.y[live]
        self.codes, self.numeric, self.y = codes, numeric, y
        self._origin += self.start
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

    def rows(self, lo: int, hi: int):
        """The rows at global positions ``lo .. hi - 1`` (all still held)."""
        held = slice(lo - self._origin, hi - self._origin)
        return self.codes[held], self.numeric[held], self.y[held]

    def recode(self, j: int, mapping: np.ndarray):
        """Column ``j`` of the codes renumbered by ``mapping`` (old code -> new, ``-1`` gone),
        in every row held."""
        col = self.codes[:, j]
        self.codes[:, j] = np.append(mapping, -1)[col]  # code -1 reads the appended entry
