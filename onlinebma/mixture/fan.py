"""FAN: naive Bayes with a hidden finite mixture over the features (Monti & Cooper 1999, §4)."""

from __future__ import annotations

from .base import PARAMETERS_DOC, MixtureClassifier

__all__ = ["FAN"]


class FAN(MixtureClassifier):
    __doc__ = f"""Finite-mixture-augmented naive Bayes (Monti & Cooper 1999, eq. 12).

    ``p(C, X) = p(C) sum_k p(h_k) prod_i p(X_i | C, h_k)``: a hidden variable ``H`` with ``K``
    values is a second parent of every feature, modelling the dependences among features that
    the class does not explain. With ``K = 1`` it is exactly
    :class:`onlinebma.naive_bayes.NaiveBayes` (same ``alpha``). Nominal features are
    multinomials with the Dirichlet estimates of eq. 5, numeric ones Gaussians per (class,
    component) with the naive Bayes variance smoothing and a variance guard. Missing values
    (and values unseen in training) are summed out, never imputed.

    The model is fitted by EM on all stored records for every K in ``1..max_components``, and
    the K with the best ``criterion`` is kept (``n_components_``, ``scores_``). As a River
    learner it refits from its buffer (see :class:`onlinebma.batch.BufferRefitClassifier`),
    warm-starting each K from the previous fit; ``fit(X, y)`` forgets earlier records and
    their fit.

    Parameters
    ----------
    {PARAMETERS_DOC}

    Attributes
    ----------
    n_components_
        The selected number of components.
    scores_
        ``{{K: criterion value}}`` of every candidate; ``criteria_`` has all four criteria, the
        log likelihood and the number of free parameters, ``objective_`` the EM objective
        after every M step of the kept run.
    class_prior_, weights_, means_, variances_, value_probabilities_
        Fitted parameters of the selected model: ``p(c)``; ``p(h_k)``; Gaussian means and variances
        ``(C, K, q)``; ``p(value | class, component)`` as ``(C, K)`` arrays per feature/value.

    Examples
    --------
    >>> from onlinebma.mixture import FAN
    >>> from onlinebma.datasets import UCIDataset
    >>> X, y = UCIDataset("house-votes-84").to_frame()
    >>> model = FAN(max_components=3, seed=0).fit(X[:300], y[:300])
    >>> model.n_components_ in (1, 2, 3)
    True
    >>> proba = model.predict_proba(X[300:])
    >>> proba.shape
    (135, 2)
    >>> bool(((proba.idxmax(axis=1) == y[300:]).mean() > 0.85))
    True

    As a stream learner:

    >>> model = FAN(max_components=2, seed=0)
    >>> model.predict_proba_one({{"sky": "sunny"}})
    {{}}
    >>> for x, label in [({{"sky": "sunny", "temp": 30.0}}, "beach"),
    ...                  ({{"sky": "rainy", "temp": 12.0}}, "home"),
    ...                  ({{"sky": "sunny", "temp": 25.0}}, "beach")]:
    ...     model.learn_one(x, label)
    >>> model.predict_one({{"sky": "sunny", "temp": 28.0}})
    'beach'

    """

    _class_parent = True

    @property
    def class_prior_(self):
        """``p(c)`` of every class code, ``(N_c + alpha) / (N + alpha C)``."""
        return self.selected_model().class_probabilities
