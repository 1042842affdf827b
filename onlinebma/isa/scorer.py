"""ISA's scorer: the stored records in ISA's coding, eq. 9 scores and eq. 10 predictions.

The records are the adapter's canonical table (`onlinebma.table`): values and classes
compacted to those present in the stored records, so ``r_i`` and the number of classes of
eq. 10 are those present, as the paper's method wants. A model's score over all records is
computed at once, for several models together (`Scorer.log_scores`): the records grouped
by (configuration, class) in `blocks`, and each child's counts read from running sums of
64-bit words, one child at a time (`children`). Only the classes a record's configuration
already holds are counted for it: a class absent so far has all counts of eq. 10 zero, so one
value stands for all absent classes (on soybean, 19 classes, a record's configuration holds
2.3 on average over the models the search scores). The terms of single records, for scores
extended as records arrive, and the predictions of models come from the bitset index.

With a window of ``W`` the score is the *sliding* eq. 9: the sum over the ``W`` live records
of the term of each record predicted from the ``W`` records before it (the window as it was
when the record arrived), not from every earlier record. A record's term then never changes
once computed, so a cached score follows the window by adding the terms of new records and
taking away those of evicted ones (`cache`). The scorer holds the ``W`` records before the
live ones too (the adapter's store holds ``2 W``), as the context of the live records' terms.
"""

from __future__ import annotations

import numpy as np

from .. import tuning
from ..table import Table
from .blocks import Pairs, dense, refine
from .children import children_terms
from .index import BitsetIndex

