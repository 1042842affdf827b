"""The mixture model a fit selected (FAN or FM), read in the features' original units.

:class:`SelectedMixture` holds the selected model's structure, parameters and table; the
classifiers' fitted attributes (``weights_``, ``means_``, ``variances_``,
``value_probabilities_``, and FAN's ``class_prior_`` or FM's ``class_given_component_``)
are read from it.
"""

from __future__ import annotations

import numpy as np

from ..validation import NotFittedError

__all__ = ["NotFittedError", "SelectedMixture"]


class SelectedMixture:
    """The parameters of a selected mixture model, back in the features' original units.

    Parameters
    ----------
    structure : onlinebma.mixture.em.EMEngine
        The engine of the selected model without its records (its ``center`` and ``scale``
        map the standardised numeric features back).
    params : onlinebma.mixture.arrays.Params
        The selected model's parameters.
    table : onlinebma.table.Table
        The table the model was fitted on (its nominal features and their values).
    class_parent : bool
        ``True`` for FAN (features depend on class and component), ``False`` for FM.

    Examples
    --------
    >>> import pandas as pd
    >>> from onlinebma.mixture import FAN
    >>> X = pd.DataFrame({"temp": [30.0, 12.0, 25.0, 11.0]})
    >>> model = FAN(max_components=1, seed=0).fit(X, pd.Series(["a", "b", "a", "b"]))
    >>> selected = model.selected_model()
    >>> selected.means.ravel().tolist()   # per class: the class means of temp
    [27.5, 11.5]
    >>> selected.weights.tolist()
    [1.0]
    """

    def __init__(self, structure, params, table, class_parent: bool):
        self.structure = structure
        self.params = params
        self.table = table
        self.class_parent = class_parent

    @property
    def weights(self) -> np.ndarray:
        """Mixing proportions ``p(h_k)``."""
        return np.exp(self.params.log_weights)

    @property
    def class_probabilities(self) -> np.ndarray:
        """FAN: ``p(c)`` of every class code; FM: ``p(c | h_k)`` as ``(K, C)``."""
        return np.exp(self.params.log_class)

    def _by_class(self, values: np.ndarray) -> np.ndarray:
        """``values`` of the components, ``(C, K, q)`` for FAN (rows class-major)."""
        return values.reshape(-1, self.params.k, values.shape[1]) if self.class_parent \
            else values

    @property
    def means(self) -> np.ndarray:
        """Gaussian means: ``(C, K, q)`` for FAN, ``(K, q)`` for FM (columns: numeric features)."""
        return self._by_class(self.params.mean * self.structure.scale + self.structure.center)

    @property
    def variances(self) -> np.ndarray:
        """Gaussian variances, shaped like :attr:`means`."""
        with np.errstate(over="ignore"):  # inf only for values beyond 1e154 in training
            return self._by_class(self.params.var * self.structure.scale**2)

    @property
    def value_probabilities(self) -> dict:
        """``{feature: {value: probabilities}}`` of every nominal value seen in training.

        FAN: a ``(C, K)`` array ``p(value | class, component)``; FM: ``(K,)`` ``p(value | h)``.
        """
        p = self.params
        theta = np.exp(p.log_theta)
        out = {}
        start = 0
        for name, values in zip(self.table.nominal_features, self.table.values):
            cols = theta[:, start:start + len(values)].T
            start += len(values)
            if values:
                out[name] = {v: col.reshape(-1, p.k) if self.class_parent else col
                             for v, col in zip(values, cols)}
        return out
