"""The learners' terms for :class:`~onlinebma.naive_bayes.rates.SharedRates`: what
:class:`~onlinebma.naive_bayes.NaiveBayes`, :class:`~onlinebma.naive_bayes.BMANB` and
:class:`~onlinebma.naive_bayes.ModelAveragedNB` compute per feature with forgetting, written
over arrays with a member axis.

Every method takes the shared state ``st``, the record's known numeric columns ``js`` (values
``xs``) or nominal rows ``rs`` (features ``gs``) and the number of classes ``k``, and returns
per class and member the summed log terms (``[k, R]``; arrays are ``[features, slots, R]``,
the member axis last). The formulas, and the paper equations
they implement, are the per-learner ones of base.py, naive.py, bma.py, model_averaged.py and
marginals.py; statistics are in the members' scaled units, converted to records by
``st.clock.scale`` where those learners convert them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from ..stats.numerics import LOG_2PI, LOG_PI, VAR_SMOOTHING
from .rates import pick
from .wide import MAX_SQUARED_Z

__all__ = ["GaussianTerms", "PluginTerms", "StudentTerms"]


def _mixed_log(none: np.ndarray, arc: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``log(w0 e^none + w1 e^arc)`` per class (base._add_mixture), ``w1 = sigmoid(d)``:
    ``none`` and ``d`` are ``[m, R]``, ``arc`` is ``[m, k, R]``."""
    lw1 = -np.logaddexp(0.0, -d)
    lw0 = -np.logaddexp(0.0, d)
    return np.logaddexp((lw0 + none)[:, None], lw1[:, None] + arc)


_SIGNS: dict = {}


def _signs(k: int) -> np.ndarray:
    """``[-1, 1, ..., 1]`` of length ``1 + k``: slot 0 (the marginal) subtracted, the ``k``
    classes added, by one matrix product over the slot axis."""
    sign = _SIGNS.get(k)
    if sign is None:
        sign = _SIGNS[k] = np.array([-1.0] + [1.0] * k)
    return sign


def _arc_probability(d: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -d))


