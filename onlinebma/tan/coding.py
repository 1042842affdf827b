"""Reading and coding records for the tree-augmented learners and their ``decay="auto"``.

:class:`RecordCoding` validates a record (:mod:`onlinebma.records`), codes its features and
values as ints in order of first appearance in a :class:`~onlinebma.stats.pairs.PairCounts`,
cuts numeric features into the intervals of :mod:`onlinebma.tan.binning`, and codes a
DataFrame for the batch paths. It is shared by :class:`~onlinebma.tan.base.BaseTAN` and by
:class:`~onlinebma.tan.members.TreeMemberStack` (the state of
:class:`~onlinebma.tan.ModelAveragedTAN`), each on its own counts, intervals and feature kinds.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from ..reading import factorize
from ..records import NOMINAL, numeric_values
from .binning import StreamingBins

__all__ = ["RecordCoding"]

_NO_CODES = np.zeros(0, dtype=np.int64)
# Column indices kept by RecordCoding._read_record over all its codings (2 MB of int64):
# enough for every coding a narrow stream repeats (STAGGER's 27, SEA's 125 of 19 columns),
# few entries of wide records, which rarely repeat (a miss costs a tuple and a dict look-up).
_READING_CELLS = 1 << 18


class RecordCoding:
    """Validating and coding records (a mixin): works on the host's ``_kinds``
    (:class:`~onlinebma.records.FeatureKinds`), ``_counts``
    (:class:`~onlinebma.stats.pairs.PairCounts`), ``_bins`` (numeric feature ->
    :class:`~onlinebma.tan.binning.StreamingBins`), ``n_bins``, ``bin_warmup`` and the
    derived ``_readings`` / ``_readings_version`` (not state: reset them when pickling)."""

    def _read_record(self, x: dict):
        """Validate ``x`` and code its known features and values, without changing anything:
        ``(codes, values, columns, split)`` with ``codes`` increasing and ``columns`` from
        :meth:`~onlinebma.stats.pairs.PairCounts.record_columns`. The arrays (read only)
        are kept per distinct coding while no class, feature or value is added: after
        discretisation a narrow stream repeats a few hundred codings, and building them
        costs more numpy calls than the rest of a narrow record's reading."""
        split = self._kinds.split(x)
        numeric, nominal, _ = split
        counts = self._counts
        if self._readings_version != counts.version:
            self._readings, self._readings_version = {}, counts.version
        # kept under None: each numeric feature's code and cut points (fixed once, with its
        # code: a new version)
        cut = self._readings.get(None)
        if cut is None:
            cut = self._readings[None] = {f: (counts.feature_code(f), b.cuts)
                                          for f, b in self._bins.items() if b.cuts is not None}
        pairs = counts.known(nominal)
        for f, v in numeric:
            uc = cut.get(f)
            if uc is not None:
                pairs.append((uc[0], bisect_right(uc[1], v)))
        pairs.sort()
        key = tuple(pairs)
        reading = self._readings.get(key)
        if reading is None:
            if pairs:
                codes, values = (np.array(a, dtype=np.int64) for a in zip(*pairs))
            else:
                codes = values = _NO_CODES
            columns = counts.record_columns(codes, values)
            if len(self._readings) * len(columns) > _READING_CELLS:
                self._readings = {None: cut}
            reading = self._readings[key] = (codes, values, columns)
        return (*reading, split)

    def _register_bins(self, f, bins: StreamingBins) -> None:
        """Give a numeric feature whose cut points were just fixed its intervals as values."""
        u = self._counts.add_feature(f)
        for i in range(bins.n_values):
            self._counts.add_value(u, i)

    def _code_for_learning(self, split):
        """Code a validated record's values, adding new features, values and numeric samples:
        ``(codes, values, grew)``."""
        numeric, nominal, new = split
        self._kinds.commit(new)
        counts = self._counts
        grew = False
        pairs = []
        for f, v in nominal:
            u = counts.add_feature(f)
            r = len(counts.values_[u])
            c = counts.add_value(u, v)
            grew = grew or c == r
            pairs.append((u, c))
        for f, v in numeric:
            b = self._bins.get(f)
            if b is None:
                b = self._bins[f] = StreamingBins(self.n_bins, self.bin_warmup)
            had = b.cuts is not None
            i = b.learn(v)
            if b.cuts is not None and not had:
                self._register_bins(f, b)
                grew = True
            if i is not None:
                pairs.append((counts.feature_code(f), i))
        if not pairs:
            return _NO_CODES, _NO_CODES, grew
        pairs.sort()
        a = np.array(pairs, dtype=np.int64)
        return a[:, 0].copy(), a[:, 1].copy(), grew

    def _code_batch(self, columns, new, labels):
        """Code a validated batch (:func:`~onlinebma.reading.prepare_frame`'s
        ``columns, new, labels``) for counting, adding its new features, values, numeric
        samples and classes: ``(matrix, class codes)``, the matrix ``(rows, features)`` in
        feature-code order, -1 where missing or not yet cut."""
        self._kinds.commit(new)
        counts = self._counts
        coded = {}
        for f, (kind, values, _) in columns.items():
            if kind == NOMINAL:
                vcodes, uniques = values
                u = counts.add_feature(f)
                vmap = np.array([counts.add_value(u, v.item() if isinstance(v, np.generic)
                                                  else v) for v in uniques] + [-1])
                coded[u] = vmap[vcodes]  # code -1 (missing) picks the last entry
            else:
                b = self._bins.get(f)
                if b is None:
                    b = self._bins[f] = StreamingBins(self.n_bins, self.bin_warmup)
                had = b.cuts is not None
                bins = b.learn_many(values)
                if b.cuts is not None:
                    if not had:
                        self._register_bins(f, b)
                    coded[counts.feature_code(f)] = bins
        names, ycodes = factorize(labels)
        cmap = np.array([counts.add_class(label) for label in names], dtype=np.int64)
        matrix = np.full((len(labels), counts.n_features), -1, dtype=np.int64)
        for u, col in coded.items():
            matrix[:, u] = col
        return matrix, cmap[ycodes]

    def _code_frame(self, X) -> np.ndarray:
        """A validated DataFrame's known values as an int matrix ``(rows, features)`` in
        feature-code order, -1 where missing, unseen or not yet cut."""
        import pandas as pd

        counts = self._counts
        kinds, _ = self._kinds.split_frame(X, learning=False)
        matrix = np.full((len(X), counts.n_features), -1, dtype=np.int64)
        for f, kind in kinds.items():
            u = counts.feature_code(f)
            if u < 0:
                continue
            if kind == NOMINAL:
                vcodes, uniques = pd.factorize(X[f])
                vmap = np.array([counts.value_code(u, v.item() if isinstance(v, np.generic)
                                                   else v) for v in uniques] + [-1])
                matrix[:, u] = vmap[vcodes]
            else:
                matrix[:, u] = self._bins[f].bin_many(numeric_values(X[f]))
        return matrix
