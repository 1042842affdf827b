"""The fitted attributes of the mixture model a fit selected (FAN or FM).

Read from the selected model's parameters, back in the features' original units; reading one
fits first if records are waiting. FAN and FM add their class distribution
(``class_prior_``, ``class_given_component_``).
"""

from __future__ import annotations

import numpy as np

from ..validation import NotFittedError

__all__ = ["FittedAttributes", "NotFittedError"]


class FittedAttributes:
    """Mixin of :class:`~onlinebma.mixture.base.MixtureClassifier`: its fitted attributes.

    Uses the classifier's ``_model`` (``(engine without records, params, table)`` of the
    selected K, ``None`` before a fit), ``_training_data()`` and ``_class_parent``.
    """

    def _fitted(self):
        """The selected model, fitting first if records are waiting; a
        :class:`NotFittedError` (the learner unchanged) before any record."""
        if self._model is None and self._n_learned:
            self._training_data()  # fits if records are waiting
        if self._model is None:
            raise NotFittedError(
                f"this {type(self).__name__} has not been fitted yet: learn records "
                "(learn_one, learn_many or fit) before reading its fitted attributes"
            )
        return self._model

    @property
    def weights_(self) -> np.ndarray:
        """Mixing proportions ``p(h_k)`` of the selected model."""
        return np.exp(self._fitted()[1].log_weights)

    @property
    def means_(self) -> np.ndarray:
        """Gaussian means: ``(C, K, q)`` for FAN, ``(K, q)`` for FM (columns: numeric features)."""
        s, p, _ = self._fitted()
        mean = p.mean * s.scale + s.center
        return mean.reshape(-1, p.k, mean.shape[1]) if self._class_parent else mean

    @property
    def variances_(self) -> np.ndarray:
        """Gaussian variances, shaped like :attr:`means_`."""
        s, p, _ = self._fitted()
        with np.errstate(over="ignore"):  # inf only for values beyond 1e154 in training
            var = p.var * s.scale**2
        return var.reshape(-1, p.k, var.shape[1]) if self._class_parent else var

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
