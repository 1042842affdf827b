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

#: Records times models of one scoring pass of :meth:`Scorer.log_scores` (its temporaries,
#: a few per record and class present, then stay in the processor's cache).
_PASS_RECORDS = 1 << 15


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

    def _column(self, j: int, coding: str, xt) -> tuple[np.ndarray, int]:
        """Feature ``j`` of every record as a parent: its codes and their number."""
        col = self.X[:, j]
        if coding == "full":  # the missing value is a configuration of its own
            return np.where(col < 0, self.r[j], col), int(self.r[j]) + 1
        # equal to the test value, different, missing
        return np.where(col < 0, 2, (col != xt[j]).astype(np.int64)), 3

    def configurations(self, A: tuple, coding: str, xt: np.ndarray, base=None) -> np.ndarray:
        """Parent configuration of every record under antecedent set ``A``, as ``0..C-1``
        (``base``: the configurations ``(codes, C)`` of a subset of ``A``, refined by the rest
        of ``A``)."""
        c, size = (np.zeros(self.n, dtype=np.int64), 1) if base is None else base
        for j in A:
            v, card = self._column(j, coding, xt)
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
        per_pass = max(1, _PASS_RECORDS // max(self.n, 1))
        return np.concatenate([
            self._log_scores(models[lo: lo + per_pass], coding, xts[lo: lo + per_pass])
            for lo in range(0, len(models), per_pass)
        ])

    def _model_configurations(self, models: list, coding: str, xts: list) -> np.ndarray:
        """``(M n,)``: configuration of record ``t`` under model ``m`` at ``m n + t``, numbered
        ``0..`` by model, then configuration. With the full coding the antecedents all the
        models share (in phase 1: the parent whose children are scored) are coded once."""
        n = self.n
        base, shared = None, ()
        if coding == "full" and len(models) > 1:
            shared = tuple(sorted(set(models[0]).intersection(*models[1:])))
            c = self.configurations(shared, coding, None)
            base = (c, int(c.max(initial=0)) + 1)
        c = np.concatenate([
            self.configurations(tuple(j for j in A if j not in shared), coding, xt, base)
            for A, xt in zip(models, xts)
        ])
        c += np.repeat(np.arange(len(models), dtype=np.int64) * n, n)
        return c

    def _log_scores(self, models: list, coding: str, xts: list) -> np.ndarray:
        n, K, M = self.n, self.K, len(models)
        if n == 0:
            return np.zeros(M)
        c = self._model_configurations(models, coding, xts)
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
            absent_kids, present_kids = self._children_terms(models, c, (elem, k), count)
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

    def _children_terms(self, models, c, present, count):
        """Sum over the children of log P(x_i | z, parents) (eq. 10) for the records of ``M``
        models at once (``c``: group per model and record, from
        :meth:`_model_configurations`).

        Returns the sum for a class absent from the record's configuration so far, per element
        ``(M n,)``, and the sum for each of the ``present`` (element, class) pairs (``count``
        earlier records of that class in the configuration). Only the classes present are
        counted: most configurations hold few classes.
        """
        n, M, K = self.n, len(models), self.K
        kids = self.informative
        r = self.r[kids]
        seen = self.X[:, kids] >= 0  # (n, f)
        parent = np.zeros((M, kids.size), dtype=bool)  # antecedents, as columns of ``kids``
        position = np.full(self.p, kids.size, dtype=np.int64)
        position[kids] = np.arange(kids.size)
        for m, A in enumerate(models):
            cols = position[list(A)]
            parent[m, cols[cols < kids.size]] = True
        log_alpha = self.log_num[0]
        # Absent class: every count is 0, log(alpha) - log(r_i alpha) per child used.
        w = log_alpha - self.log_den[r, 0]
        absent = ((seen @ w)[None, :] - (parent * w) @ seen.T).reshape(M * n)
        # Records sorted by (group, class, arrival): the earlier records of class k in a
        # record's configuration are the first ``count`` of its (group, class) block.
        key = c * K + np.tile(self.y, M)
        order = _stable_order(key)
        skey = key[order]
        first = np.flatnonzero(np.concatenate(([True], skey[1:] != skey[:-1])))
        start = np.zeros(M * n * K, dtype=np.int64)
        start[skey[first]] = first
        elem, k = present
        lo = start[c[elem] * K + k]
        hi = lo + count
        record, model = elem % n, elem // n
        # Pairs are ordered by element: model m's are ``pairs[m]:pairs[m + 1]``.
        pairs = np.searchsorted(elem, np.arange(M + 1) * n)
        # Denominators log(count + r_i alpha) of the children with no missing value, by r_i;
        # those of children with missing values are read with their counts below.
        sizes, size_of = np.unique(r, return_inverse=True)
        by_size = self.log_den[sizes][:, count]  # (sizes, pairs)
        free = (~parent).astype(float)
        complete = ~self.has_missing[kids]
        of_size = np.eye(sizes.size)[size_of]  # (f, sizes)
        total = -((free * complete) @ of_size)[model].T * by_size
        # A child the record misses reads no counts: log(alpha) - log(count + r_i alpha),
        # which is not a term; taken back here.
        missed = (~seen)[None, :, :] & ~parent[:, None, :]  # (M, n, f)
        missed = (missed.reshape(M * n, -1) @ of_size)[elem].T  # (sizes, pairs)
        total -= missed * (log_alpha - by_size)
        total = total.sum(axis=0)
        om = order % n
        dtype, bits = (np.uint32, 16) if n < 1 << 16 else (np.uint64, 32)
        loop = np.flatnonzero(~parent.all(axis=0))  # antecedents of all models: no term
        total += self._pair_terms(loop, parent, om, (record, lo, hi), count, pairs, dtype, bits)
        return absent, total

    def _pair_terms(self, children, parent, om, where, count, pairs, dtype, bits):
        """Sum over ``children`` (columns of the informative features) of
        log(N_ijk + alpha) - log(N_ij + r_i alpha) for every (element, class) pair, with the
        children that the record misses or that are antecedents of the pair's model counted
        as 0 in the numerator, and the denominators of the children without missing values
        left to the caller.

        ``om``: the records in (group, class, arrival) order; ``where``: per pair its record
        and the range ``lo:hi`` of the earlier records of its class and configuration in
        that order. One child at a time, so that the temporaries (a few per pair) stay in the
        processor's cache.
        """
        record, lo, hi = where
        stride = om.size + 1
        features = self.informative[children]
        codes = self.X[:, features].T  # (children, n); a missing value: code r_i
        codes = np.where(codes < 0, self.r[features][:, None], codes)
        owners = [np.flatnonzero(parent[:, i]) for i in children]
        total = np.zeros(record.size)
        log_den = self.log_den
        for f, code, owner in zip(features, codes, owners):
            ri = int(self.r[f])
            # Row v of ``cum``: running count of value v in the sorted records, plus 2^bits
            # per record missing the child; row ri (a missing value) stays 0, so that a record
            # missing the child reads no counts.
            rows = np.eye(ri, ri + 1, dtype=dtype)
            if self.has_missing[f]:
                rows[:, ri] = dtype(1) << dtype(bits)
            cum = np.zeros((ri + 1, stride), dtype=dtype)
            np.cumsum(rows.take(code.take(om), axis=1), axis=1, out=cum[:ri, 1:])
            cum = cum.reshape(-1)
            at = (code * stride).take(record)
            both = cum.take(at + hi)
            both -= cum.take(at + lo)
            term = self.log_num.take(both & dtype((1 << bits) - 1))  # class k, record's value
            if self.has_missing[f]:  # earlier records of class k with the child observed
                term -= log_den[ri].take(count - (both >> dtype(bits)))
            for m in owner:
                term[pairs[m]: pairs[m + 1]] = 0.0
            total += term
        return total

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
