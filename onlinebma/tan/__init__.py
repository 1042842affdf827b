"""Tree-augmented classifiers on one shared statistic, the per-class pair counts.

- :class:`ModelAveragedTAN` — exact Bayesian model averaging over every tree- or
  forest-augmented naive Bayes structure, per record.
- :class:`~onlinebma.tan.base.BaseTAN` — the shared base: record reading, coding, numeric
  intervals (:mod:`~onlinebma.tan.binning`), forgetting, batches and ``merge``.
"""

from .base import BaseTAN
from .model_averaged import ModelAveragedTAN

__all__ = ["BaseTAN", "ModelAveragedTAN"]