def _mixed_nominal(theta: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``sum_f log(w0 θ(v) + w1 θ(v | y))`` (base._add_nominals), ``[k, R]``, as
    ``sum_f log(e θ(v) + θ(v | y)) - log(1 + e)`` with ``e = exp(-d) = w0 / w1``: fewer
    operations than forming both weights. ``d`` is floored at -700 so that ``e`` stays finite;
    there ``w1 < 1e-304`` adds less than a double's resolution to ``w0 θ(v)``, which is at
    least ``a / (N + r a)``."""
    e = np.exp(-np.maximum(d, -700.0))
    mixed = np.add.reduce(np.log((e * theta[:, 0])[:, None] + theta[:, 1:]), axis=0)
    return mixed - np.add.reduce(np.log1p(e), axis=0)


def _theta(st, rs, gs, slots: slice) -> np.ndarray:
    """Dirichlet posterior means ``(a + N_v[y]) / (r a + N[_y])`` of rows ``rs`` (features
    ``gs``, a selection for :func:`~onlinebma.naive_bayes.rates.pick`) in ``slots`` (slot 0
    without the arc, ``1 + i`` class ``i``), ``[q, slots, R]``, pseudo-counts in the scaled
    unit."""
    a = st.pseudo
    r = pick(st.n_values, gs)[:, None, None]
    return (a + st.counts.take(rs, axis=0)[:, slots]) / (r * a + pick(st.totals, gs)[:, slots])


class GaussianTerms:
    """NaiveBayes: every arc present; Dirichlet-smoothed counts and guarded Gaussians."""

    def __init__(self, alpha: float):
        self.alpha = alpha

    # per-learner hooks with nothing to keep for NaiveBayes
    def grow_domain(self, st, g) -> None:
        """Re-express feature ``g``'s marginal likelihoods for one more value."""

    def learned_nominal(self, st, rs, gs, slots, cache) -> None:
        """Called before rows ``rs`` count a record in ``slots`` (marginal, class); ``cache``
        is what :meth:`nominal` kept when it predicted this record, or ``None``."""

    def learned_numeric(self, st, js, xs, iy, cache) -> None:
        """Called before columns ``js`` add ``xs`` to class ``iy``'s moments."""

    def nominal(self, st, rs, gs, k: int):
        return np.add.reduce(np.log(_theta(st, rs, gs, slice(1, k + 1))), axis=0), None

    def _gaussians(self, st, js, k: int):
        """Per column, slot and member the moments (scaled unit) and the guarded variance
        (naive.py's _gaussian: a class never seen with the feature takes the marginal);
        ``ok``, whether the feature informs (floor > 0), is ``None`` when all do."""
        s = pick(st.numeric, js)[:, :k + 1]
        n, mean, m2 = s[:, :, 0], s[:, :, 1], s[:, :, 2]
        floor = VAR_SMOOTHING * m2[:, 0] / n[:, 0]
        seen = None
        if st.unseen:
            seen = st.numeric_seen[js, :k + 1][:, :, None]
            n = np.where(seen, n, n[:, :1])
            mean = np.where(seen, mean, mean[:, :1])
            m2 = np.where(seen, m2, m2[:, :1])
        var = m2 / n + floor[:, None]
        ok = None
        if np.count_nonzero(floor) != floor.size:  # constant so far: skipped
            ok = floor > 0.0
            var = np.where(ok[:, None], var, 1.0)  # (a unit variance keeps logs finite)
        return n, mean, m2, var, seen, ok

    @staticmethod
    def _log_densities(mean, var, xs):
        d = xs[:, None, None] - mean
        q = np.minimum(d * d / var, MAX_SQUARED_Z)
        return -0.5 * (LOG_2PI + np.log(var) + q)

    def numeric(self, st, js, xs, k: int, huge: bool = False):
        _, mean, _, var, _, ok = self._gaussians(st, js, k)
        arc = self._log_densities(mean[:, 1:], var[:, 1:], xs)
        if ok is not None:
            arc = np.where(ok[:, None], arc, 0.0)
        return arc.sum(axis=0), None

    def feature_posteriors(self, st) -> dict:
        return dict.fromkeys(st.order, np.ones(len(st.rates)))


class PluginTerms(GaussianTerms):
    """BMANB: arcs weighted by plug-in likelihoods and β = Γ^(N + 1) (Wu et al. eq. 11, 14)."""

    def __init__(self, alpha: float, gamma: float):
        super().__init__(alpha)
        self.log_gamma = math.log(gamma)

    def _nominal_odds(self, st, k: int) -> np.ndarray:
        """Eq. 14's log odds of every nominal feature, ``[features, R]``, in records: sum_vy
        N_vy log(N_vy + a) - sum_v N_v log(N_v + a) per feature, plus
        N log(N + a M) - sum_y N_y log(N_y + a M), minus (N + 1) log Γ. The rows' and the
        features' totals' ``N log(N + a')`` are formed together, then summed per feature, the
        totals' negated (``st.grouped``: each feature's rows and then its totals, kept until
        a value is added)."""
        n_rows, n_features = len(st.rows), len(st.features)
        if st.grouped is None:
            features = np.concatenate((st.row_feature[:n_rows], np.arange(n_features)))
            order = np.argsort(features, kind="stable")  # the totals after the rows
            starts = np.searchsorted(features[order], np.arange(n_features))
            flip = np.ones((n_rows + n_features, 1))
            flip[n_rows:] = -1.0
            a = self.alpha
            pseudo = np.concatenate((np.full(n_rows, a), a * st.n_values[:n_features]))
            st.grouped = (order, starts, flip, pseudo[:, None, None])
        order, starts, flip, pseudo = st.grouped
        # the rows' N_v (slot 0) and N_vy, then the features' N and N_y, in records
        cells = np.concatenate((st.counts[:n_rows, :k + 1], st.totals[:n_features, :k + 1]))
        cells *= st.clock.scale
        # the class slots' sum minus the marginal's, as one product (_signs)
        terms = (_signs(k) @ (cells * np.log(cells + pseudo))) * flip
        per_feature = np.add.reduceat(terms.take(order, axis=0), starts, axis=0)
        return per_feature - (cells[n_rows:, 0] + 1.0) * self.log_gamma

    def nominal(self, st, rs, gs, k: int):
        theta = _theta(st, rs, gs, slice(0, k + 1))
        return _mixed_nominal(theta, pick(self._nominal_odds(st, k), gs)), None

    def _numeric_odds(self, st, n, m2, var, seen, ok):
        """Eq. 11's log odds from the Gaussians' plug-in log likelihoods (naive.py's
        _log_likelihood; 0 for a constant feature), ``[columns, R]``."""
        loglik = -0.5 * n * (LOG_2PI + np.log(var)) - m2 / (2.0 * var)
        arc = loglik[:, 1:] if seen is None else np.where(seen[:, 1:], loglik[:, 1:], 0.0)
        d = arc.sum(axis=1) - loglik[:, 0]
        if ok is not None:
            d = np.where(ok, d, 0.0)
        c = st.clock.scale
        return c * d - (n[:, 0] * c + 1.0) * self.log_gamma

    def numeric(self, st, js, xs, k: int, huge: bool = False):
        n, mean, m2, var, seen, ok = self._gaussians(st, js, k)
        logd = self._log_densities(mean, var, xs)
        mixed = _mixed_log(logd[:, 0], logd[:, 1:], self._numeric_odds(st, n, m2, var, seen, ok))
        if ok is not None:
            mixed = np.where(ok[:, None], mixed, 0.0)
        return mixed.sum(axis=0), None

    def feature_posteriors(self, st) -> dict:
        k = len(st.classes)
        out = {}
        if st.features:
            p = _arc_probability(self._nominal_odds(st, k))
            out.update((f, p[g]) for f, g in st.features.items())
        if st.columns:
            n, _, m2, var, seen, ok = self._gaussians(st, np.arange(len(st.columns)), k)
            p = _arc_probability(self._numeric_odds(st, n, m2, var, seen, ok))
            out.update((f, p[j]) for f, j in st.columns.items())
        return out


class StudentTerms:
    """ModelAveragedNB (K2): arcs weighted by marginal likelihoods kept as sums of sequential
    predictive log probabilities (Dash & Cooper eq. 8, 11-13); Student-t numeric predictives
    from a Normal–Gamma prior."""

    def __init__(self, alpha: float, inclusion_prior: float, normal_gamma):
        self.alpha = alpha
        self.prior_log_odds = math.log(inclusion_prior) - math.log1p(-inclusion_prior)
        self.a0 = normal_gamma.a0
        self.constants = normal_gamma.constants()[:5]

    # -------------------------------------------------------------- nominal

    def grow_domain(self, st, g) -> None:
        """K2: a new value changes each column's normaliser Γ(r a) / Γ(r a + N_j)
        (marginals.py's MarginalLikelihoods.grow_domain)."""
        a = self.alpha
        r = int(st.n_values[g]) + 1
        old, new = (r - 1) * a, r * a
        step = math.lgamma(new) - math.lgamma(old)
        k = len(st.classes)
        seen = st.nominal_seen[g, 1:k + 1]
        totals = st.totals[g, :k + 1] * st.clock.scale
        n, n_class = totals[0], totals[1:][seen]
        ml = st.log_ml["nominal"]
        if a == 1:  # Γ(z) / Γ(z + 1) = 1 / z
            ml[g, 0] += step - np.log(old + n)
            ml[g, 1] += seen.sum() * step - np.log(old + n_class).sum(axis=0)
        else:
            ml[g, 0] += step + gammaln(old + n) - gammaln(new + n)
            ml[g, 1] += seen.sum() * step + (gammaln(old + n_class)
                                             - gammaln(new + n_class)).sum(axis=0)

    def learned_nominal(self, st, rs, gs, slots, cache) -> None:
        """Eq. 8 as a product of sequential predictive probabilities: each row's
        ``log θ(v)`` and ``log θ(v | y)`` before it counts the record, read from the
        prediction of this very record when there was one (the same computation)."""
        if cache is not None and cache[0] is rs and slots.stop <= cache[1].shape[1]:
            theta = cache[1][:, slots]
        else:
            theta = _theta(st, rs, gs, slots)
        st.log_ml["nominal"][gs] += np.log(theta)

    def nominal(self, st, rs, gs, k: int):
        ml = pick(st.log_ml["nominal"], gs)
        theta = _theta(st, rs, gs, slice(0, k + 1))
        return _mixed_nominal(theta, self.prior_log_odds + ml[:, 1] - ml[:, 0]), (rs, theta)

    # -------------------------------------------------------------- numeric

    def _student(self, st, js, xs, k: int, huge: bool) -> np.ndarray:
        """Log Student-t predictive densities ``[m, k + 1, R]`` (gaussian.py's
        predictive_params and student_t_log_density); the prior's for a class never seen
        with the feature."""
        s = pick(st.numeric, js)[:, :k + 1]
        c = st.clock.scale
        n, mean, m2 = s[:, :, 0] * c, s[:, :, 1], s[:, :, 2] * c
        if st.unseen:
            seen = st.numeric_seen[js, :k + 1][:, :, None]
            n, mean, m2 = np.where(seen, n, 0.0), np.where(seen, mean, 0.0), np.where(seen, m2, 0.0)
        k0, k0mu0, mu0, b2, a0h = self.constants
        kn = k0 + n
        dm = mean - mu0
        nus2 = (b2 + m2 + k0 * n * dm * dm / kn) * (kn + 1.0) / kn
        an = self.a0 + 0.5 * n
        log_norm = gammaln(an + 0.5) - gammaln(an) - 0.5 * (LOG_PI + np.log(nus2))
        z = xs[:, None, None] - (k0mu0 + n * mean) / kn
        u = z * z / nus2
        tail = np.log1p(u)
        if huge:  # log1p(u) past float range: 2 log|z| - log(nu scale^2)
            tail = np.where(np.isinf(u), 2.0 * np.log(np.abs(z)) - np.log(nus2), tail)
        return log_norm - (a0h + 0.5 * n) * tail

    def numeric(self, st, js, xs, k: int, huge: bool = False):
        lp = self._student(st, js, xs, k, huge)
        ml = pick(st.log_ml["numeric"], js)
        mixed = _mixed_log(lp[:, 0], lp[:, 1:], self.prior_log_odds + ml[:, 1] - ml[:, 0])
        return mixed.sum(axis=0), (js, lp)

    def learned_numeric(self, st, js, xs, iy, cache) -> None:
        """Eq. 8: each feature's predictive log densities without and with the arc, from the
        prediction of this very record when there was one (the same computation)."""
        if cache is not None and cache[0] is js and 1 + iy < cache[1].shape[1]:
            lp = cache[1]
        else:
            lp = self._student(st, js, xs, len(st.classes), False)
        st.log_ml["numeric"][js] += lp[:, (0, 1 + iy)]

    def feature_posteriors(self, st) -> dict:
        out = {}
        for kind, index in (("nominal", st.features), ("numeric", st.columns)):
            if index:
                ml = st.log_ml[kind][:len(index)]
                p = _arc_probability(self.prior_log_odds + ml[:, 1] - ml[:, 0])
                out.update((f, p[i]) for f, i in index.items())
        return out
