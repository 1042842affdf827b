"""The Gaussian representation of numeric features in :class:`~onlinebma.tan.ModelAveragedTAN`:
one conjugate full-covariance Gaussian per class and forgetting rate.

A Gaussian member of the stack (:class:`~onlinebma.tan.members.TreeMemberStack`) models a
record ``x = (x_nom, x_num)`` of class ``c`` as

.. math:: P(c, x) = P_F(c, x_{nom}) \\; t_c(x_{num}),

with ``P_F`` the exact forest (tree) average over the **nominal** features, read from the
stack's counts and edge terms at the member's rate (the pair terms of nominal pairs are the same
whether numeric features are in the model or not, so the interval member of the same rate
shares them exactly), and ``t_c`` the posterior predictive of a Normal–Wishart model per class
over the numeric features: a multivariate Student t
(:class:`~onlinebma.stats.normal_wishart.FullStatistics`, BGe prior of
:class:`~onlinebma.stats.normal_wishart.NormalWishartPrior`, defaults; Geiger & Heckerman 1994,
Kuipers, Moffa & Heckerman 2014). It needs no cut points, so it predicts with the numbers from
the first record, while the interval members wait for theirs.

- **Which numeric features**: those observed in the first record learned that has a numeric
  value (the statistics have a fixed dimension), or those given cut points by ``fix_numeric``
  before (so that learners to be merged model the same ones); a numeric feature first seen
  later is read by the interval members only.
- **Missing values**: a record missing one of those features does not update the Gaussian
  statistics (complete-case learning, exact Bayes for the records learned; the forgetting
  still applies) and is predicted with the marginal Student t of its observed features.
- **Forgetting**: the statistics of every class are multiplied by the member's rate λ before
  each record is added (every record, whatever its class), as every count is.
"""

from __future__ import annotations

import numpy as np

from ..stats.normal_wishart import FullStatistics, NormalWishartPrior

__all__ = ["GAUSSIAN", "GaussianStatistics"]

#: The name of the Gaussian representation (``ModelAveragedTAN(numeric=GAUSSIAN)``).
GAUSSIAN = "Gaussian"


class GaussianStatistics:
    """Normal–Wishart statistics of the numeric features per forgetting rate and class.

    Parameters
    ----------
    rates : tuple of float
        The forgetting rate of each row (one per rate of the stack's Gaussian members).

    Attributes
    ----------
    features : list or None
        The numeric features modelled (``None`` until the first record with a numeric value).
    """

    def __init__(self, rates):
        self.rates = tuple(rates)
        self.features = None
        self._index: dict = {}
        self._by_class: list = []  # FullStatistics (rows,) per class code
        self._prior = None

    def choose(self, features) -> None:
        """Model these numeric features (before any is modelled; later calls change
        nothing): learners given the same features before learning can be merged."""
        if self.features is None and features:
            self.features = list(features)
            self._index = {f: i for i, f in enumerate(self.features)}
            self._prior = NormalWishartPrior(len(self.features))

    def vector(self, numeric) -> np.ndarray | None:
        """The record's values of the modelled features (NaN where missing), from its
        validated ``(feature, value)`` pairs; ``None`` before any feature is modelled or when
        none of them is observed."""
        if self.features is None:
            return None
        x = np.full(len(self.features), np.nan)
        seen = False
        for f, v in numeric:
            i = self._index.get(f)
            if i is not None:
                x[i] = v
                seen = True
        return x if seen else None

    def log_densities(self, x: np.ndarray | None, n_classes: int) -> np.ndarray:
        """``log t_c(x)`` of every row and class, ``(rows, n_classes)``; 0 without values."""
        out = np.zeros((len(self.rates), n_classes))
        if x is not None:
            self._grow(n_classes)
            for c, stats in enumerate(self._by_class):
                out[:, c] = stats.log_predictive(self._prior, x)
        return out

    def learn(self, numeric, c: int, n_classes: int) -> None:
        """Forget by each row's rate, then add the record (validated numeric pairs) to class
        code ``c``; the features are fixed at the first record with a numeric value."""
        if self.features is None:
            if not numeric:
                return
            self.choose([f for f, _ in numeric])
        self._grow(n_classes)
        x = self.vector(numeric)
        for k, stats in enumerate(self._by_class):
            # every class forgets; only class c learns (a missing value: none learns)
            if k == c and x is not None:
                stats.add(x, 1.0)
            else:
                stats.add(np.zeros(len(self.features)), 0.0)

    def _grow(self, n_classes: int) -> None:
        while self.features is not None and len(self._by_class) < n_classes:
            self._by_class.append(FullStatistics(len(self.features), (len(self.rates),),
                                                 np.array(self.rates)))

    def merge(self, other: GaussianStatistics, class_codes) -> None:
        """Pool ``other``'s records (the same features, in the same order); ``class_codes``
        maps each class code of ``other`` to its code here."""
        if other.features is None:
            return
        if self.features is None:
            self.features, self._index = list(other.features), dict(other._index)
            self._prior = other._prior
        elif self.features != other.features:
            raise ValueError(f"cannot merge: the Gaussian members model the numeric features "
                             f"{self.features} and {other.features}")
        self._grow(max(class_codes, default=-1) + 1)
        for j, stats in enumerate(other._by_class):
            self._by_class[class_codes[j]].merge(stats)
