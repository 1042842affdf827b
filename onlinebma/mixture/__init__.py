"""Finite-mixture classifiers of Monti & Cooper (1999): FAN and the finite-mixture classifier.

- :class:`FAN` — finite-mixture-augmented naive Bayes, ``p(C) sum_k p(h_k) prod_i p(X_i | C, h_k)``.
- :class:`FiniteMixture` — the FM classifier, ``sum_k p(h_k) p(C | h_k) prod_i p(X_i | h_k)``.

Both fit the hidden variable by EM or classification EM (:mod:`~onlinebma.mixture.em`) and
choose its number of values by BIC, AIC, Cheeseman–Stutz or ICL
(:mod:`~onlinebma.mixture.criteria`). They are River classifiers through the shared batch
adapter (:class:`onlinebma.batch.BufferRefitClassifier`) and have pandas ``fit``/``predict_proba``.
"""

from .fan import FAN
from .finite_mixture import FiniteMixture
from .fitted import NotFittedError

__all__ = ["FAN", "FiniteMixture", "NotFittedError"]
