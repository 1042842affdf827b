"""Plain naive Bayes over all features: the baseline of every comparison."""

from __future__ import annotations

import math

import numpy as np

from .. import tuning
from ..stats.gaussian import GaussianMoments
from ..stats.numerics import LOG_2PI, VAR_SMOOTHING
from ..stats.tables import NumericTable
from .base import BaseNB, _add_mixture
from .wide import MAX_SQUARED_Z

__all__ = ["NaiveBayes"]




class NaiveBayes(BaseNB):
    """Naive Bayes with Dirichlet-smoothed parameters (eq. 6 of Dash & Cooper 2002).

    Nominal features: ``P(v | y) = (N_yv + alpha) / (N_y + alpha r)``, with ``r`` the number of
    values seen for the feature and ``N_y`` the class-``y`` records in which it was observed.
    Numeric features: a Gaussian per class from the records' mean and (maximum-likelihood)
    variance, plus ``1e-9`` times the feature's marginal variance; a class never seen with the
    feature uses the feature's marginal Gaussian, and a feature constant so far is skipped.
    Missing values and values never seen in training are skipped.

    Parameters
    ----------
    alpha : float, default 1.0
        Dirichlet pseudo-count of every cell (Laplace smoothing when 1), also used for the
        class prior ``(N_y + alpha) / (N + alpha |classes|)``.
    decay : float or "auto", default 1.0
        λ in (0, 1]: every count and moment is multiplied by λ after each learned record, so
        a record of age ``a`` weighs λ^a (half-life ``ln 2 / -ln λ`` records). ``"auto"``
        averages learners over a grid of rates (see :mod:`onlinebma.forgetting` and
        :meth:`decay_posterior`). 1.0: no forgetting.
    nominal_attributes : list or None, default None
        Features to treat as nominal even though their values are numbers. Otherwise numbers
        are numeric and every other value is nominal, as in River's trees.
    absent : str, default 'missing'
        ``"missing"`` (default): an absent key is a missing value. ``"zero"``: numeric
        features are counts (a bag of words, as River's ``MultinomialNB`` reads them) and an
        absent key is a zero count: ``P(w | y) = (N_wy + alpha) / (N_y + alpha V)`` over the
        vocabulary of ``V`` words seen so far, O(present words) per record (see
        :mod:`onlinebma.naive_bayes.counts`).
    numeric : str, default '8 intervals'
        How numeric features are read (:mod:`onlinebma.naive_bayes.numbers`): ``"Gaussian"``,
        a Gaussian per class from each feature's moments; ``"3 intervals"``, ``"5 intervals"``,
        ``"8 intervals"``, ``"16 intervals"``, ``"32 intervals"``, an equal-frequency grid
        whose frequent values are intervals of their own; ``"MDL"``, Fayyad & Irani's
        class-aware cut points. A feature with few repeated values is read per value.
        Intervals are counted as nominal values, so the structure averaging treats them as
        any nominal feature. The default ``"8 intervals"`` was chosen by the benchmark
        (docs/naive_bayes.md, "Numbers": below the class prior's log loss on adult, where the
        Gaussian is above it, and the best mean on the small numeric tables). Learners that
        will be merged take cut points agreed beforehand (:meth:`fix_numeric`).
    sample_size : int, default 500
        In a stream a numeric feature's cut points are fixed from its first ``sample_size``
        values; until then it is read by its Gaussian, and the records that carry it are kept
        and counted with the cut points when they are fixed (no value is dropped).
        ``learn_many`` fixes a feature whose sample the table leaves incomplete from the
        table itself. Unused with ``numeric="Gaussian"``.
    numeric_attributes : list or None, default None
        Features that are numeric whatever their first value: a value of one that is not a
        number (a ``"?"`` for a missing value read as text) is refused, not made a category.

    Examples
    --------
    >>> from onlinebma.naive_bayes import NaiveBayes
    >>> model = NaiveBayes()
    >>> model.predict_proba_one({"sky": "sunny"})
    {}
    >>> for x, y in [({"sky": "sunny", "temp": 30.0}, "beach"),
    ...              ({"sky": "rainy", "temp": 12.0}, "home"),
    ...              ({"sky": "sunny", "temp": 25.0}, "beach")]:
    ...     model.learn_one(x, y)
    >>> proba = model.predict_proba_one({"sky": "rainy"})
    >>> round(proba["home"], 4)
    0.64
    >>> model.predict_one({"sky": "sunny", "temp": 28.0})
    'beach'

    Word counts, where an absent word is a zero count (River's ``MultinomialNB`` reads them
    alike; our class prior is smoothed):

    >>> texts = NaiveBayes(absent="zero")
    >>> for x, y in [({"cheap": 2, "pills": 1}, "spam"), ({"lunch": 1, "today": 1}, "ham"),
    ...              ({"cheap": 1, "lunch": 1}, "ham")]:
    ...     texts.learn_one(x, y)
    >>> {y: round(p, 3) for y, p in texts.predict_proba_one({"cheap": 1, "pills": 1}).items()}
    {'spam': 0.723, 'ham': 0.277}

    A table's numbers are cut into intervals from the table itself (``learn_many``); a
    feature that is mostly 0 keeps 0 as an interval of its own:

    >>> import pandas as pd
    >>> X = pd.DataFrame({"gain": [0.0] * 12 + [500.0, 900.0, 7000.0, 9000.0],
    ...                   "hours": [40.0, 38, 45, 20, 60, 40, 35, 50, 42, 40, 30, 55,
    ...                             60, 45, 50, 70]})
    >>> y = pd.Series(["low"] * 12 + ["high"] * 4)
    >>> model = NaiveBayes(numeric="5 intervals")
    >>> model.learn_many(X, y)
    >>> model.cut_points()["gain"].tolist()
    [-5e-324, 0.0, 700.0, 3950.0, 8000.0]
    >>> round(model.predict_proba_one({"gain": 0.0, "hours": 40.0})["low"], 3)
    0.979

    """

    @staticmethod
    def _gaussian(table: NumericTable, moments: GaussianMoments | None):
        """``(mean, guarded variance)`` of the class Gaussian, or ``None`` when the feature
        has been constant so far (it carries no information)."""
        marginal = table.marginal
        floor = VAR_SMOOTHING * marginal.m2 / marginal.n
        if floor <= 0.0:
            return None
        if moments is None:
            moments = marginal
        return moments.mean, moments.m2 / moments.n + floor

    def _plugin_log_gamma(self):
        """``log Γ`` of BMANB's structure prior ``β = Γ^(N + 1)`` (eq. 11), which mixes every
        numeric feature with plug-in structure weights; ``None`` for NaiveBayes, which always
        uses every feature. Called once per prediction."""
        return None

    def _wide_arc_odds(self, features, n, r, n_class):
        """``None``: every feature always used (the array path of wide nominal records)."""
        return None

    def _add_numerics(self, scores: list, pairs, classes, seen: list) -> list:
        """Per class, the log mixed density of each numeric feature (see the base), added in
        place in one loop: the Gaussians and, for BMANB, the plug-in log likelihoods of eq. 11
        in one pass over the classes, one log of each class variance, and for BMANB one call
        per feature to mix. A wide record goes the array path of
        :mod:`~onlinebma.naive_bayes.wide` (from :data:`~onlinebma.tuning.WIDE_FEATURES`
        features and :data:`~onlinebma.tuning.WIDE_CELLS` cells on), which computes the same
        terms."""
        if self._forgets:
            return super()._add_numerics(scores, pairs, classes, seen)
        if len(pairs) >= tuning.WIDE_FEATURES and self._arrays_apply():
            out = self._wide_numerics.gaussian_terms(scores, pairs, classes, self._tables,
                                                     self._t, self._plugin_log_gamma)
            if out is not None:
                return out
        tables = self._tables
        log, cap, add_mixture = math.log, MAX_SQUARED_Z, _add_mixture
        log_gamma = self._plugin_log_gamma()
        always = log_gamma is None
        scores = list(scores)
        n_classes = len(classes)
        arc = [0.0] * (n_classes + 1)  # [no arc, class 0, class 1, ...]
        for f, x in pairs:
            t = tables.get(f)
            if t is None:
                continue
            marginal = t.marginal
            floor = VAR_SMOOTHING * marginal.m2 / marginal.n
            if floor <= 0.0:
                continue  # constant so far: no information
            by_class = t.by_class
            var = marginal.m2 / marginal.n + floor
            log_var = log(var)
            d = x - marginal.mean
            q = d * d / var
            none = -0.5 * (LOG_2PI + log_var + (q if q <= cap else cap))
            with_class = 0.0  # sum over classes of the plug-in log likelihood (BMANB)
            for i in range(n_classes):
                m = by_class.get(classes[i])
                if m is None:
                    arc[i + 1] = none
                    continue
                v = m.m2 / m.n + floor
                lv = log(v)
                d = x - m.mean
                q = d * d / v
                arc[i + 1] = -0.5 * (LOG_2PI + lv + (q if q <= cap else cap))
                with_class += -0.5 * m.n * (LOG_2PI + lv) - m.m2 / (2.0 * v)
            if always:
                for i in range(n_classes):
                    scores[i] += arc[i + 1]
                continue
            # BMANB's eq. 11 log odds, as _arc_log_odds computes them without forgetting
            without = -0.5 * marginal.n * (LOG_2PI + log_var) - marginal.m2 / (2.0 * var)
            arc[0] = none
            add_mixture(scores, arc, with_class - without - (marginal.n + 1) * log_gamma)
        return scores

    def _log_density(self, table: NumericTable, moments: GaussianMoments | None, x: float):
        gaussian = self._gaussian(table, moments)
        if gaussian is None:
            return None
        mean, var = gaussian
        d = x - mean
        q = d * d / var  # the squared z-score; float overflow gives inf
        if q > MAX_SQUARED_Z:
            q = MAX_SQUARED_Z
        return -0.5 * (LOG_2PI + math.log(var) + q)

    def _log_density_np(self, table: NumericTable, moments: GaussianMoments | None, x):
        gaussian = self._gaussian(table, moments)
        if gaussian is None:
            return None
        mean, var = gaussian
        with np.errstate(over="ignore"):
            q = np.minimum((x - mean) ** 2 / var, MAX_SQUARED_Z)
        return -0.5 * (LOG_2PI + math.log(var) + q)

    def _log_likelihood(self, table: NumericTable, moments: GaussianMoments) -> float:
        """Plug-in log likelihood of the records summarised by ``moments`` under their own
        guarded Gaussian: ``-n/2 log(2 pi var) - m2 / (2 var)``."""
        gaussian = self._gaussian(table, moments)
        if gaussian is None:
            return 0.0
        var = gaussian[1]
        return -0.5 * moments.n * (LOG_2PI + math.log(var)) - moments.m2 / (2.0 * var)

    def _rate_terms(self):
        if self._zero:  # bags of words: one learner per rate
            return None
        from .rate_terms import GaussianTerms

        return GaussianTerms(self.alpha)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"alpha": 0.5}
        yield {"decay": 0.9}
        yield {"decay": "auto"}


