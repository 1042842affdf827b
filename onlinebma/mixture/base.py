"""What FAN and the finite-mixture classifier share: parameters, model choice, prediction.

A subclass only says whether the class is a parent of the features (FAN) or a child of the
hidden variable (FM); everything else — encoding, EM starts, warm starts, the choice or average
over the number of components, the progress display, the fitted attributes — is here.

Every fit runs EM for every K in ``1..max_components``:

- a K fitted before starts from that fit (warm start); besides, random restarts (the K chosen
  in turn) run for ``_RESTART_STEPS`` M steps in all per refit; one unfinished is continued at
  the next refit, and a finished one replaces its K's fit if its objective is higher: a stream
  does not stay in the basin its first, small fit fell into, and no refit pays for many cold
  EM runs on many records;
- a K not fitted before starts from a split of the fit with ``K - 1`` components, plus
  ``n_init - 1`` starts from random records.

The run with the highest EM objective is kept. The paper's criteria then select one K; the
default ``criterion="prequential"`` averages the candidates by their prequential evidence
(:mod:`onlinebma.mixture.averaging`).
"""

from __future__ import annotations

import numpy as np

from ..batch import BufferRefitClassifier, Table
from ..progress import progress as progress_bar
from ..reading import uninterrupted
from ..stats.logmath import logsumexp_np
from ..stats.numerics import VAR_SMOOTHING, single_blas_thread
from ..validation import check_choice, check_int, check_real
from .arrays import EMResult, Params
from .averaging import Evidence
from .criteria import CRITERIA, scores_many
from .distributed_em import EMPlan
from .em import EMEngine, one_component, run_em, run_em_many
from .engine import Engine
from .fitted import NotFittedError, SelectedMixture
from .layout import design as _design
from .layout import row_key as _row_key
from .layout import rows_of as _slice
from .starts import seeded_params

__all__ = ["MixtureClassifier", "PARAMETERS_DOC"]

#: M steps of random restarts per refit (bounds the refit's cost).
_RESTART_STEPS = 20

#: EM runs whose final objectives differ by less than this (relative) are ties, and the first
#: run is kept: sums over partitions (:mod:`onlinebma.mixture.distributed_em`) round
#: differently from sums over one array, and must not pick another of two runs that reached
#: the same optimum.
_TIE = 1e-12

#: Candidates whose weight is below this are left out of a prediction (changes every
#: probability by less than ``max_components * _NEGLIGIBLE``).
_NEGLIGIBLE = 1e-12

PARAMETERS_DOC = """max_components : int, default 5
        Largest number of components tried: every K in 1..max_components is fitted. ``1``
        means exactly one component (naive Bayes for FAN).
    criterion : str, default 'prequential'
        ``"prequential"`` (default): predictions average the fits of every K, weighted by
        ``prior(K) exp(-L_K)`` where ``L_K`` is the log loss of K's fits on the records that
        arrived after them, half the prior on K = 1 (see :mod:`onlinebma.mixture.averaging`);
        ``fit(X, y)`` and a stream's first fit score the fits of the first half of the records
        on the second half.
        ``"icl"`` (the paper's best), ``"bic"``, ``"aic"`` or ``"cs"`` (Cheeseman–Stutz)
        select the one K with the best score instead; see :mod:`onlinebma.mixture.criteria`.
    em : str, default 'soft'
        ``"soft"``: EM with expected counts (eq. 8); ``"hard"``: classification EM (eq. 9).
    n_init : int, default 3
        EM starts per K > 1 at its first fit: a split of the K - 1 fit and ``n_init - 1``
        starts from K distinct random records; the run with the highest objective is kept.
        Refits start from the previous fit of the same K (warm start); one random restart
        at a time, continued over refits, may replace a K's fit (module docstring).
    tol : float, default 1e-06
        EM stops when the objective gains less than ``tol`` times its magnitude.
    max_iter : int, default 200
        At most this many M steps per run.
    alpha : float, default 1.0
        Dirichlet pseudo-count of every multinomial (eq. 5), as in ``NaiveBayes``.
    variance_guard : float, default 0.01
        Every component's variance of a numeric feature is at least ``variance_guard`` times
        the one-component variance of that feature (the guard against collapsing variances;
        ``0`` turns it off). It never binds for one component.
    seed : int or None, default None
        Seed of the numpy generator that picks the random starts (``None``: fresh entropy).
        With a seed, the same records learned in the same way give the same model.
    progress : bool, default False
        Show a progress bar over the numbers of components of every fit.
    window : int or None, default None
        Keep only the last ``window`` records (``None``: all).
    refit_every : int or None, default None
        Refit after this many new records (checked when a prediction is asked for);
        ``None`` refits once the store has grown by 10%.
    nominal_attributes : list or None, default None
        Features to treat as nominal even when their values are numbers.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category."""


