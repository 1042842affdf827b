"""ISA's scorer: the stored records in ISA's coding, eq. 9 scores and eq. 10 predictions.

The records are the adapter's canonical table (`onlinebma.table`): values and classes
compacted to those present in the stored records, so ``r_i`` and the number of classes of
eq. 10 are those present, as the paper's method wants. A model's score over all records is
computed at once, for several models together (`Scorer.log_scores`): the records grouped
by (configuration, class) in `blocks`, and each child's counts read from running sums of
64-bit words, one child at a time. Only the classes a record's configuration already holds
are counted for it: a class absent so far has all counts of eq. 10 zero, so one value stands
for all absent classes (on soybean, 19 classes, a record's configuration holds 2.3 on average
over the models the search scores). The terms of single records, for scores extended as
records arrive, and the predictions of models come from the bitset index.
"""

from __future__ import annotations

import numpy as np

from ..table import Table
from .blocks import Pairs, count_table, dense, refine
from .index import BitsetIndex

__all__ = ["Scorer"]

#: Records times models of one scoring pass of `Scorer.log_scores` (its temporaries,
#: a few per record and class present, then stay in the processor's cache).
_PASS_RECORDS = 1 << 15


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

    Records can be appended (`append`) as long as they bring no new value or class.
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

    def _parents(self, features: list, coding: str, xts: list) -> tuple[np.ndarray, int]:
        """Feature ``features[m]`` of every record as a parent of model ``m`` (``-1``: none, a
        single value), models side by side: the codes ``(M n,)`` and a bound on them."""
        js = np.array(features, dtype=np.int64)
        X = self.X[:, np.maximum(js, 0)].T  # (M, n)
        if coding == "full":  # the missing value is a configuration of its own
            r = self.r[np.maximum(js, 0)]
            v, card = np.where(X < 0, r[:, None], X), int(r.max()) + 1
        else:  # equal to the test value, different, missing
            test = np.array([xt[j] for j, xt in zip(np.maximum(js, 0), xts)])
            v, card = np.where(X < 0, 2, (X != test[:, None]).astype(np.int64)), 3
        v[js < 0] = 0
        return v.reshape(-1), card

    def log_score(self, A: tuple, coding: str, xt: np.ndarray) -> float:
        """Log of the conditional prequential score of M(A) over the records (eq. 9)."""
        return float(self.log_scores([A], coding, [xt])[0])

    def log_scores(self, models: list, coding: str, xts: list) -> np.ndarray:
        """`log_score` of several models, computed together (``xts[m]``: the row model
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
        n, M = self.n, len(models)
        shared = ()
        if coding == "full" and M > 1:
            shared = tuple(sorted(set(models[0]).intersection(*models[1:])))
        c, size = np.zeros(n, dtype=np.int64), 1
        for j in shared:
            c, size = refine(c, size, *self._parents([j], coding, [None]))
        # Each model's configurations in a range of its own: model m's in m C .. (m + 1) C.
        c = dense(c, size)
        size = int(c.max(initial=0)) + 1
        c, size = (c + size * np.arange(M)[:, None]).reshape(-1), size * M
        rest = [tuple(j for j in A if j not in shared) for A in models]
        for d in range(max(map(len, rest), default=0)):  # the d-th further antecedents
            further = [A[d] if d < len(A) else -1 for A in rest]
            c, size = refine(c, size, *self._parents(further, coding, xts))
        return dense(c, size)

    def _log_scores(self, models: list, coding: str, xts: list) -> np.ndarray:
        n, K, M = self.n, self.K, len(models)
        if n == 0:
            return np.zeros(M)
        c = self._model_configurations(models, coding, xts)
        y = np.tile(self.y, M)
        pairs = Pairs(c, y, K)
        elem = pairs.elem
        # Class given parents (eq. 10). A class absent from the configuration's earlier
        # records has no earlier records in any count: one value, ``absent``, for all such
        # classes; the (element, class) pairs of the classes present are counted.
        absent = self.log_num[0] - self.log_den[K][pairs.n_c]
        present = self.log_num[pairs.count] - self.log_den[K][pairs.n_c[elem]]
        if self.informative.size:
            absent_kids, present_kids = self._children_terms(models, pairs)
            absent += absent_kids
            present += present_kids
        # log P(z = y | x) = own - log(sum over classes), the sum over the absent classes
        # being their number times exp(absent), shifted by the largest term of the classes
        # of each element (the absent value counts only if some class is absent).
        own = absent.copy()
        mine = pairs.k == y[elem]
        own[elem[mine]] = present[mine]
        n_absent = K - np.bincount(elem, minlength=M * n)
        top = np.where(n_absent > 0, absent, -np.inf)
        np.maximum.at(top, elem, present)
        total = n_absent * np.exp(np.minimum(absent - top, 0.0)) + np.bincount(
            elem, np.exp(present - top[elem]), minlength=M * n)
        terms = own - top - np.log(total)
        return terms.reshape(M, n).sum(axis=1)

    def record_terms(self, models: list, values: list, t: int) -> np.ndarray:
        """``log P(z_t | x_t, records before t, M)`` (eq. 9-10) for several models at once.

        ``values[m]`` are the values model ``m``'s configurations are coded against (``None``:
        record ``t``'s own, as with the full coding).
        """
        logq = self._class_logs(models, values, self.X[t], t)
        top = logq.max(axis=1)
        return logq[:, self.y[t]] - (top + np.log(np.exp(logq - top[:, None]).sum(axis=1)))

    def _children_terms(self, models, pairs: Pairs):
        """Sum over the children of log P(x_i | z, parents) (eq. 10) for the records of ``M``
        models at once.

        Returns the sum for a class absent from the record's configuration so far, per element
        ``(M n,)``, and the sum for each of the ``pairs`` (element, class present). Only the
        classes present are counted: most configurations hold few classes.
        """
        n, M = self.n, len(models)
        kids = self.informative
        parent = np.zeros((M, kids.size), dtype=bool)  # antecedents, as columns of ``kids``
        position = np.full(self.p, kids.size, dtype=np.int64)
        position[kids] = np.arange(kids.size)
        for m, A in enumerate(models):
            cols = position[list(A)]
            parent[m, cols[cols < kids.size]] = True
        # Absent class: every count is 0, log(alpha) - log(r_i alpha) per child used.
        w = self.log_num[0] - self.log_den[self.r[kids], 0]
        seen = self.X[:, kids] >= 0  # (n, f)
        absent = ((seen * w) @ ~parent.T).T.reshape(M * n)
        loop = np.flatnonzero(~parent.all(axis=0))  # antecedents of all models: no term
        return absent, self._pair_terms(loop, parent, pairs)

    def _pair_terms(self, children, parent, pairs: Pairs):
        """Sum over ``children`` (columns of the informative features) of
        log(N_ijk + alpha) - log(N_ij + r_i alpha) (eq. 10) for every (element, class) pair,
        over the children that are not antecedents of the pair's model and that the record
        has. One child at a time, so that the temporaries (a few per pair) stay in the
        processor's cache.
        """
        n, M = self.n, len(parent)
        om, first, elem, last, count = (pairs.order % n, pairs.first, pairs.elem, pairs.last,
                                        pairs.count)
        record = elem % n
        models = np.searchsorted(elem // n, np.arange(M + 1))  # model m's pairs
        features = self.informative[children]
        r = self.r[features]
        codes = self.X[:, features].T  # (children, n)
        free = ~parent[:, children]  # (M, children): the children of each model
        missing = (codes < 0).T.astype(float)  # (n, children)
        # Pairs none of whose earlier records of its class and configuration misses a child
        # have N_ij = count for every child: their denominators are summed by r_i. The
        # others (``gaps``; all pairs when they are most) read N_ij child by child below.
        incomplete = np.zeros(om.size + 1, dtype=np.int64)
        np.cumsum((codes < 0).any(axis=0).take(om), out=incomplete[1:])
        gaps = np.flatnonzero(incomplete[last + 1] > incomplete[last + 1 - count])
        gaps, gap_models = ((slice(None), models) if 2 * gaps.size > elem.size
                            else (gaps, np.searchsorted(gaps, models)))
        # A child the record misses reads N_ijk = 0 below (log(alpha)), and for the gaps
        # N_ij = 0 (log(r_i alpha)): not terms, taken back here.
        total = (missing @ free.T).T.reshape(-1).take(elem) * -self.log_num[0]
        without = total[gaps] + ((missing * self.log_den[r, 0]) @ free.T).T.reshape(-1)[
            elem[gaps]]
        if not isinstance(gaps, slice):
            sizes, size_of = np.unique(r, return_inverse=True)
            used = np.matmul(1.0 - missing[None],
                             free[:, :, None] * np.eye(sizes.size)[size_of])
            used = used.reshape(M * n, sizes.size).T  # per size: children the record has
            for s, used_s in zip(sizes, used):
                total -= used_s.take(elem) * self.log_den[s].take(count)
        total[gaps] = without
        # Counts (at most n, so b bits) side by side in a 64-bit word: the counts of ``per``
        # values of the child and, in the top field, of the records with the child observed.
        b = max(n.bit_length(), 1)
        per = 64 // b - 1
        top = np.uint64(b * per)
        mask = np.uint64((1 << b) - 1)
        # The record's value's field; a record missing the child shifts by 64, reading 0
        # (numpy's shifts by the word size or more give 0) for both counts.
        shifts = np.where(codes < 0, 64, codes % per * b).astype(np.uint64)
        offsets = np.maximum(codes, 0) // per * om.size  # the word of the record's value
        codes = np.where(codes < 0, r[:, None], codes)  # a missing value: code r_i
        tables = {ri: count_table(ri, b, per) for ri in set(r.tolist())}
        owners = [[] for _ in children]  # the models each child is an antecedent of
        for i, m in zip(*np.nonzero(~free.T)):
            owners[i].append(m)
        den = np.zeros(without.size)
        for ri, code, shift, offset, owner in zip(r.tolist(), codes, shifts, offsets, owners):
            table = tables[ri]
            # Running sums restarting at each block (each block's start less the sum of the
            # block before it): a pair's counts at ``last``.
            cum = table.take(code.take(om), axis=1)
            for row in cum:
                row[first[1:]] -= np.add.reduceat(row, first)[:-1]
            cum = np.cumsum(cum, axis=1, out=cum).reshape(-1)
            word = cum.take(last if table.shape[0] == 1 else offset.take(record) + last)
            shift = shift.take(record)
            term = self.log_num.take(((word >> shift) & mask).view(np.int64))
            gap = self.log_den[ri].take(
                (word[gaps] >> np.maximum(shift[gaps], top)).view(np.int64))
            for m in owner:
                term[models[m]: models[m + 1]] = 0.0
                gap[gap_models[m]: gap_models[m + 1]] = 0.0
            total += term
            den += gap
        total[gaps] -= den
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
