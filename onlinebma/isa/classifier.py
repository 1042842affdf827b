"""The ISA classifier: River's interface, the caches of scores and of phase 1, ``explain_one``."""

from __future__ import annotations

import math

import numpy as np

from ..batch import BufferRefitClassifier
from ..table import Table
from ..validation import check_bool, check_choice, check_int, check_real
from .cache import ScoreCache
from .scorer import Scorer
from .search import phase_one, phase_two

__all__ = ["ISA"]

_CODINGS = ("full", "indicator")


class ISA(BufferRefitClassifier):
    """Lazy instance-specific Bayesian model averaging (Visweswaran & Cooper 2004).

    Parameters
    ----------
    antecedent : str, default 'full'
        ``"full"``: the antecedent features' joint values are the parent configuration (the
        paper's Bayesian networks). ``"indicator"``: each antecedent feature is coded as equal
        to the test instance's value or not (LBR's rules); slower, as scores then depend on the
        test values and are cached per antecedent values only.
    alpha : float, default 1.0
        Dirichlet pseudo-count of every cell in eq. 10.
    phase1_models : int, default 100
        Models moved into ``R`` by the best-first phase.
    threshold : float, default 0.001
        Phase 2 stops when no queued model changes the averaged prediction by more than this.
    max_models : int, default 500
        Upper limit on ``|R|``.
    average : bool, default True
        ``False``: predict with the single highest-scoring model in ``R`` (model selection).
    phase2_expand : bool, default False
        Phase 2 also scores and queues the children of the models it adds (the paper is silent;
        off by default).
    margin : float or None, default 40.0
        Models whose log score is more than ``margin`` below the best model's in ``R`` (so whose
        weight is below ``exp(-margin)`` times the best's) are negligible: counted in ``R`` but
        not brought up to date as records arrive, not expanded, left out of the average. The
        prediction then differs from the average over all of ``R`` by at most ``|R| *
        exp(-margin)`` per class probability (see `onlinebma.isa.search`). ``None``: no
        model is negligible (the paper's search exactly).
    window : int or None, default None
        Score and predict from the last ``window`` records (``None``: all), by the sliding
        eq. 9: each record's term is predicted from the ``window`` records before it, so the
        store holds the last ``2 window`` records and a record that arrives or leaves adds or
        takes away one term per cached score (see `onlinebma.isa`).
    refit_every : int or None, default None
        Refit the cut points of numeric features after this many new records (``None``: once
        the stored records have grown by 10%; see `onlinebma.batch`).
    nominal_attributes : list or None, default None
        Features that are nominal even when their values are numbers.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

    Examples
    --------
    >>> from river import evaluate, metrics
    >>> from onlinebma.datasets import UCIDataset
    >>> from onlinebma.isa import ISA
    >>> model = ISA()
    >>> for x, y in UCIDataset("house-votes-84").take(200):
    ...     model.learn_one(x, y)
    >>> x, y = next(iter(UCIDataset("house-votes-84")))  # y is True: a Republican
    >>> y, round(model.predict_proba_one(x)[y], 2)
    (True, 1.0)
    >>> [best] = model.explain_one(x, top=1)
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
        margin: float | None = 40.0,
        window: int | None = None,
        refit_every: int | None = None,
        nominal_attributes: list | None = None,
        numeric_attributes: list | None = None,
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
        if margin is not None:
            check_real("margin", margin, 0.0, strict=True)
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes,
                         numeric_attributes=numeric_attributes)
        self.antecedent = antecedent
        self.alpha = alpha
        self.phase1_models = phase1_models
        self.threshold = threshold
        self.max_models = max_models
        self.average = average
        self.phase2_expand = phase2_expand
        self.margin = margin

    def _stored_window(self) -> int | None:
        # the window's records and the contexts of their terms
        return None if self.window is None else 2 * self.window

    def _reset_model(self):
        self._cached_for = None  # the table the caches below belong to
        self._scorer: Scorer | None = None
        self._cache: ScoreCache | None = None
        self._scorer_state = None  # (records learned, cut points) when the scorer was last fed
        self._phase1: dict = {}

    @classmethod
    def _unit_test_params(cls):
        # River's checks run hundreds of learn/predict steps on 9-18 numeric features, and every
        # step changes the buffer (new cut points, no cached scores): a two-model search (naive
        # Bayes, its children scored, the best one joins R) keeps them to seconds. The default
        # search is exercised against the brute force in tests/test_isa.py.
        yield {"phase1_models": 2, "max_models": 2}

    # --------------------------------------------------------------- caches

    def _prepared(self, data: Table) -> Scorer:
        """The scorer of the adapter's table ``data``; when ``data`` is the scorer's records
        less the oldest (they left the window) plus new ones in the same coding, the scorer
        slides (O(p) per record) and the cached scores are kept (brought up to date when the
        search asks for them). Otherwise — a value, class or feature appeared or left, cut
        points moved — the scorer is rebuilt and the scores dropped (the last resort: every
        record's terms of eq. 9 changed)."""
        if data is self._cached_for:
            return self._scorer
        self._cached_for = data
        self._phase1 = {}
        old, state = self._scorer, (self._n_learned, data.cuts)
        slides = (
            old is not None
            and len(data.cuts) == len(self._scorer_state[1])
            and all(np.array_equal(a, b) for a, b in zip(data.cuts, self._scorer_state[1]))
        )
        appended = self._n_learned - self._scorer_state[0] if slides else 0
        if not (slides and old.slide(data, old.held + appended - data.n)):
            self._scorer = Scorer(data, float(self.alpha), self.window)
            self._cache = ScoreCache(self._scorer, self.antecedent, self.window is not None)
        self._scorer_state = state
        return self._scorer

    @property
    def nbytes_(self) -> int:
        """Bytes held by the stored records in ISA's coding, their bitset index and the cached
        scores (0 before the first prediction)."""
        if self._scorer is None:
            return 0
        return self._scorer.nbytes + self._cache.nbytes

    # --------------------------------------------------------------- search

    def _search(self, scorer: Scorer, xt: np.ndarray):
        """For one test row: R as ``[(log score or bound, A)]``, the models averaged (R less
        the negligible models, plus phase 2's) with exact scores, their predictions, and the
        scores as the search saw them."""
        observed = tuple(int(j) for j in np.flatnonzero(xt >= 0))
        scores = self._cache.for_instance(xt)
        margin = math.inf if self.margin is None else float(self.margin)
        if self.antecedent == "full" and observed in self._phase1:
            R, queue, seen = self._phase1[observed]
        else:
            R, queue, seen = phase_one(scores, observed, self.phase1_models, self.max_models,
                                       margin)
            if self.antecedent == "full":  # phase 1 depends on the observed features only
                self._phase1[observed] = (R, queue, seen)
        best = max(s for s, _ in R)
        near = [(s, A) for s, A in R if s >= best - margin]
        averaged, preds = phase_two(near, list(queue), set(seen), scores, observed,
                                    float(self.threshold), self.max_models - len(R),
                                    self.phase2_expand, scorer.K)
        return R, averaged, preds, scores

    # ----------------------------------------------------------- prediction

    def _proba(self, scorer: Scorer, xt: np.ndarray) -> np.ndarray:
        """ISA's prediction for one test row: eq. 8 over the models averaged, or the best
        model's (``average=False``); a distribution over the classes present."""
        _, averaged, preds, _ = self._search(scorer, xt)
        logs = np.array([s for s, _ in averaged])
        if not self.average:
            return preds[int(np.argmax(logs))]
        proba = np.exp(logs - np.logaddexp.reduce(logs)) @ preds  # eq. 8
        return proba / proba.sum()

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:
        scorer = self._prepared(data)
        codes = rows.codes.astype(np.int64)  # -1: missing, or a value absent from the records
        return np.array([self._proba(scorer, xt) for xt in codes]).reshape(rows.n, scorer.K)

    def _expand_classes(self, table: Table, proba: np.ndarray) -> np.ndarray:
        """The adapter's share for a known class absent from the stored records, counted over
        the window (the last ``window`` records, those the models predict from), not over the
        ``2 window`` stored: a class that left the window gets ``(0 + 1) / (window + K)``, as in
        every batch learner with a window (docs/isa.md)."""
        return self.coding.expand_classes(table.classes, proba, last=self.window)

    def explain_one(self, x: dict, top: int | None = None) -> list[dict]:
        """The models ISA averaged for ``x``, most weighty first (the ``top`` weightiest only,
        when given: a search keeps about a hundred).

        Each is ``{"antecedent": {feature: value}, "weight", "log_score", "proba"}``: the
        antecedent features with the test instance's values (numeric ones as the interval of
        the discretization), the model's normalised weight in eq. 8 (among all the models, also
        with ``top``), its log score (eq. 9) and its own class distribution. Empty before any
        learning.
        """
        if top is not None:
            check_int("top", top, 1)
        if not self.coding.n_stored:
            return []
        data = self._training_data()
        recs = self._prepared(data)
        xt = self._encode_one(x).codes[0].astype(np.int64)
        # Every model of R, the negligible ones too, with its exact score and prediction.
        R, averaged, _, scores = self._search(recs, xt)
        in_R = {A for _, A in R}
        antecedents = [A for _, A in R] + [A for _, A in averaged if A not in in_R]
        logs = np.array(scores.refresh(antecedents))
        weights = np.exp(logs - np.logaddexp.reduce(logs))
        preds = scores.predict(antecedents)
        names, values = data.nominal_features, data.values  # values: interval names for numbers
        out = [
            {
                "antecedent": {names[j]: values[j][xt[j]] for j in A},
                "weight": float(w),
                "log_score": float(s),
                "proba": {label: float(q) for label, q in zip(data.classes, p)},
            }
            for A, s, w, p in zip(antecedents, logs, weights, preds)
        ]
        out.sort(key=lambda m: -m["weight"])
        return out if top is None else out[:top]
