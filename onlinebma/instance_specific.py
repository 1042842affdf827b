"""ISA: lazy instance-specific Bayesian model averaging (Visweswaran & Cooper 2004).

For every instance to classify, ISA searches a space of small Bayesian networks built around
that instance and averages their predictions, weighted by how well each network predicted the
class of the stored records. The networks are those of the lazy Bayesian rule (LBR) learner:
model ``M(A)`` takes an *antecedent* set ``A`` of features observed in the test instance; the
class ``Z`` has parents ``A`` and every other feature has parents ``{Z} ∪ A`` — a naive Bayes
classifier local to the records that share the test instance's values of ``A``.

The method, fixed by the project's issue so that results are comparable:

- **Parent coding.** ``antecedent="full"`` (default) uses the joint values of ``A`` as the
  parent configuration (the Bayesian-network semantics of the paper). ``"indicator"`` codes
  each antecedent feature as "equals the test instance's value or not" (LBR's semantics). In
  both, a stored record whose antecedent value is missing is in a configuration of its own.
- **Score** (eq. 9): the conditional prequential score, the product over the stored records,
  in arrival order, of the probability of each record's class given its features and the
  records before it, with the parameters of eq. 10 (Dirichlet pseudo-counts ``alpha``). The
  number of values ``r_i`` of a feature and the number of classes are those present in the
  stored records. Missing children are skipped.
- **Search** (§3.4): phase 1 is best-first by score from ``A = ∅`` (naive Bayes); expanding a
  model adds one observed feature to ``A``; duplicates are merged; it stops when ``R`` holds
  ``phase1_models`` models. Phase 2 moves into ``R`` the queued model that changes the
  averaged prediction ``g(R)`` (eq. 12) the most (eq. 11) while the change exceeds
  ``threshold`` and ``|R| < max_models``. The prediction is eq. 8.

Where the paper is silent (see also ``docs/isa.md``):

- A test feature whose value is missing, or whose value does not occur in the stored records,
  is never an antecedent; it stays a child in every model (its factors count in the score) and
  is skipped in the prediction.
- Phase 2 does not expand the models it moves into ``R``: it draws only from the queue left by
  phase 1. §3.4 says phase 1 generates children after each move and is silent about it in
  phase 2, and expanding would roughly double the models to score. ``phase2_expand=True``
  also scores and queues the children of every model phase 2 adds.
- With several classes, the change of eq. 11 is the largest absolute change of any class
  probability (for two classes, the change of either class's probability).
- Ties in score are broken by the antecedent sets' features, taken in the order of the
  features' names, so that the order in which features arrive does not matter.
- ``average=False`` (model selection, the paper's ablation) runs the same search and predicts
  with the highest-scoring model in ``R``.

Speed. The scores are computed for all stored records at once (grouped cumulative counts of
the class per parent configuration, child value and class), and with ``antecedent="full"`` the
score of ``M(A)`` depends on which features are in ``A`` only, so scores — and the whole of
phase 1, which depends on nothing else but the set of observed features — are cached across
test instances. When records are only appended, cached scores are extended by the new records'
terms of eq. 9; any other change of the stored records (window eviction, new values or
classes, moved cut points) recomputes them. Phase 2 needs the prediction of a queued model only
while the bound ``|g(R ∪ {M}) - g(R)| <= s_M / (W + s_M)`` (``s_M`` its score, ``W`` the total
score of ``R``) exceeds the threshold, so most queued models are never evaluated; the
predictions of many models come from a few matrix products (limit numpy's BLAS to one thread
on a busy machine: see ``docs/isa.md``).

Numeric features are discretized by Fayyad & Irani's MDL rule fitted on the stored records
(the adapter does it; see :mod:`onlinebma.batch`). The cut points are refitted by the adapter's
refit policy (``refit_every``), so that on a stream the records between refits keep their codes
and the cached scores are extended instead of recomputed; ``refit_every=1`` refits them before
every prediction that follows new records.

Eq. 9 depends on the order of the stored records (the paper says so). Records sorted by class,
as some UCI files are, favour models that put early records in configurations of their own; a
batch user should shuffle such data before ``fit`` (the paper's Weka cross-validation shuffled
every training fold).

References
----------
Visweswaran, S. and Cooper, G. F. (2004). Instance-specific Bayesian model averaging for
classification. *Advances in Neural Information Processing Systems 17*.
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from .batch import Table as Encoded
from .batch import _ZeroForAbsentClasses as BatchClassifier
from .validation import check_bool, check_choice, check_int, check_real

__all__ = ["ISA"]

_CODINGS = ("full", "indicator")
#: Cached scores are extended record by record when at most this many records were appended
#: since they were computed; after more, scoring afresh (one sort per model) is cheaper.
_MAX_EXTENSION = 32
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


class _Records:
    """The stored records re-coded for ISA: values and classes present in them only."""

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

    def extends(self, old: _Records) -> bool:
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
        O = np.flatnonzero(xt >= 0)
        n, K, width = self.n, self.K, O.size
        equal = (self.X[:, O] == xt[O]).astype(float)  # (n, |O|)
        # Per record, class indicator times "child i equals the test value" (or "is observed").
        class_equal = (self.onehot[:, :, None] * equal[:, None, :]).reshape(n, K * width)
        incomplete = bool(self.has_missing[O].any())
        if incomplete:
            observed = self.observed[:, O].astype(float)
            class_observed = (self.onehot[:, :, None] * observed[:, None, :]).reshape(n, K * width)
        column = np.full(self.p, -1, dtype=np.int64)
        column[O] = np.arange(width)
        r_alpha = self.r[O][None, None, :] * self.alpha
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


def _weight_of_new(log_total: float, log_score: float) -> float:
    """``s / (W + s)`` from logs: the weight a model would get on joining ``R``."""
    d = log_total - log_score
    return 0.0 if d > 700.0 else 1.0 / (1.0 + math.exp(d))


class ISA(BatchClassifier):
    """Lazy instance-specific Bayesian model averaging (Visweswaran & Cooper 2004).

    Parameters
    ----------
    antecedent
        ``"full"``: the antecedent features' joint values are the parent configuration (the
        paper's Bayesian networks). ``"indicator"``: each antecedent feature is coded as equal
        to the test instance's value or not (LBR's rules); slower, as scores then depend on the
        test values and are cached per antecedent values only.
    alpha
        Dirichlet pseudo-count of every cell in eq. 10.
    phase1_models
        Models moved into ``R`` by the best-first phase.
    threshold
        Phase 2 stops when no queued model changes the averaged prediction by more than this.
    max_models
        Upper limit on ``|R|``.
    average
        ``False``: predict with the single highest-scoring model in ``R`` (model selection).
    phase2_expand
        Phase 2 also scores and queues the children of the models it adds (the paper is silent;
        off by default).
    window
        Keep only the last ``window`` records (``None``: all).
    refit_every
        Refit the cut points of numeric features after this many new records (``None``: once
        the stored records have grown by 10%; see :mod:`onlinebma.batch`).
    nominal_attributes
        Features that are nominal even when their values are numbers.

    Examples
    --------
    >>> from river import evaluate, metrics
    >>> from onlinebma.datasets import UCIDataset
    >>> from onlinebma.instance_specific import ISA
    >>> model = ISA()
    >>> for x, y in UCIDataset("house-votes-84").take(200):
    ...     model.learn_one(x, y)
    >>> x, y = next(iter(UCIDataset("house-votes-84")))
    >>> y, round(model.predict_proba_one(x)[y], 2)
    ('republican', 1.0)
    >>> best = model.explain_one(x)[0]
    >>> sorted(best)
    ['antecedent', 'log_score', 'proba', 'weight']
    """

    _lazy = True
    _discrete = True

    def __init__(
        self,
        antecedent: str = "full",
        alpha: float = 1.0,
        phase1_models: int = 100,
        threshold: float = 0.001,
        max_models: int = 500,
        average: bool = True,
        phase2_expand: bool = False,
        window: int | None = None,
        refit_every: int | None = None,
        nominal_attributes: list | None = None,
    ):
        check_choice("antecedent", antecedent, _CODINGS)
        check_real("alpha", alpha, 0.0, strict=True)
        check_int("phase1_models", phase1_models, 1)
        check_int("max_models", max_models, 1)
        if max_models < phase1_models:
            raise ValueError(
                f"max_models ({max_models}) must be at least phase1_models ({phase1_models})"
            )
        check_real("threshold", threshold, 0.0, strict=False)
        check_bool("average", average)
        check_bool("phase2_expand", phase2_expand)
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes)
        self.antecedent = antecedent
        self.alpha = alpha
        self.phase1_models = phase1_models
        self.threshold = threshold
        self.max_models = max_models
        self.average = average
        self.phase2_expand = phase2_expand

    def _reset(self):
        super()._reset()
        self._cached_for = None  # the Encoded data the caches below belong to
        self._records = None
        self._scores: dict = {}
        self._phase1: dict = {}

    @classmethod
    def _unit_test_params(cls):
        # River's checks run hundreds of learn/predict steps on 9-18 numeric features, and every
        # step changes the buffer (new cut points, no cached scores): a two-model search (naive
        # Bayes, its children scored, the best one joins R) keeps them to seconds. The default
        # search is exercised against the brute force in tests/test_isa.py.
        yield {"phase1_models": 2, "max_models": 2}

    # --------------------------------------------------------------- caches

    def _prepared(self, data: Encoded) -> _Records:
        if data is not self._cached_for:
            self._cached_for = data
            old, recs = self._records, _Records(data, float(self.alpha))
            self._records = recs
            self._phase1 = {}
            if old is None or recs.n - old.n > _MAX_EXTENSION or not recs.extends(old):
                # Records left, values or classes changed, or many records arrived: start afresh.
                self._scores = {}
            elif self._scores and recs.n > old.n:
                # Records were only appended: eq. 9 is a sum over records in arrival order, so
                # every cached score is extended by the new records' terms.
                keys = list(self._scores)
                if self.antecedent == "full":
                    models, xts = keys, None
                else:
                    models, xts = [A for A, _ in keys], [self._test_row(recs, k) for k in keys]
                tails = recs.log_score_tails(models, self.antecedent, xts, old.n)
                self._scores = {key: self._scores[key] + float(t) for key, t in zip(keys, tails)}
        return self._records

    @staticmethod
    def _test_row(recs: _Records, key) -> np.ndarray:
        """A test row with the antecedent values of an indicator-coded score's cache key."""
        A, values = key
        xt = np.full(recs.p, -1, dtype=np.int64)
        xt[list(A)] = values
        return xt

    def _score(self, recs: _Records, A: tuple, xt: np.ndarray) -> float:
        """Log score of M(A), cached (with the indicator coding, per antecedent values)."""
        key = A if self.antecedent == "full" else (A, tuple(int(xt[j]) for j in A))
        if key not in self._scores:
            self._scores[key] = recs.log_score(A, self.antecedent, xt)
        return self._scores[key]

    # --------------------------------------------------------------- search

    def _expand(self, recs, A, observed, xt, seen, push):
        for j in observed:
            if j in A:
                continue
            child = tuple(sorted(A + (j,)))
            if child not in seen:
                seen.add(child)
                push((-self._score(recs, child, xt), child))

    def _phase_one(self, recs: _Records, observed: tuple, xt: np.ndarray):
        """Best-first search by score from naive Bayes (§3.4, first phase)."""
        if self.antecedent == "full" and observed in self._phase1:
            R, queue, seen = self._phase1[observed]
            return list(R), list(queue), set(seen)
        queue = [(-self._score(recs, (), xt), ())]
        seen = {()}
        R = []
        while queue and len(R) < self.phase1_models:
            neg, A = heapq.heappop(queue)
            R.append((-neg, A))
            if len(R) == self.max_models:
                break  # nothing more can join R: the children would never be used
            self._expand(recs, A, observed, xt, seen, lambda item: heapq.heappush(queue, item))
        queue.sort()  # best score first
        if self.antecedent == "full":
            self._phase1[observed] = (tuple(R), tuple(queue), frozenset(seen))
        return R, queue, seen

    def _search(self, recs: _Records, xt: np.ndarray):
        """R as ``[(log score, A)]`` and the models' predictions, for one test row."""
        observed = tuple(int(j) for j in np.flatnonzero(xt >= 0))
        R, queue, seen = self._phase_one(recs, observed, xt)
        predict = recs.predictor(xt)
        preds = predict([A for _, A in R])
        logs = np.array([s for s, _ in R])
        log_total = float(np.logaddexp.reduce(logs))
        g = np.exp(logs - log_total) @ preds  # eq. 12
        # Second phase (eq. 11): f(R, M) = s_M / (W + s_M) * max_k |P_M(k) - g(R)(k)|, which is
        # at most s_M / (W + s_M); W only grows, so a queued model whose bound is already below
        # the threshold can never be chosen, and only the others need a prediction.
        threshold = float(self.threshold)
        added = []
        cand, cand_logs, cand_preds = [], np.empty(0), np.empty((0, recs.K))
        scanned = 0
        while len(R) + len(added) < self.max_models:
            # Bring in the queued models that could still pass (the queue is sorted by score).
            take = scanned
            while take < len(queue) and _weight_of_new(log_total, -queue[take][0]) > threshold:
                take += 1
            if take > scanned:
                new = queue[scanned:take]
                cand += [A for _, A in new]
                cand_logs = np.append(cand_logs, [-neg for neg, _ in new])
                cand_preds = np.vstack([cand_preds, predict([A for _, A in new])])
                scanned = take
            if not cand:
                break
            weight = 1.0 / (1.0 + np.exp(np.minimum(log_total - cand_logs, 700.0)))
            f = weight * np.abs(cand_preds - g).max(axis=1)
            best = int(np.argmax(f))
            if not f[best] > threshold:
                break
            w, A, p = weight[best], cand.pop(best), cand_preds[best]
            g = (1.0 - w) * g + w * p
            log_total = float(np.logaddexp(log_total, cand_logs[best]))
            added.append((float(cand_logs[best]), A, p))
            cand_logs = np.delete(cand_logs, best)
            cand_preds = np.delete(cand_preds, best, axis=0)
            if self.phase2_expand:
                children = []
                self._expand(recs, A, observed, xt, seen, children.append)
                children.sort()
                queue = queue[:scanned] + list(heapq.merge(queue[scanned:], children))
        if added:
            R = R + [(s, A) for s, A, _ in added]
            preds = np.vstack([preds, [p for _, _, p in added]])
        return R, preds

    # ----------------------------------------------------------- prediction

    def _models(self, recs: _Records, xt: np.ndarray):
        """The models in R for one test row: antecedent sets, log scores, weights (eq. 8) and
        their predictions, and ISA's prediction (the weighted average, or the best model's)."""
        R, preds = self._search(recs, xt)
        logs = np.array([s for s, _ in R])
        weights = np.exp(logs - np.logaddexp.reduce(logs))
        proba = weights @ preds if self.average else preds[int(np.argmax(logs))]  # eq. 8
        return [A for _, A in R], logs, weights, preds, proba

    def _predict_proba(self, data: Encoded, rows: Encoded) -> np.ndarray:
        recs = self._prepared(data)
        out = np.zeros((rows.n, len(data.classes)))
        for i in range(rows.n):
            out[i, recs.class_index] = self._models(recs, recs.test_codes(rows.codes[i]))[-1]
        return out

    def explain_one(self, x: dict) -> list[dict]:
        """The models ISA averaged for ``x``, most weighty first.

        Each is ``{"antecedent": {feature: value}, "weight", "log_score", "proba"}``: the
        antecedent features with the test instance's values (numeric ones as the interval of
        the discretization), the model's normalised weight in eq. 8, its log score (eq. 9) and
        its own class distribution. Empty before any learning.
        """
        if self._store.end == self._store.start:
            return []
        from .preprocessing import interval_labels

        data = self._training_data()
        recs = self._prepared(data)
        xt = recs.test_codes(self._encode_one(x).codes[0])
        antecedents, logs, weights, preds, _ = self._models(recs, xt)
        names = data.nominal_features
        n_nominal = len(names) - len(self._cuts)

        def value(j):
            if j < n_nominal:
                return x[names[j]]
            cuts = self._cuts[j - n_nominal]
            return interval_labels(cuts)[int(np.searchsorted(cuts, float(x[names[j]]), side="left"))]

        labels = [data.classes[k] for k in recs.class_index]
        out = [
            {
                "antecedent": {names[j]: value(j) for j in recs.columns[list(A)]},
                "weight": float(w),
                "log_score": float(s),
                "proba": {label: float(q) for label, q in zip(labels, p)},
            }
            for A, s, w, p in zip(antecedents, logs, weights, preds)
        ]
        out.sort(key=lambda m: -m["weight"])
        return out
