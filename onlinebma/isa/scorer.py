"""ISA's scorer: the stored records in ISA's coding, eq. 9 scores and eq. 10 predictions."""

from __future__ import annotations

import itertools

import numpy as np

from ..batch import Encoded

__all__ = ["Scorer"]

#: Cells of the (models x records) match matrix built at once when extending scores.
_MATCH_CELLS = 1 << 22


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


def _antecedent_mask(models: list, width: int, column=None) -> np.ndarray:
    """``(len(models), width)`` matrix with ones at the features of each antecedent set (mapped
    to columns by the array ``column`` when given)."""
    lengths = np.fromiter(map(len, models), dtype=np.int64, count=len(models))
    features = np.fromiter(itertools.chain.from_iterable(models), dtype=np.int64,
                           count=int(lengths.sum()))
    mask = np.zeros((len(models), width))
    mask[np.repeat(np.arange(len(models)), lengths),
         features if column is None else column[features]] = 1.0
    return mask


class Scorer:
    """ISA's scorer: the stored records re-coded with the values and classes present in them,
    the eq. 9 score of a model over them and the eq. 10 predictions of models."""

    def __init__(self, data: Encoded, alpha: float):
        n, p = data.codes.shape
        self.n, self.p = n, p
        # Features in the order of their names, so that neither the search's tie-breaking nor
        # the floating-point sums depend on the order in which features first arrived.
        self.columns = np.array(
            sorted(range(p), key=lambda j: (str(data.nominal_features[j]), j)), dtype=np.int64
        )
        codes = data.codes[:, self.columns]
        self.value_maps = []  # per feature: original code -> compact code (-1 = absent)
        X = np.empty((n, p), dtype=np.int64)
        r = np.zeros(p, dtype=np.int64)
        for j in range(p):
            col = codes[:, j]
            present = np.bincount(col[col >= 0], minlength=data.n_values[self.columns[j]]) > 0
            compact = np.full(len(present) + 1, -1, dtype=np.int64)  # last entry: code -1
            compact[: len(present)][present] = np.arange(int(present.sum()))
            X[:, j] = compact[col]
            r[j] = int(present.sum())
            self.value_maps.append(compact)
        present = np.bincount(data.y, minlength=len(data.classes)) > 0
        self.class_index = np.flatnonzero(present)  # compact class -> position in data.classes
        compact_y = np.cumsum(present) - 1
        self.y = compact_y[data.y].astype(np.int64)
        self.K = len(self.class_index)
        self.X, self.r = X, r
        # A child with fewer than two values contributes log(N + alpha) - log(N + alpha) = 0.
        self.informative = np.flatnonzero(r >= 2)
        self.observed = X >= 0
        self.has_missing = ~self.observed.all(axis=0)
        self.onehot = np.eye(self.K)[self.y]  # (n, K), for predictions
        self.alpha = alpha
        counts = np.arange(n + 1, dtype=float)
        self.log_num = np.log(counts + alpha)  # log(N + alpha), eq. 10 numerators
        # log(N + r alpha) for r = 0 .. max(r_i, K), eq. 10 denominators (row 0 is never used).
        sizes = np.arange(max(int(r.max(initial=0)), self.K) + 1)[:, None]
        with np.errstate(divide="ignore"):
            self.log_den = np.log(counts[None, :] + sizes * alpha)

    def test_codes(self, codes_row: np.ndarray) -> np.ndarray:
        """A test row in compact codes; -1 for missing or values absent from the records."""
        out = np.full(self.p, -1, dtype=np.int64)
        for j, code in enumerate(codes_row[self.columns]):
            if 0 <= code < len(self.value_maps[j]) - 1:
                out[j] = self.value_maps[j][code]
        return out

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
                c = np.unique(c, return_inverse=True)[1].reshape(-1)
                size = int(c.max()) + 1
            c = c * card + v
            size *= card
        return np.unique(c, return_inverse=True)[1].reshape(-1)

    def log_score(self, A: tuple, coding: str, xt: np.ndarray) -> float:
        """Log of the conditional prequential score of M(A) over the records (eq. 9)."""
        n, K = self.n, self.K
        c = self.configurations(A, coding, xt)
        n_configs = int(c.max()) + 1 if n else 1
        # Class given parents: earlier counts N_{c,k} of the record's configuration (eq. 10).
        order = np.argsort(c, kind="stable")
        prior = np.empty((K, n), dtype=np.int32)
        prior[:, order] = _grouped_prefix(c[order], self.y[order], K)
        logq = self.log_num[prior] - self.log_den[K][prior.sum(axis=0)]
        children = np.setdiff1d(self.informative, np.asarray(A, dtype=np.int64))
        if children.size:
            logq += self._children_terms(children, c, n_configs, prior)
        own = logq[self.y, np.arange(n)]
        top = logq.max(axis=0)
        norm = top + np.log(np.exp(logq - top).sum(axis=0))
        return float(np.sum(own - norm))

    def extends(self, old: Scorer) -> bool:
        """Whether these records are ``old``'s records, in the same coding, plus new ones."""
        return (
            self.n >= old.n
            and self.p == old.p
            and np.array_equal(self.columns, old.columns)
            and np.array_equal(self.r, old.r)
            and np.array_equal(self.class_index, old.class_index)
            and np.array_equal(self.X[: old.n], old.X)
            and np.array_equal(self.y[: old.n], old.y)
        )

    def log_score_tails(self, models: list, coding: str, xts, start: int) -> np.ndarray:
        """The terms of eq. 9 for the records from ``start`` on, summed, for several models.

        ``models`` are antecedent sets and ``xts`` the test rows they were scored for (only
        the indicator coding reads them). Records are taken one at a time, models together.
        """
        chosen = _antecedent_mask(models, self.p)
        if coding == "full":  # same configuration = same values (or both missing) on A
            size = chosen.sum(axis=1)[:, None]
        else:
            configs = np.array([self.configurations(A, coding, xt) for A, xt in zip(models, xts)])
        total = np.zeros(len(models))
        block = max(1, _MATCH_CELLS // max(self.n, 1))  # models per pass: bounded memory
        for lo in range(0, len(models), block):
            part = slice(lo, lo + block)
            for t in range(start, self.n):
                if coding == "full":
                    match = chosen[part] @ (self.X[:t] == self.X[t]).T == size[part]
                else:
                    match = configs[part, :t] == configs[part, t : t + 1]
                total[part] += self._record_terms(t, match.astype(float), chosen[part])
        return total

    def _record_terms(self, t: int, match: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """``log P(z_t | x_t, records before t, M)`` (eq. 9-10) for several models at once.

        ``match[m, s]`` is 1 where earlier record ``s`` is in record ``t``'s parent configuration
        under model ``m``; ``chosen[m, j]`` is 1 for the antecedent features of model ``m``.
        """
        K, alpha = self.K, self.alpha
        Y = self.onehot[:t]
        n_k = match @ Y  # N_{c,k}
        logq = np.log(n_k + alpha) - np.log(n_k.sum(axis=1, keepdims=True) + K * alpha)
        kids = self.informative[self.X[t, self.informative] >= 0]  # missing children skipped
        if kids.size:
            rows, width = self.X[:t, kids], kids.size
            equal = (rows == self.X[t, kids]).astype(float)
            shape = (len(match), K, width)
            n_x = (match @ (Y[:, :, None] * equal[:, None, :]).reshape(t, K * width)).reshape(shape)
            if self.has_missing[kids].any():
                observed = (rows >= 0).astype(float)
                n_o = (match @ (Y[:, :, None] * observed[:, None, :]).reshape(t, K * width))
                n_o = n_o.reshape(shape)
            else:
                n_o = n_k[:, :, None]
            terms = np.log(n_x + alpha) - np.log(n_o + self.r[kids] * alpha)
            terms *= 1.0 - chosen[:, None, kids]  # antecedent features are parents, not children
            logq += terms.sum(axis=2)
        top = logq.max(axis=1)
        return logq[:, self.y[t]] - (top + np.log(np.exp(logq - top[:, None]).sum(axis=1)))

    def _children_terms(self, children, c, n_configs, prior) -> np.ndarray:
        """Sum over the children of log P(x_i | z, parents), ``(K, n)`` (eq. 10)."""
        n, K = self.n, self.K
        values = self.X[:, children].T.reshape(-1)  # child-major: element e = (child, record)
        seen = np.flatnonzero(values >= 0)  # missing children are skipped
        values = values[seen]
        record, child = seen % n, seen // n
        group = child * n_configs + c[record]
        key = group * (int(self.r.max(initial=0)) + 1) + values
        order = np.argsort(key, kind="stable")
        rec = record[order]
        # Numerators: earlier records with the same configuration, child value and class.
        terms = self.log_num[_grouped_prefix(key[order], self.y[rec], K)]
        out = np.empty((K, n))
        for k in range(K):
            out[k] = np.bincount(rec, weights=terms[k], minlength=n)
        # Denominators: earlier records with the configuration and class and x_i observed. For
        # a child never missing that count is the class term's N_{c,k}, for every record.
        r = self.r[children]
        incomplete = self.has_missing[children]
        for size in np.unique(r[~incomplete]):
            out -= np.count_nonzero(r[~incomplete] == size) * self.log_den[size][prior]
        if incomplete.any():
            pick = np.flatnonzero(incomplete[child])
            grp = group[pick]
            order = np.argsort(grp, kind="stable")
            rec = record[pick][order]
            totals = _grouped_prefix(grp[order], self.y[rec], K)
            terms = self.log_den[r[child[pick][order]][None, :], totals]
            for k in range(K):
                out[k] -= np.bincount(rec, weights=terms[k], minlength=n)
        return out

    # ------------------------------------------------------ predictions

    def predictor(self, xt: np.ndarray):
        """``predict(models) -> (len(models), K)`` class distributions of the models M(A) for
        the test row ``xt`` (compact codes), all models at once."""
        obs = np.flatnonzero(xt >= 0)
        n, K, width = self.n, self.K, obs.size
        equal = (self.X[:, obs] == xt[obs]).astype(float)  # (n, |obs|)
        # Per record, class indicator times "child i equals the test value" (or "is observed").
        class_equal = (self.onehot[:, :, None] * equal[:, None, :]).reshape(n, K * width)
        incomplete = bool(self.has_missing[obs].any())
        if incomplete:
            observed = self.observed[:, obs].astype(float)
            class_observed = (self.onehot[:, :, None] * observed[:, None, :]).reshape(n, K * width)
        column = np.full(self.p, -1, dtype=np.int64)
        column[obs] = np.arange(width)
        r_alpha = self.r[obs][None, None, :] * self.alpha
        alpha = self.alpha

        def predict(models) -> np.ndarray:
            chosen = _antecedent_mask(models, width, column)
            # A record is in the test instance's configuration when it matches every antecedent.
            match = (chosen @ equal.T == chosen.sum(axis=1)[:, None]).astype(float)
            n_k = match @ self.onehot  # N_{a,k}
            shape = (len(models), K, width)
            n_x = (match @ class_equal).reshape(shape)  # N_{a,k,i,x_i}
            if incomplete:
                n_o = (match @ class_observed).reshape(shape)  # N_{a,k,i}
            else:
                n_o = n_k[:, :, None]
            terms = np.log(n_x + alpha) - np.log(n_o + r_alpha)  # eq. 10, children
            terms *= 1.0 - chosen[:, None, :]  # antecedent features are parents, not children
            logp = np.log(n_k + alpha) + terms.sum(axis=2)  # eq. 10, class given A
            logp -= logp.max(axis=1, keepdims=True)
            p = np.exp(logp)
            return p / p.sum(axis=1, keepdims=True)

        return predict
