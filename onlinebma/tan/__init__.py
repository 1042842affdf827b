"""Tree-augmented classifiers on one shared statistic, the per-class pair counts.

- :class:`~onlinebma.tan.base.BaseTAN` — the shared base: record reading, coding, numeric
  intervals (:mod:`~onlinebma.tan.binning`), forgetting, batches and ``merge``.
"""

from .base import BaseTAN

__all__ = ["BaseTAN"]
