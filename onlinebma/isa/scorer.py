"""ISA's scorer: the stored records in ISA's coding, eq. 9 scores and eq. 10 predictions.

The records are the adapter's canonical table (:mod:`onlinebma.table`): values and classes
compacted to those present in the stored records, so ``r_i`` and the number of classes of
eq. 10 are those present, as the paper's method wants. A model's score over all records is
computed at once (:meth:`Scorer.log_score`, grouped cumulative counts). Only the classes a
record's configuration already holds are counted for it: a class absent so far has all counts
of eq. 10 zero, so one value stands for all absent classes (on soybean, 19 classes, a record's
configuration holds 2.3 on average over the models the search scores). The terms of single
records, for scores extended as records arrive, and the predictions of models come from the
bitset index.
"""

from __future__ import annotations

import numpy as np

from ..table import Table
from .index import BitsetIndex

__all__ = ["Scorer"]

#: Cells of the cumulative counts (models x records x feature values) of one scoring pass of
#: :meth:`Scorer.log_scores`.
_SCORE_CELLS = 1 << 21


def _grouped_prefix(keys: np.ndarray, classes: np.ndarray, n_classes: int) -> np.ndarray:
    """Class counts of the *earlier* elements of each group, for elements sorted by group key.

    Returns a ``(n_classes, len(keys))`` int32 array (class-major, so that the cumulative sum
    runs along contiguous memory).
    """
    size = keys.size
    counts = np.zeros((n_classes, size), dtype=np.int32)
    counts[classes, np.arange(size)] = 1
    np.cumsum(counts, axis=1, out=counts)
    counts[classes, np.arange(size)] -= 1  # exclusive of the element itself
    if size:
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        lengths = np.diff(np.append(starts, size))
        counts -= np.repeat(counts[:, starts], lengths, axis=1)
    return counts


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for non-negative integer keys, by numpy's radix sort
    (used for 16-bit keys) in one or two passes when the keys allow it."""
    top = int(keys.max(initial=0))
    if top < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if top < 1 << 32:  # least significant half first, then the most significant: stable
        low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
        return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]
    return np.argsort(keys, kind="stable")


def _dense(c: np.ndarray, size: int) -> np.ndarray:
    """Codes ``c`` in ``0..size-1`` renumbered ``0..C-1`` (C = number of distinct codes), in
    the order of the codes."""
    if size > 4 * c.size + 1024:
        return np.unique(c, return_inverse=True)[1].reshape(-1)
    present = np.bincount(c, minlength=size) > 0
    return (np.cumsum(present) - 1)[c]


def _antecedent_mask(models: list, columns: np.ndarray, width: int) -> np.ndarray:
    """``(len(models), len(columns))``: 1 where ``columns[c]`` is an antecedent of the model
    (``width`` = number of features)."""
    position = np.full(width + 1, columns.size, dtype=np.int64)  # last: not among columns
    position[columns] = np.arange(columns.size)
    size = max(max(map(len, models), default=0), 1)
    padded = np.array([A + (width,) * (size - len(A)) for A in models], dtype=np.int64)
    mask = np.zeros((len(models), columns.size + 1))
    np.put_along_axis(mask, position[padded.reshape(len(models), size)], 1.0, axis=1)
    return mask[:, :-1]


class Scorer:
    """ISA's scorer: the stored records (a canonical table's codes), indexed; the eq. 9 score
    of a model over them and the eq. 10 predictions of models.

    Records can be appended (:meth:`append`) as long as they bring no new value or class.
    """

    def __init__(self, table: Table, alpha: float):
        self.p, self.alpha = table.codes.shape[1], alpha
        self.features, self.classes = table.nominal_features, table.classes
        self.r = np.asarray(table.n_values, dtype=np.int64)
        self.K = len(table.classes)
        # A child with fewer than two values contributes log(N + alpha) - log(N + alpha) = 0.
        self.informative = np.flatnonzero(self.r >= 2)
        self.has_missing = np.zeros(self.p, dtype=bool)
        self.n = 0
        self._X = np.empty((0, self.p), dtype=np.int64)
        self._y = np.empty(0, dtype=np.int64)
        self.log_num = self.log_den = np.empty((0, 0))
        self.index = BitsetIndex(self.r, self.K)
        self._add(table.codes, table.y)

    @property
    def X(self) -> np.ndarray:
        """``(n, p)`` codes of the stored records (the table's), ``-1`` = missing."""
        return self._X[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.n]

    @property
    def nbytes(self) -> int:
        """Bytes held: coded records, log tables and the bitset index."""
        return int(self._X.nbytes + self._y.nbytes + self.log_num.nbytes + self.log_den.nbytes
                   + self.index.nbytes)

    def append(self, table: Table) -> bool:
        """Add ``table``'s records after the first ``n``, which must be this scorer's records
        (the caller checks that none left). Returns ``False``, changing nothing, when the table
        has another feature, value or class than this scorer's: every record's terms of
        eq. 10 would change."""
        if (table.nominal_features != self.features or table.classes != self.classes
                or tuple(self.r) != tuple(table.n_values)):
            return False
        self._add(table.codes[self.n:], table.y[self.n:])
        return True

    def _add(self, X: np.ndarray, y: np.ndarray):
        k, n = y.shape[0], self.n
        if n + k > self._y.shape[0]:  # capacity doubles: amortised O(p) per record
            cap = max(16, 2 * (n + k))
            grown = np.empty((cap, self.p), dtype=np.int64)
            grown[:n] = self.X
            self._X = grown
            grown = np.empty(cap, dtype=np.int64)
            grown[:n] = self.y
            self._y = grown
            counts = np.arange(cap + 1, dtype=float)
            self.log_num = np.log(counts + self.alpha)  # log(N + alpha), eq. 10 numerators
            # log(N + r alpha) for r = 0 .. max(r_i, K), eq. 10 denominators (row 0 unused).
            sizes = np.arange(max(int(self.r.max(initial=0)), self.K) + 1)[:, None]
            with np.errstate(divide="ignore"):
                self.log_den = np.log(counts[None, :] + sizes * self.alpha)
        self._X[n: n + k], self._y[n: n + k] = X, y
        self.has_missing |= (X < 0).any(axis=0)
        self.index.append(self._X[n: n + k], self._y[n: n + k])
        self.n += k

    # ------------------------------------------------------------- eq. 9

    def configurations(self, A: tuple, coding: str, xt: np.ndarray) -> np.ndarray:
        """Parent configuration of every record under antecedent set ``A``, as ``0..C-1``."""
        c = np.zeros(self.n, dtype=np.int64)
        size = 1
        for j in A:
            col = self.X[:, j]
            if coding == "full":
                v, card = np.where(col < 0, self.r[j], col), int(self.r[j]) + 1
            else:  # equal to the test value, different, missing
                v, card = np.where(col < 0, 2, (col != xt[j]).astype(np.int64)), 3
            if size * card >= 2**62:
                c = _dense(c, size)
                size = int(c.max()) + 1
            c = c * card + v
            size *= card
        return _dense(c, size)

    def log_score(self, A: tuple, coding: str, xt: np.ndarray) -> float:
        """Log of the conditional prequential score of M(A) over the records (eq. 9)."""
        return float(self.log_scores([A], coding, [xt])[0])

    def log_scores(self, models: list, coding: str, xts: list) -> np.ndarray:
        """:meth:`log_score` of several models, computed together (``xts[m]``: the row model
        ``m``'s indicator coding is taken against; unused with the full coding)."""
        width = int(self.r[self.informative].sum()) + 1  # columns of the counts
        per_pass = max(1, _SCORE_CELLS // max(self.n * width, 1))
        return np.concatenate([
            self._log_scores(models[lo: lo + per_pass], coding, xts[lo: lo + per_pass])
            for lo in range(0, len(models), per_pass)
        ])

    def _log_scores(self, models: list, coding: str, xts: list) -> np.ndarray:
        n, K, M = self.n, self.K, len(models)
        if n == 0:
            return np.zeros(M)
        # Configuration of record t under model m: group m * n + c (configurations < n).
        c = np.concatenate([self.configurations(A, coding, xt) for A, xt in zip(models, xts)])
        c += np.repeat(np.arange(M, dtype=np.int64) * n, n)
        # Class given parents: earlier counts N_{c,k} of the record's configuration (eq. 10).
        y = np.tile(self.y, M)
        order = _stable_order(c)
        prior = np.empty((K, M * n), dtype=np.int32)
        prior[:, order] = _grouped_prefix(c[order], y[order], K)
        n_c = prior.sum(axis=0)
        # A class absent from the configuration's earlier records has no earlier records in
        # any count of eq. 10: one value, ``absent``, for all such classes.
        absent = self.log_num[0] - self.log_den[K][n_c]
        logq = np.empty((K, M * n))
        logq[:] = absent
        # (element, class) pairs with earlier records of that class, element by element
        elem, k = np.nonzero(prior.T)
        count = prior[k, elem]
        logq[k, elem] = self.log_num[count] - self.log_den[K][n_c[elem]]
        if self.informative.size:
            absent_kids, present_kids = self._children_terms(models, c, y, (elem, k), count)
            logq += absent_kids
            logq[k, elem] += present_kids - absent_kids[elem]
        own = logq[y, np.arange(M * n)]
        top = logq.max(axis=0)
        terms = own - (top + np.log(np.exp(logq - top).sum(axis=0)))
        return terms.reshape(M, n).sum(axis=1)

    def record_terms(self, models: list, values: list, t: int) -> np.ndarray:
        """``log P(z_t | x_t, records before t, M)`` (eq. 9-10) for several models at once.

        ``values[m]`` are the values model ``m``'s configurations are coded against (``None``:
        record ``t``'s own, as with the full coding).
        """
        logq = self._class_logs(models, values, self.X[t], t)
        top = logq.max(axis=1)
        return logq[:, self.y[t]] - (top + np.log(np.exp(logq - top[:, None]).sum(axis=1)))

    def _count_rows(self):
        """Per record, over the informative features: observed or not, the record's row of the
        cumulative counts of :meth:`_children_terms` and the column it reads for each feature.
        (Rebuilt per scoring pass, O(n p): kept, they would hold several times the index's
        memory on a stream, where every pass follows new records.)"""
        n, kids = self.n, self.informative
        r = self.r[kids]
        values = self.X[:, kids]  # (n, f)
        seen = values >= 0
        # A row per record: 1 in the column of each (feature, value) it has, 2^B in every
        # column of each feature it misses (B = 16 or 32 bits: a block's two counts, at most
        # n each, fit side by side). The last column is always 0 (the empty column).
        offset = np.concatenate(([0], np.cumsum(r)[:-1]))
        width = int(r.sum()) + 1
        dtype, bits = (np.uint32, 16) if n < 1 << 16 else (np.uint64, 32)
        row = np.zeros((n, width), dtype=dtype)
        t, i = np.nonzero(seen)
        row[t, offset[i] + values[t, i]] = 1
        owner = np.repeat(np.arange(kids.size), r)  # feature of each column
        row[:, :-1] += (~seen[:, owner]).astype(dtype) << dtype(bits)
        # The column read for each feature (missing: the empty column).
        column = np.where(seen, offset + values, width - 1).astype(np.int32)
        return seen, row, column, dtype, bits

    def _children_terms(self, models, c, y, present, count):
        """Sum over the children of log P(x_i | z, parents) (eq. 10) for the records of ``M``
        models at once (``c``, ``y``: group and class per model and record).

        Returns the sum for a class absent from the record's configuration so far, per element
        ``(M n,)``, and the sum for each of the ``present`` (element, class) pairs (``count``
        earlier records of that class in the configuration). Only the classes present are
        counted: most configurations hold few classes.
        """
        n, M, K = self.n, len(models), self.K
        kids = self.informative
        f = kids.size
        r = self.r[kids]
        parent = np.zeros((M, f))  # antecedents of each model, as columns of ``kids``
        position = np.full(self.p, f, dtype=np.int64)
        position[kids] = np.arange(f)
        for m, A in enumerate(models):
            cols = position[list(A)]
            parent[m, cols[cols < f]] = 1.0
        seen, row, column, dtype, bits = self._count_rows()
        width = row.shape[1]
        # Per record and model, by number of values s: children observed, antecedents observed.
        sizes = np.unique(r)
        of_size = r[None, :] == sizes[:, None]
        observed_s = (seen[:, None, :] & of_size[None]).sum(axis=2)  # (n, sizes)
        missing_s = of_size.sum(axis=1) - observed_s
        parents_s = np.stack([(seen[:, of] * 1.0) @ parent[:, of].T for of in of_size], axis=-1)
        parents_s = parents_s.transpose(1, 0, 2).reshape(M * n, sizes.size)
        kids_s = np.tile(observed_s, (M, 1)) - parents_s  # (M n, sizes): children used
        log_alpha = self.log_num[0]
        # Absent class: every count is 0, log(alpha) - log(r_i alpha) per child used.
        absent = kids_s @ (log_alpha - self.log_den[sizes, 0])
        key = c * K + y
        order = _stable_order(key)
        cum = np.zeros((M * n + 1, width), dtype=dtype)
        np.cumsum(row[order % n], axis=0, out=cum[1:])
        cum = cum.reshape(-1)
        skey = key[order]
        first = np.flatnonzero(np.concatenate(([True], skey[1:] != skey[:-1])))
        start = np.zeros(M * n * K, dtype=np.int64)
        start[skey[first]] = first
        # Column read per (model, record, feature): antecedents read the empty column too.
        column = np.where(parent[:, None, :] > 0, width - 1, column[None]).reshape(M * n, f)
        gaps = np.flatnonzero(self.has_missing[kids])
        n_features = of_size.sum(axis=1)  # features of each size
        den = self.log_den.reshape(-1)
        stride = self.log_den.shape[1]
        low = dtype((1 << bits) - 1)
        # Per present pair: counts among the first ``count`` records of its (group, class).
        elem, k = present
        lo = start[c[elem] * K + k] * width
        hi = lo + count * width
        out = np.empty(k.size)
        step = max(1, _SCORE_CELLS // (2 * f))
        for a in range(0, k.size, step):
            e, n_ = elem[a: a + step], count[a: a + step]
            cols = column[e]
            both = cum[hi[a: a + step, None] + cols] - cum[lo[a: a + step, None] + cols]
            total = self.log_num[both & low].sum(axis=1)  # same class and child value
            # Denominators: earlier records of the class with the child observed: all
            # ``count`` of them, less those missing it.
            by_size = self.log_den[sizes][:, n_].T  # (pairs, sizes): log(count + s alpha)
            total -= by_size @ n_features
            if gaps.size:  # fewer observed where earlier records miss the child (rare)
                pair, gap = np.nonzero(both[:, gaps] >> dtype(bits))
                missed = (both[pair, gaps[gap]] >> dtype(bits)).astype(np.int64)
                at = r[gaps[gap]] * stride + n_[pair]
                total -= np.bincount(pair, den[at - missed] - den[at], minlength=len(total))
            # Every feature was read: a missing one or an antecedent (the empty column) gave
            # log(alpha) - log(count + r alpha), which is not a child term.
            total -= ((log_alpha - by_size) * (missing_s[e % n] + parents_s[e])).sum(axis=1)
            out[a: a + step] = total
        return absent, out

    # ------------------------------------------------------ predictions

    def predict(self, models: list, values: list, xt: np.ndarray) -> np.ndarray:
        """``(len(models), K)`` class distributions of the models for the test row ``xt``
        (compact codes), from all stored records (eq. 10)."""
        logq = self._class_logs(models, values, xt, self.n)
        p = np.exp(logq - logq.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def _class_logs(self, models, values, query, m) -> np.ndarray:
        """``(M, K)``: log P(z = k, observed children of ``query`` | parents) + const, from the
        first ``m`` records (eq. 10); unobserved and one-valued children are skipped."""
        K, alpha = self.K, self.alpha
        sets = self.index.config_sets(models, values, query, m)
        kids = self.informative[query[self.informative] >= 0]
        n_k, n_x, n_o = self.index.counts(sets, query, kids, self.has_missing[kids])
        logq = np.log(n_k + alpha) - np.log(n_k.sum(axis=1, keepdims=True) + K * alpha)
        if kids.size:
            terms = np.log(n_x + alpha) - np.log(n_o + self.r[kids] * alpha)
            # Antecedent features are parents, not children.
            terms *= 1.0 - _antecedent_mask(models, kids, self.p)[:, None, :]
            logq += terms.sum(axis=2)
        return logq