__all__ = ["Scorer"]

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

    Records have positions ``0 .. n - 1`` in arrival order; the table's are ``first .. n -
    1`` and the live ones ``start .. n - 1``: all the table's without a window, its last
    ``window`` with one (the others are the context of their terms, see the module). Records
    can be appended and the oldest evicted (`slide`) as long as the table's features, values
    and classes stay those of this scorer; positions never change.
    """

    def __init__(self, table: Table, alpha: float, window: int | None = None):
        self.p, self.alpha, self.window = table.codes.shape[1], alpha, window
        self.features, self.classes = table.nominal_features, table.classes
        self.values = table.values
        self.r = np.asarray(table.n_values, dtype=np.int64)
        self.K = len(table.classes)
        # A child with fewer than two values contributes log(N + alpha) - log(N + alpha) = 0.
        self.informative = np.flatnonzero(self.r >= 2)
        self.has_missing = np.zeros(self.p, dtype=bool)  # ever, among the records held
        self.n = self.first = self.base = 0  # base: the position of the arrays' row 0
        self._X = np.empty((0, self.p), dtype=np.int64)
        self._y = np.empty(0, dtype=np.int64)
        self.log_num = self.log_den = np.empty((0, 0))
        self.index = BitsetIndex(self.r, self.K)
        self._add(table.codes, table.y)

    @property
    def start(self) -> int:
        """Position of the oldest live record."""
        return self.first if self.window is None else max(self.first, self.n - self.window)

    def context(self, t: int) -> int:
        """Position of the oldest record the term of record ``t`` counts."""
        return self.first if self.window is None else max(self.first, t - self.window)

    @property
    def X(self) -> np.ndarray:
        """``(live, p)`` codes of the live records (the table's), ``-1`` = missing."""
        return self._X[self.start - self.base: self.n - self.base]

    @property
    def y(self) -> np.ndarray:
        return self._y[self.start - self.base: self.n - self.base]

    @property
    def held(self) -> int:
        """Records of the table: positions ``first .. n - 1``."""
        return self.n - self.first

    @property
    def live(self) -> int:
        """Records live: positions ``start .. n - 1``."""
        return self.n - self.start

    @property
    def nbytes(self) -> int:
        """Bytes held: coded records, log tables and the bitset index."""
        return int(self._X.nbytes + self._y.nbytes + self.log_num.nbytes + self.log_den.nbytes
                   + self.index.nbytes)

    def slide(self, table: Table, evicted: int) -> bool:
        """Make ``table`` this scorer's records: the oldest ``evicted`` of them leave, the
        table's records after the remaining ones are appended (amortised O(p) each). Returns
        ``False``, changing nothing, when the table has another feature, value or class than
        this scorer's (every record's terms of eq. 10 would change)."""
        kept = self.held - evicted
        if (evicted < 0 or not 0 <= kept <= table.n or table.nominal_features != self.features
                or table.classes != self.classes or table.values != self.values):
            return False
        self.first += evicted
        self._add(table.codes[kept:], table.y[kept:])
        return True

    def _add(self, X: np.ndarray, y: np.ndarray):
        k = y.shape[0]
        if self.n + k - self.base > self._y.shape[0] and self.first - self.base:
            # Full of evicted records: the table's move to row 0 and are indexed again
            # (O(p) per record held, once per as many records appended).
            held = slice(self.first - self.base, self.n - self.base)
            kept_X, kept_y = self._X[held].copy(), self._y[held].copy()
            self._X[: kept_y.size], self._y[: kept_y.size] = kept_X, kept_y
            self.base = self.first
            self.index = BitsetIndex(self.r, self.K)
            self.index.reserve(self._y.shape[0])
            self.index.append(kept_X, kept_y)
        n = self.n - self.base  # rows in use
        if n + k > self._y.shape[0]:  # capacity doubles: amortised O(p) per record
            cap = max(16, 2 * (n + k))
            grown = np.empty((cap, self.p), dtype=np.int64)
            grown[:n] = self._X[:n]
            self._X = grown
            grown = np.empty(cap, dtype=np.int64)
            grown[:n] = self._y[:n]
            self._y = grown
            counts = np.arange(cap + 1, dtype=float)
            self.index.reserve(cap)
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

    def _parents(self, features: list, coding: str, xts: list, X: np.ndarray):
        """Feature ``features[m]`` of the records ``X`` as a parent of model ``m`` (``-1``:
        none, a single value), models side by side: the codes ``(M n,)`` and a bound on them."""
        js = np.array(features, dtype=np.int64)
        X = X[:, np.maximum(js, 0)].T  # (M, n)
        if coding == "full":  # the missing value is a configuration of its own
            r = self.r[np.maximum(js, 0)]
            v, card = np.where(X < 0, r[:, None], X), int(r.max()) + 1
        else:  # equal to the test value, different, missing
            test = np.array([xt[j] for j, xt in zip(np.maximum(js, 0), xts)])
            v, card = np.where(X < 0, 2, (X != test[:, None]).astype(np.int64)), 3
        v[js < 0] = 0
        return v.reshape(-1), card

    def log_score(self, A: tuple, coding: str, xt: np.ndarray) -> float:
        """Log of the conditional prequential score of M(A) over the live records (eq. 9)."""
        return float(self.log_scores([A], coding, [xt])[0])

    def log_scores(self, models: list, coding: str, xts: list, per_record: bool = False,
                   since: int | None = None):
        """`log_score` of several models, computed together (``xts[m]``: the row model
        ``m``'s indicator coding is taken against; unused with the full coding).
        ``per_record``: the terms of eq. 9 instead, ``(len(models), live)``. ``since``: over
        the records from that position on, not the live ones. With a window, the records of
        their terms' contexts are read with them (and not scored)."""
        since = self.start if since is None else since
        lo = self.context(since)
        rows = slice(lo - self.base, self.n - self.base)
        X, y = self._X[rows], self._y[rows]
        per_pass = max(1, tuning.PASS_RECORDS // max(y.size, 1))
        return np.concatenate([
            self._log_scores(models[at: at + per_pass], coding, xts[at: at + per_pass], X, y,
                             since - lo, per_record)
            for at in range(0, len(models), per_pass)
        ])

    def _model_configurations(self, models: list, coding: str, xts: list, X) -> np.ndarray:
        """``(M n,)``: configuration of record ``t`` of ``X`` under model ``m`` at ``m n + t``,
        numbered ``0..`` by model, then configuration. With the full coding the antecedents
        all the models share (in phase 1: the parent whose children are scored) are coded
        once."""
        n, M = X.shape[0], len(models)
        shared = ()
        if coding == "full" and M > 1:
            shared = tuple(sorted(set(models[0]).intersection(*models[1:])))
        c, size = np.zeros(n, dtype=np.int64), 1
        for j in shared:
            c, size = refine(c, size, *self._parents([j], coding, [None], X))
        # Each model's configurations in a range of its own: model m's in m C .. (m + 1) C.
        c = dense(c, size)
        size = int(c.max(initial=0)) + 1
        c, size = (c + size * np.arange(M)[:, None]).reshape(-1), size * M
        rest = [tuple(j for j in A if j not in shared) for A in models]
        for d in range(max(map(len, rest), default=0)):  # the d-th further antecedents
            further = [A[d] if d < len(A) else -1 for A in rest]
            c, size = refine(c, size, *self._parents(further, coding, xts, X))
        return dense(c, size)

    def _log_scores(self, models: list, coding: str, xts: list, X, y, skip: int,
                    per_record: bool):
        """Eq. 9 of each model over the records ``X, y`` (in arrival order) but the first
        ``skip`` (the context of the others' terms, with a window): ``(M,)``; ``per_record``:
        the terms, ``(M, n - skip)``."""
        n, K, M = y.shape[0], self.K, len(models)
        if n == skip:
            return np.zeros((M, 0)) if per_record else np.zeros(M)
        c = self._model_configurations(models, coding, xts, X)
        ev, ei = np.repeat(np.arange(M), n), np.tile(np.arange(n), M)
        E = ev.size
        yel = y.take(ei)
        pairs = Pairs(c, yel, K, ei, self.window, skip)
        elem = pairs.elem
        # Class given parents (eq. 10). A class absent from the configuration's earlier
        # records has no earlier records in any count: one value, ``absent``, for all such
        # classes; the (element, class) pairs of the classes present are counted.
        absent = self.log_num[0] - self.log_den[K][pairs.n_c]
        present = self.log_num[pairs.count] - self.log_den[K][pairs.n_c[elem]]
        if self.informative.size:
            parent = self._antecedents(models)
            absent_kids, present_kids = children_terms(self, parent, pairs, X, ev, ei)
            absent += absent_kids
            present += present_kids
        # log P(z = y | x) = own - log(sum over classes), the sum over the absent classes
        # being their number times exp(absent), shifted by the largest term of the classes
        # of each element (the absent value counts only if some class is absent).
        own = absent.copy()
        mine = pairs.k == yel[elem]
        own[elem[mine]] = present[mine]
        n_absent = K - np.bincount(elem, minlength=E)
        top = np.where(n_absent > 0, absent, -np.inf)
        np.maximum.at(top, elem, present)
        total = n_absent * np.exp(np.minimum(absent - top, 0.0)) + np.bincount(
            elem, np.exp(present - top[elem]), minlength=E)
        terms = (own - top - np.log(total)).reshape(M, n)[:, skip:]
        return terms if per_record else terms.sum(axis=1)

    def record_terms(self, models: list, values: list, t: int) -> np.ndarray:
        """``log P(z_t | x_t, records context(t) .. t - 1, M)`` (eq. 9-10) for several models
        at once; ``t`` a position.

        ``values[m]`` are the values model ``m``'s configurations are coded against (``None``:
        record ``t``'s own, as with the full coding).
        """
        row = t - self.base
        logq = self._class_logs(models, values, self._X[row], self.context(t), t)
        top = logq.max(axis=1)
        return logq[:, self._y[row]] - (top + np.log(np.exp(logq - top[:, None]).sum(axis=1)))

    def _antecedents(self, models) -> np.ndarray:
        """``(M, f)``: whether each informative feature is an antecedent of each model."""
        kids = self.informative
        parent = np.zeros((len(models), kids.size), dtype=bool)
        position = np.full(self.p, kids.size, dtype=np.int64)
        position[kids] = np.arange(kids.size)
        for m, A in enumerate(models):
            cols = position[list(A)]
            parent[m, cols[cols < kids.size]] = True
        return parent

    # ------------------------------------------------------ predictions

    def predict(self, models: list, values: list, xt: np.ndarray) -> np.ndarray:
        """``(len(models), K)`` class distributions of the models for the test row ``xt``
        (compact codes), from the live records (eq. 10)."""
        logq = self._class_logs(models, values, xt, self.start, self.n)
        p = np.exp(logq - logq.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def _class_logs(self, models, values, query, lo, m) -> np.ndarray:
        """``(M, K)``: log P(z = k, observed children of ``query`` | parents) + const, from the
        records at positions ``lo .. m - 1`` (eq. 10); unobserved and one-valued children are
        skipped."""
        K, alpha = self.K, self.alpha
        sets = self.index.config_sets(models, values, query, lo - self.base, m - self.base)
        kids = self.informative[query[self.informative] >= 0]
        n_k, n_x, n_o = self.index.counts(sets, query, kids, self.has_missing[kids])
        logq = np.log(n_k + alpha) - np.log(n_k.sum(axis=1, keepdims=True) + K * alpha)
        if kids.size:
            terms = np.log(n_x + alpha) - np.log(n_o + self.r[kids] * alpha)
            # Antecedent features are parents, not children.
            terms *= 1.0 - _antecedent_mask(models, kids, self.p)[:, None, :]
            logq += terms.sum(axis=2)
        return logq
