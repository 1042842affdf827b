"""What FAN and the finite-mixture classifier share: parameters, model selection, prediction.

A subclass only says whether the class is a parent of the features (FAN) or a child of the
hidden variable (FM); everything else — encoding, restarts, warm starts, the criteria, the
progress display, the fitted attributes — is here.
"""

from __future__ import annotations

import numpy as np

from ..batch import BufferRefitClassifier, Table
from ..progress import progress as progress_bar
from ..stats.logmath import logsumexp_np
from ..stats.numerics import VAR_SMOOTHING, single_blas_thread
from ..validation import check_choice, check_int, check_real
from .criteria import CRITERIA, scores
from .em import (
    Design,
    EMResult,
    Params,
    Structure,
    one_component,
    run_em,
    seeded_params,
)

__all__ = ["MixtureClassifier", "PARAMETERS_DOC"]

PARAMETERS_DOC = """max_components
        Largest number of components tried; every K in 1..max_components is fitted and the
        best by ``criterion`` is kept. ``1`` means exactly one component.
    criterion
        ``"icl"`` (default, the paper's best), ``"bic"``, ``"aic"`` or ``"cs"``
        (Cheeseman–Stutz); see :mod:`onlinebma.mixture.criteria`.
    em
        ``"soft"``: EM with expected counts (eq. 8); ``"hard"``: classification EM (eq. 9).
    n_init
        EM runs per K > 1, each from K distinct random records as seeds; the run with the
        highest objective is kept. On a refit, the first run starts from the previous fit's
        model with the same K (warm start) instead.
    tol
        EM stops when the objective gains less than ``tol`` times its magnitude.
    max_iter
        At most this many M steps per run.
    alpha
        Dirichlet pseudo-count of every multinomial (eq. 5), as in ``NaiveBayes``.
    variance_guard
        Every component's variance of a numeric feature is at least ``variance_guard`` times
        the one-component variance of that feature (the guard against collapsing variances;
        ``0`` turns it off). It never binds for one component.
    seed
        Seed of the numpy generator that picks the seeds of the EM runs (``None``: fresh
        entropy). With a seed, every fit on the same records gives the same model.
    progress
        Show a progress bar over the EM runs of every fit.
    window
        Keep only the last ``window`` records (``None``: all).
    refit_every
        Refit after this many new records (checked when a prediction is asked for);
        ``None`` refits once the store has grown by 10%.
    nominal_attributes
        Features to treat as nominal even when their values are numbers."""


def _design(table: Table, rows: Table, y, n_classes: int) -> Design:
    """``rows`` (coded by ``table``) in the EM engine's layout: one one-hot column per value
    present in ``table``; features without any value present have no columns."""
    r = np.asarray(table.n_values, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(r)[:-1]]).astype(np.int64)
    onehot = np.zeros((rows.n, int(r.sum())))
    observed, feats = np.nonzero(rows.codes >= 0)
    onehot[observed, offsets[feats] + rows.codes[observed, feats]] = 1.0
    used = r[r > 0]
    obs = ~np.isnan(rows.numeric)
    return Design(onehot=onehot, x=np.where(obs, rows.numeric, 0.0), obs=obs, y=y,
                  block=np.repeat(np.arange(len(used)), used), r=used, n_classes=n_classes)


