"""The ISA classifier: River's interface, the caches of scores and of phase 1, ``explain_one``."""

from __future__ import annotations

import numpy as np

from ..batch import BatchClassifier, Encoded
from ..params import check_bool, check_choice, check_int, check_real
from .scorer import Scorer
from .search import phase_one, phase_two

__all__ = ["ISA"]

_CODINGS = ("full", "indicator")
#: Cached scores are extended record by record when at most this many records were appended
#: since they were computed; after more, scoring afresh (one sort per model) is cheaper.
_MAX_EXTENSION = 32


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
    >>> from onlinebma.isa import ISA
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

    def _prepared(self, data: Encoded) -> Scorer:
        if data is not self._cached_for:
            self._cached_for = data
            old, recs = self._records, Scorer(data, float(self.alpha))
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
    def _test_row(recs: Scorer, key) -> np.ndarray:
        """A test row with the antecedent values of an indicator-coded score's cache key."""
        A, values = key
        xt = np.full(recs.p, -1, dtype=np.int64)
        xt[list(A)] = values
        return xt

    def _score(self, recs: Scorer, A: tuple, xt: np.ndarray) -> float:
        """Log score of M(A), cached (with the indicator coding, per antecedent values)."""
        key = A if self.antecedent == "full" else (A, tuple(int(xt[j]) for j in A))
        if key not in self._scores:
            self._scores[key] = recs.log_score(A, self.antecedent, xt)
        return self._scores[key]

    # --------------------------------------------------------------- search

    def _search(self, recs: Scorer, xt: np.ndarray):
        """R as ``[(log score, A)]`` and the models' predictions, for one test row."""
        observed = tuple(int(j) for j in np.flatnonzero(xt >= 0))

        def score(A):
            return self._score(recs, A, xt)

        if self.antecedent == "full" and observed in self._phase1:
            R, queue, seen = self._phase1[observed]
            R, queue, seen = list(R), list(queue), set(seen)
        else:
            R, queue, seen = phase_one(score, observed, self.phase1_models, self.max_models)
            if self.antecedent == "full":  # phase 1 depends on the observed features only
                self._phase1[observed] = (tuple(R), tuple(queue), frozenset(seen))
        return phase_two(R, queue, seen, score, recs.predictor(xt), observed,
                         float(self.threshold), self.max_models, self.phase2_expand, recs.K)

    # ----------------------------------------------------------- prediction

    def _models(self, recs: Scorer, xt: np.ndarray):
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
        from ..preprocessing import interval_labels

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
            where = np.searchsorted(cuts, float(x[names[j]]), side="left")
            return interval_labels(cuts)[int(where)]

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
