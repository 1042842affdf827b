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
- **Magnitude**: as every learner, the stack refuses to learn a numeric value beyond
  :data:`~onlinebma.stats.gaussian.MAX_ABS_VALUE` (its square must stay finite); any finite
  value is predicted (the Student t's quadratic form is kept in log space).
- **Forgetting**: the statistics of every class are multiplied by the member's rate λ before
  each record is added (every record, whatever its class), as every count is.
"""

from __future__ import annotations

import numpy as np

from ..stats.normal_wishart import FullStatistics, NormalWishartPrior

__all__ = ["GAUSSIAN", "GaussianStatistics", "NumericFeatures"]

#: The name of the Gaussian representation (``ModelAveragedTAN(numeric=GAUSSIAN)``).
GAUSSIAN = "Gaussian"


class NumericFeatures:
    """The numeric features a Gaussian representation models, chosen once (module
    docstring: *Which numeric features*), and a record's vector of their values.

    Parameters
    ----------
    rates : tuple of float
        The forgetting rate of each row of the statistics (one per rate of the stack's
        members of this representation).

    Attributes
    ----------
    features : list or None
        The numeric features modelled (``None`` until the first record with a numeric value).
    """

    def __init__(self, rates):
        self.rates = tuple(rates)
        self.features = None
        self._index: dict = {}
        self._last_vector = None  # (numeric pairs, their vector): see vector

    def __getstate__(self):  # the last vector is derived, not state
        return {**self.__dict__, "_last_vector": None}

    def choose(self, features) -> None:
        """Model these numeric features (before any is modelled; later calls change
        nothing): learners given the same features before learning can be merged."""
        if self.features is None and features:
            self.features = list(features)
            self._index = {f: i for i, f in enumerate(self.features)}
            self._start()

    def _start(self) -> None:
        """Lay out the statistics once the features are chosen."""
        raise NotImplementedError

    def vector(self, numeric) -> np.ndarray | None:
        """The record's values of the modelled features (NaN where missing, read only), from
        its validated ``(feature, value)`` pairs; ``None`` before any feature is modelled or
        when none of them is observed. The vector of the last list of pairs is kept for that
        same list (the features, once chosen, never change): a record's prediction and its
        learning build it once."""
        if self.features is None:
            return None
        last = self._last_vector
        if last is not None and last[0] is numeric:
            return last[1]
        values = [np.nan] * len(self.features)
        seen = False
        for f, v in numeric:
            i = self._index.get(f)
            if i is not None:
                values[i] = v
                seen = True
        x = None
        if seen:
            x = np.array(values, dtype=float)
            x.flags.writeable = False
        self._last_vector = (numeric, x)
        return x


class GaussianStatistics(NumericFeatures):
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
        super().__init__(rates)
        self._stats = None  # FullStatistics (rows, classes)
        self._prior = None

    def _start(self) -> None:
        self._prior = NormalWishartPrior(len(self.features))
        # one class slot to start with (grown as classes come)
        self._stats = FullStatistics(len(self.features), (len(self.rates), 1),
                                     np.array(self.rates)[:, None])

    def log_densities(self, x: np.ndarray | None, n_classes: int) -> np.ndarray:
        """``log t_c(x)`` of every row and class, ``(rows, n_classes)``; 0 without values."""
        if x is None:
            return np.zeros((len(self.rates), n_classes))
        self._grow(n_classes)
        return self._stats.log_predictive(self._prior, x)[:, :n_classes]

    def learn(self, numeric, c: int, n_classes: int) -> None:
        """Forget by each row's rate, then add the record (validated numeric pairs) to class
        code ``c``; the features are fixed at the first record with a numeric value."""
        if self.features is None:
            self.choose([f for f, _ in numeric])
            if self.features is None:
                return
        self._grow(n_classes)
        x = self.vector(numeric)
        weight = np.zeros(self._stats.shape)  # every class slot forgets
        if x is None:
            x = np.zeros(len(self.features))  # no value: only the forgetting
        else:
            weight[:, c] = 1.0  # a record missing a value is not learned (complete cases)
        self._stats.add(x, weight)

    def learn_many(self, values: np.ndarray, classes: np.ndarray, n_classes: int) -> None:
        """Add a table's records at once (the features chosen already; no forgetting):
        equal to :meth:`learn` on each row (up to rounding; a row without an observed value
        adds nothing, one missing a value is not learned either).

        Parameters
        ----------
        values : np.ndarray
            ``(rows, features)``: the modelled features' values, in :attr:`features` order,
            NaN where missing.
        classes : np.ndarray
            Each row's class code.
        n_classes : int
            The number of classes known (at least every code plus one).
        """
        if any(rate != 1 for rate in self.rates):
            raise ValueError("learn_many adds records to statistics that forget nothing")
        self._grow(n_classes)
        weights = np.zeros((len(values),) + self._stats.shape)
        weights[np.arange(len(values)), :, classes] = 1.0
        self._stats.add_many(values, weights)

    @property
    def statistics(self):
        """The statistics, a :class:`~onlinebma.stats.normal_wishart.FullStatistics` of
        shape ``(rates, classes)`` (``None`` before any feature is modelled; read only)."""
        return self._stats

    def _grow(self, n_classes: int) -> None:
        if self._stats is not None and self._stats.shape[1] < n_classes:
            self._stats.grow(1, n_classes)

    def merge(self, other: GaussianStatistics, class_codes) -> None:
        """Pool ``other``'s records (the same features, in the same order); ``class_codes``
        maps each class code of ``other`` to its code here, which must be the same code (the
        statistics are laid out by class code: a ValueError otherwise)."""
        if other.features is None:
            return
        if list(class_codes) != list(range(len(class_codes))):
            raise ValueError("cannot merge Gaussian members whose classes were first seen in "
                             "different orders (their statistics are laid out by class)")
        if self.features is None:
            self.choose(other.features)
        elif self.features != other.features:
            raise ValueError(f"cannot merge: the Gaussian members model the numeric features "
                             f"{self.features} and {other.features}")
        theirs = other.statistics.copy()
        k = max(self._stats.shape[1], theirs.shape[1])
        self._grow(k)
        theirs.grow(1, k)
        self._stats.merge(theirs)
