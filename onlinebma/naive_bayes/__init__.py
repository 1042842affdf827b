"""Naive Bayes learners that update exactly, record by record.

- :class:`NaiveBayes` — all features, Dirichlet-smoothed parameters: the baseline.
- :class:`ModelAveragedNB` — exact averaging over all 2^N feature-arc structures with
  marginal likelihoods (Dash & Cooper 2002).
- :class:`BMANB` — exact averaging over all 2^N feature subsets with plug-in likelihoods and
  the Γ^(N+1) inclusion prior (Wu, Sanner & Oliveira 2015).
"""

from .base import BaseNB
from .bma import BMANB
from .counts import COUNTS
from .model_averaged import ModelAveragedNB
from .naive import NaiveBayes

__all__ = ["BMANB", "COUNTS", "BaseNB", "ModelAveragedNB", "NaiveBayes"]
