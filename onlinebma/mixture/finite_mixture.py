"""The finite-mixture (FM) classifier (Monti & Cooper 1999, §3.2; Kontkanen et al. 1996)."""

from __future__ import annotations

from .base import PARAMETERS_DOC, MixtureClassifier

__all__ = ["FiniteMixture"]


class FiniteMixture(MixtureClassifier):
    __doc__ = f"""Finite-mixture classifier (Monti & Cooper 1999, eq. 11).

    ``p(C, X) = sum_k p(h_k) p(C | h_k) prod_i p(X_i | h_k)``: the class is one more child of
    the hidden variable ``H``, so the mixture models the joint distribution of class and
    features and ``p(C | x)`` follows by summing ``H`` out. With ``K = 1`` it predicts the
    class prior. Estimation, model selection, missing values and the streaming behaviour are
    those of :class:`onlinebma.mixture.FAN`.

    Parameters
    ----------
    {PARAMETERS_DOC}

    Attributes
    ----------
    n_components_, scores_, criteria_, objective_
        As for :class:`~onlinebma.mixture.FAN`.
    weights_, class_given_component_, means_, variances_, value_probabilities_
        ``p(h_k)``; ``p(c | h_k)`` as ``(K, C)``; Gaussian means and variances ``(K, q)``;
        ``p(value | h_k)`` as ``(K,)`` arrays per feature and value.

    Examples
    --------
    >>> from onlinebma.mixture import FiniteMixture
    >>> from onlinebma.datasets import UCIDataset
    >>> X, y = UCIDataset("house-votes-84").to_frame()
    >>> model = FiniteMixture(max_components=4, seed=0).fit(X[:300], y[:300])
    >>> model.n_components_ > 1
    True
    >>> model.class_given_component_.shape == (model.n_components_, 2)
    True

    """

    _class_parent = False

    @classmethod
    def _unit_test_params(cls):
        # One set: hard EM and the window go through the same engine and adapter code, which
        # FAN's second set already puts through River's checks (keeps the suite fast).
        yield {"max_components": 2, "n_init": 1, "seed": 1}

    @property
    def class_given_component_(self):
        return self.selected_model().class_probabilities