class MixtureClassifier(BufferRefitClassifier):
    """Base of :class:`~onlinebma.mixture.FAN` and :class:`~onlinebma.mixture.FiniteMixture`."""

    _class_parent: bool = True  # FAN: features depend on (class, component); FM: on the component

    def __init__(
        self,
        max_components: int = 5,
        criterion: str = "prequential",
        em: str = "soft",
        n_init: int = 3,
        tol: float = 1e-6,
        max_iter: int = 200,
        alpha: float = 1.0,
        variance_guard: float = 0.01,
        seed: int | None = None,
        progress: bool = False,
        window: int | None = None,
        refit_every: int | None = None,
        nominal_attributes: list | None = None,
        numeric_attributes: list | None = None,
    ):
        check_int("max_components", max_components, 1)
        check_choice("criterion", criterion, ("prequential",) + CRITERIA)
        check_choice("em", em, ("soft", "hard"))
        check_int("n_init", n_init, 1)
        check_real("tol", tol, 0.0, strict=False)
        check_int("max_iter", max_iter, 1)
        check_real("alpha", alpha, 0.0, strict=True)
        check_real("variance_guard", variance_guard, 0.0, strict=False, high=1.0)
        if seed is not None:
            check_int("seed", seed, 0)
        self.max_components = max_components
        self.criterion = criterion
        self.em = em
        self.n_init = n_init
        self.tol = tol
        self.max_iter = max_iter
        self.alpha = alpha
        self.variance_guard = variance_guard
        self.seed = seed
        self.progress = progress
        super().__init__(window=window, refit_every=refit_every,
                         nominal_attributes=nominal_attributes,
                         numeric_attributes=numeric_attributes)

    def selected_model(self) -> SelectedMixture:
        """The selected model, fitting first if records are waiting; a
        :class:`NotFittedError` (the learner unchanged) before any record."""
        if self._model is None and self._n_learned:
            self._training_data()  # fits if records are waiting
        if self._model is None:
            raise NotFittedError(
                f"this {type(self).__name__} has not been fitted yet: learn records "
                "(learn_one, learn_many or fit) before reading its fitted attributes"
            )
        return SelectedMixture(*self._model, self._class_parent)

    @property
    def weights_(self) -> np.ndarray:
        """Mixing proportions ``p(h_k)`` of the selected model."""
        return self.selected_model().weights

    @property
    def means_(self) -> np.ndarray:
        """Gaussian means: ``(C, K, q)`` for FAN, ``(K, q)`` for FM (columns: numeric features)."""
        return self.selected_model().means

    @property
    def variances_(self) -> np.ndarray:
        """Gaussian variances, shaped like :attr:`means_`."""
        return self.selected_model().variances

    @property
    def value_probabilities_(self) -> dict:
        """:attr:`SelectedMixture.value_probabilities` of the selected model."""
        return self.selected_model().value_probabilities

    def _reset_model(self):
        self._model = None  # (structure, params, table) of the most probable K
        self._fits = {}  # K -> Params of the last fit
        self._last = None  # (structure without records, table) of the last fit
        self._evidence = Evidence()
        self._n_em_fits = 0  # fits of the candidates so far (varies the random starts)
        self._challenger = None  # (K, Params) of the random restart in progress
        self._n_restarts = 0
        self.model_weights_ = {}
        self._last_row = None  # (encoded row, {K: log p_K(c | x)}) of the last one-row prediction

    # ---------------------------------------------------------------- fitting

    def _fit(self, data: Table) -> None:
        with single_blas_thread():
            self._select(data)

    def _select(self, data: Table) -> None:
        """Fit every K, then weigh the candidates (prequential) or select one (a criterion)."""
        prequential = self.criterion == "prequential"
        if prequential and self._last is None and data.n >= 4:
            half = data.n // 2  # nothing to learn the weights from yet: hold out a half
            self._fit_candidates(_slice(data, slice(0, half)))
            held_out = self._last[1].translate(_slice(data, slice(half, data.n)))
            self._score(held_out, held_out.y)
        self._fit_candidates(data)
        self._conclude()

    def _conclude(self) -> None:
        """Weigh the candidates just fitted (prequential) or select one by the criterion."""
        if self.criterion == "prequential":
            self._weigh()
            return
        ks = sorted(self._fits)
        self.scores_ = {k: self.criteria_[k][self.criterion] for k in ks}
        self.model_weights_ = {max(ks, key=lambda k: (self.scores_[k], -k)): 1.0}
        self._choose()

    def _weigh(self) -> None:
        """Prequential weights of the current candidates from the evidence so far."""
        ks = sorted(self._fits)
        self._evidence.cover(ks)
        self.scores_ = {k: -self._evidence.losses[k] for k in ks}
        self.model_weights_ = self._evidence.weights(ks)
        self._choose()

    def _choose(self) -> None:
        w = self.model_weights_
        self.n_components_ = max(w, key=lambda k: (w[k], -k))
        self._model = (self._last[0], self._fits[self.n_components_], self._last[1])

    def _fit_candidates(self, data: Table):
        """EM for every K on ``data`` (module docstring); sets the fitted attributes."""
        n_classes = len(data.classes)
        self._fit_engine(self.em_engine(_design(data, data, data.y, n_classes)), data)

    def _fit_engine(self, s: Engine, data: Table):
        """:meth:`_fit_candidates` on the records of engine ``s``, coded by ``data`` (whose
        records are those of ``s``, or which has none: then ``s`` is an engine over the
        partitions of a Dask frame, :mod:`onlinebma.mixture.distributed_em`, and the fit is
        cold)."""
        seed = None if self.seed is None else [self.seed, self._n_em_fits]
        rng = np.random.default_rng(seed)
        hard = self.em == "hard"
        ref = one_component(s)
        k_max = min(self.max_components, s.n_total)
        best = {1: EMResult(params=ref, objective=[s.e_step(ref, hard)[0]], n_iter=0)}
        warm = any(k in self._fits for k in range(2, k_max + 1))
        previous = self._previous_fit(data) if warm else None
        for k in progress_bar(range(2, k_max + 1), total=max(0, k_max - 1),
                              desc=type(self).__name__, enabled=bool(self.progress)):
            floor, fallback = self._guard(ref, k)
            if k in self._fits:
                tau = previous[0].e_step(self._fits[k], hard)[1]
                tau[previous[1]] = 1.0 / k  # records of a class the last fit did not know
                starts, n_random = [tau], 0
            else:
                starts = [s.split_start(best[k - 1].params, hard)]
                n_random = self.n_init - 1
            seeded = [seeded_params(s, k, rng.choice(s.n_total, size=k, replace=False), ref,
                                    floor) for _ in range(n_random)]
            starts += [tau for _, tau in s.e_steps(seeded, hard)]
            for fit in run_em_many(s, starts, hard, self.tol, self.max_iter, floor, fallback):
                if k not in best or _better(fit, best[k]):
                    best[k] = fit
        if previous is not None:
            self._challenge(s, best, previous, rng, ref, hard)
        self._n_em_fits += 1
        self._last_row = None
        self._fits = {k: fit.params for k, fit in best.items()}
        self._last = (s.without_records(), data)
        self.criteria_ = dict(zip(best, scores_many(s, [fit.params for fit in best.values()])))
        self.objective_ = {k: list(fit.objective) for k, fit in best.items()}
        self.n_iter_ = {k: fit.n_iter for k, fit in best.items()}

    def em_engine(self, design, coords: tuple | None = None, totals=None) -> EMEngine:
        """The EM engine of this model (FAN or FM, its ``alpha``) over the records of
        ``design``: in the coordinates ``coords`` and with the constants ``totals`` of all the
        training records when ``design`` holds one chunk of them (``None``: its own)."""
        return EMEngine(design, self._class_parent, self.alpha, VAR_SMOOTHING, coords=coords,
                        totals=totals)

    def fit_on_engine(self, s, data: Table) -> None:
        """Fit on the engine ``s`` over records held elsewhere (cold, with a criterion, as
        ``fit(X, y)``): the partitions of a Dask frame (:mod:`onlinebma.mixture.distributed_em`).
        The coding of those records is already learned and ``data`` is their table without
        rows; the store keeps none of the records."""
        self.coding.forget_records(s.n_total)  # the coding learned, not the records
        self._fit_engine(s, data)
        self._conclude()
        self._fitted_data = data
        self._n_learned_at_fit = self._n_learned_at_data = s.n_total
        self._size_at_fit = s.n_total
        self.n_fits_ += 1

    def distributed_plan(self):
        """How :func:`onlinebma.distributed.fit` trains this model on Dask: distributed EM
        from sums (:class:`onlinebma.mixture.distributed_em.EMPlan`) when it has learned nothing,
        keeps every record and selects K by a criterion computed from sums; otherwise the
        adapter's exact merge (the prequential criterion's evidence is an order of fits)."""
        if self._n_learned or self.window is not None or self.criterion == "prequential":
            return super().distributed_plan()
        return EMPlan(self)

    def _fitted_elsewhere(self) -> bool:
        """Fitted on Dask, with no record stored here (:meth:`fit_on_engine`)."""
        return not self.coding.n_stored and self._model is not None

    def predict_proba_one(self, x: dict) -> dict:
        if not self._fitted_elsewhere():
            return super().predict_proba_one(x)
        table = self._training_data()
        proba = self._predict_proba(table, self._encode_one(x, table))
        return dict(zip(self.coding.classes, proba[0].tolist()))

    def predict_proba_many(self, X):
        if not self._fitted_elsewhere():
            return super().predict_proba_many(X)
        table = self._training_data()
        self.coding.check_frame(X)  # validation only
        proba = self._predict_proba(table, table.encode_frame(X))
        return self._proba_frame(proba, X.index)

    def _challenge(self, s: EMEngine, best: dict, previous, rng, ref: Params, hard: bool):
        """Random restarts for at most ``_RESTART_STEPS`` M steps in all (bounded work per
        refit; a restart that converges early leaves its steps to the next one); one
        unfinished at the end is continued at the next refit, a finished one replaces its K's
        fit if its objective is higher."""
        steps = _RESTART_STEPS
        while steps > 0:
            if self._challenger is not None:  # from the last refit: continue it
                k, params = self._challenger
                self._challenger = None
                if k not in best:
                    continue
                tau = previous[0].e_step(params, hard)[1]
                tau[previous[1]] = 1.0 / k
            else:
                k = 2 + self._n_restarts % max(1, len(best) - 1)
                if k not in best:
                    return
                self._n_restarts += 1
                seeds = rng.choice(s.n_total, size=k, replace=False)
                tau = s.e_step(seeded_params(s, k, seeds, ref, self._guard(ref, k)[0]), hard)[1]
            fit = run_em(s, tau, hard, self.tol, steps, *self._guard(ref, k))
            if fit.n_iter >= steps:  # budget spent before it converged
                self._challenger = (k, fit.params)
                return
            steps -= fit.n_iter
            if _better(fit, best[k]):
                best[k] = fit

    def _guard(self, ref: Params, k: int):
        """Variance floor and empty-cell Gaussians of a K-component model (from the K=1 fit)."""
        rep = (lambda a: np.repeat(a, k, axis=0)) if self._class_parent else (lambda a: a)
        floor = self.variance_guard * rep(ref.var)
        return floor, (rep(ref.mean), rep(ref.var), rep(ref.active))

    def _previous_fit(self, data: Table):
        """Today's records as the last fit sees them (its coding and coordinates), for warm
        starts, and which of them have a class it did not know. Features and values it did not
        know are skipped."""
        s_prev, fitted = self._last
        rows = fitted.translate(data)
        unknown = rows.y < 0
        design = _design(fitted, rows, np.where(unknown, 0, rows.y), len(fitted.classes))
        return self.em_engine(design, coords=(s_prev.center, s_prev.scale)), unknown

    def _log_proba(self, rows: Table, ks) -> dict:
        """``{K: (m, C) log p_K(c | x)}`` of rows coded by the last fit's table."""
        s, table = self._last
        design = _design(table, rows, None, len(table.classes))
        out = {}
        for k in ks:
            lj = s.log_joint_classes(self._fits[k], design)
            out[k] = lj - logsumexp_np(lj, axis=1, keepdims=True)
        return out

    def _score(self, rows: Table, y: np.ndarray) -> None:
        """Add the last fits' log loss on ``rows`` (coded by the last fit's table; records it
        has not seen) with class codes ``y`` (``-1``: unknown to it) to the evidence."""
        log_proba = None
        if rows.n == 1 and self._last_row is not None:  # predicted just before: reuse
            key, cached = self._last_row
            if key == _row_key(rows) and cached.keys() == self._fits.keys():
                log_proba = cached
        if log_proba is None:
            log_proba = self._log_proba(rows, self._fits)
        self._evidence.add(log_proba, y)

    # --------------------------------------------------------------- learning

    def _averaging(self) -> bool:
        """Whether learned records are evidence: a prequential average over several fits (a K
        without evidence inherits that of K - 1, so scoring a lone K = 1 changes nothing)."""
        return self.criterion == "prequential" and len(self._fits) > 1

    def learn_one(self, x: dict, y) -> None:
        x = self.coding.learn_one(x, y)  # validated once: its usable values
        if self._averaging():
            table = self._last[1]
            self._score(table.encode_one(x), table.class_codes([y]))
            self._weigh()

    def learn_many(self, X, y) -> None:
        with uninterrupted():  # Ctrl-C waits for the records and their evidence
            super().learn_many(X, y)
            if self._averaging():
                table = self._last[1]
                self._score(table.encode_frame(X), table.class_codes(y))
                self._weigh()

    # ------------------------------------------------------------- predicting

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:
        if rows.n > 1000:
            with single_blas_thread():
                return self._predict_rows(rows)
        return self._predict_rows(rows)

    def _predict_rows(self, rows: Table) -> np.ndarray:
        """``sum_K w_K p_K(c | x)`` over the candidates with a weight (one for a criterion)."""
        weights = self.model_weights_
        one = rows.n == 1 and self.criterion == "prequential"
        # One row, as in progressive validation: every K, kept for learn_one's evidence.
        ks = self._fits if one else [k for k, w in weights.items() if w >= _NEGLIGIBLE]
        log_proba = self._log_proba(rows, ks)
        if one:
            self._last_row = (_row_key(rows), log_proba)
        out = sum(weights[k] * np.exp(log_proba[k]) for k in weights if weights[k] >= _NEGLIGIBLE)
        return out / out.sum(axis=1, keepdims=True)

    @classmethod
    def _unit_test_params(cls):
        yield {"max_components": 2, "n_init": 1, "seed": 1}
        yield {"max_components": 2, "n_init": 1, "em": "hard", "criterion": "bic", "seed": 2,
               "window": 150}


def _better(fit: EMResult, best: EMResult) -> bool:
    """Whether EM run ``fit`` reached a higher objective than ``best``, beyond a tie."""
    top = best.objective[-1]
    return fit.objective[-1] > top + _TIE * abs(top)