class MixtureClassifier(BufferRefitClassifier):
    """Base of :class:`~onlinebma.mixture.FAN` and :class:`~onlinebma.mixture.FiniteMixture`."""

    _class_parent: bool = True  # FAN: features depend on (class, component); FM: on the component

    def __init__(
        self,
        max_components: int = 5,
        criterion: str = "icl",
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
    ):
        check_int("max_components", max_components, 1)
        check_choice("criterion", criterion, CRITERIA)
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
                         nominal_attributes=nominal_attributes)

    def _reset(self):
        super()._reset()
        self._model = None  # (structure, params, table) of the selected fit
        self._warm = {}  # K -> what _warm_tau needs of the last fit with K components

    # ---------------------------------------------------------------- fitting

    def _fit(self, data: Table) -> None:
        with single_blas_thread():
            self._select(data)

    def _select(self, data: Table) -> None:
        """Fit every K in 1..max_components and keep the best by the criterion."""
        n_classes = len(data.classes)
        design = _design(data, data, data.y, n_classes)
        s = Structure(design, self._class_parent, self.alpha, VAR_SMOOTHING)
        rng = np.random.default_rng(self.seed)
        hard = self.em == "hard"
        ref = one_component(s)
        k_max = min(self.max_components, design.n)
        tasks = [(1, 0)] + [(k, i) for k in range(2, k_max + 1) for i in range(self.n_init)]
        best: dict[int, EMResult] = {}
        for k, i in progress_bar(tasks, total=len(tasks), desc=type(self).__name__,
                                 enabled=bool(self.progress)):
            if k == 1:
                best[1] = EMResult(params=ref, objective=[s.e_step(ref, hard)[0]], n_iter=0)
                continue
            floor, fallback = self._guard(ref, k)
            if i == 0 and k in self._warm:
                tau0 = self._warm_tau(s, data, k)
            else:
                seeds = rng.choice(design.n, size=k, replace=False)
                tau0 = s.e_step(seeded_params(s, k, seeds, ref, floor), hard)[1]
            fit = run_em(s, tau0, hard, self.tol, self.max_iter, floor, fallback)
            if k not in best or fit.objective[-1] > best[k].objective[-1]:
                best[k] = fit
        table = {k: scores(s, fit.params) for k, fit in best.items()}
        self.scores_ = {k: row[self.criterion] for k, row in table.items()}
        self.criteria_ = table
        self.objective_ = {k: list(fit.objective) for k, fit in best.items()}
        self.n_components_ = max(self.scores_, key=lambda k: (self.scores_[k], -k))
        self._model = (s.without_records(), best[self.n_components_].params, data)
        self._warm = {k: (fit.params, data, s.alpha, s.center) for k, fit in best.items() if k > 1}

    def _guard(self, ref: Params, k: int):
        """Variance floor and empty-cell Gaussians of a K-component model (from the K=1 fit)."""
        rep = (lambda a: np.repeat(a, k, axis=0)) if self._class_parent else (lambda a: a)
        floor = self.variance_guard * rep(ref.var)
        return floor, (rep(ref.mean), rep(ref.var), rep(ref.active))

    def _warm_tau(self, s: Structure, data: Table, k: int) -> np.ndarray:
        """Responsibilities of the current records under the previous fit with ``k`` components.

        Features, values and classes that arrived since then are unknown to it: their factors
        are skipped, and records of a new class start with equal responsibilities.
        """
        params, fitted, alpha, center = self._warm[k]
        rows = fitted.translate(data)
        known = rows.y >= 0
        old = _design(fitted, rows, np.where(known, rows.y, 0), len(fitted.classes))
        s_old = Structure(old, self._class_parent, alpha, VAR_SMOOTHING, center=center)
        tau = s_old.e_step(params, self.em == "hard")[1]
        tau[~known] = 1.0 / k
        return tau

    # ------------------------------------------------------------- predicting

    def _predict_proba(self, data: Table, rows: Table) -> np.ndarray:
        if rows.n > 1000:
            with single_blas_thread():
                return self._predict_rows(rows)
        return self._predict_rows(rows)

    def _predict_rows(self, rows: Table) -> np.ndarray:
        s, p, table = self._model
        design = _design(table, rows, None, len(table.classes))
        log_joint = s.log_joint_classes(p, design)
        return np.exp(log_joint - logsumexp_np(log_joint, axis=1, keepdims=True))

    # -------------------------------------------------------- fitted attributes

    def _fitted(self):
        if self._model is None:
            self._training_data()  # fits if records are waiting
        if self._model is None:
            raise AttributeError("the model has not been fitted yet")
        return self._model

    @property
    def weights_(self) -> np.ndarray:
        """Mixing proportions ``p(h_k)`` of the selected model."""
        return np.exp(self._fitted()[1].log_weights)

    @property
    def means_(self) -> np.ndarray:
        """Gaussian means: ``(C, K, q)`` for FAN, ``(K, q)`` for FM (columns: numeric features)."""
        s, p, _ = self._fitted()
        mean = p.mean + s.center
        return mean.reshape(-1, p.k, mean.shape[1]) if self._class_parent else mean

    @property
    def variances_(self) -> np.ndarray:
        """Gaussian variances, shaped like :attr:`means_`."""
        s, p, _ = self._fitted()
        return p.var.reshape(-1, p.k, p.var.shape[1]) if self._class_parent else p.var

    @property
    def value_probabilities_(self) -> dict:
        """``{feature: {value: probabilities}}`` of every nominal value seen in training.

        FAN: a ``(C, K)`` array ``p(value | class, component)``; FM: ``(K,)`` ``p(value | h)``.
        """
        _, p, table = self._fitted()
        theta = np.exp(p.log_theta)
        out = {}
        start = 0
        for name, values in zip(table.nominal_features, table.values):
            cols = theta[:, start:start + len(values)].T
            start += len(values)
            if values:
                out[name] = {v: col.reshape(-1, p.k) if self._class_parent else col
                             for v, col in zip(values, cols)}
        return out

    def _unit_test_params(self):
        yield {"max_components": 2, "n_init": 1, "seed": 1}
        yield {"max_components": 2, "n_init": 1, "em": "hard", "criterion": "bic", "seed": 2,
               "window": 150}
