"""Tree-augmented classifiers on one shared statistic, the per-class pair counts.

- :class:`ModelAveragedTAN` — exact Bayesian model averaging over every tree- or
  forest-augmented naive Bayes structure, per record, and over representations of the
  numbers (intervals, a Gaussian per class); its state is a stack of members
  (:class:`~onlinebma.tan.members.TreeMemberStack`), one per (representation, rate).
- :class:`TAN` — Friedman, Geiger & Goldszmidt's tree-augmented naive Bayes (one maximum
  spanning tree on conditional mutual information), updated per record.
- :class:`AODE` — Webb, Boughton & Wang's averaged one-dependence estimators.
- :class:`~onlinebma.tan.base.BaseTAN` — the base of TAN and AODE: record reading, coding,
  numeric intervals (:mod:`~onlinebma.tan.numbers`: no value dropped), forgetting, batches
  and ``merge``.
"""

from .aode import AODE
from .base import BaseTAN
from .model_averaged import ModelAveragedTAN
from .tan import TAN

__all__ = ["AODE", "TAN", "BaseTAN", "ModelAveragedTAN"]
