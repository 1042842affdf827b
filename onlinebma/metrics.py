"""Expected calibration error, as a streaming metric.

River scores accuracy and log loss; neither says whether a probability means what it says.
:class:`ExpectedCalibrationError` does: the predictions' top-label probabilities are put in
``bins`` equal-width bins, and the error is the average, weighted by the bins' sizes, of the
gap between a bin's mean probability and how often its top labels were right.

>>> from onlinebma.metrics import ExpectedCalibrationError
>>> ece = ExpectedCalibrationError()
>>> for y, proba in [("a", {"a": 0.9, "b": 0.1}), ("b", {"a": 0.8, "b": 0.2}),
...                  ("a", {"a": 0.7, "b": 0.3})]:
...     _ = ece.update(y, proba)
>>> round(ece.get(), 4)   # bins 0.9: right (gap 0.1), 0.8: wrong (0.8), 0.7: right (0.3)
0.4
"""

from __future__ import annotations

__all__ = ["ExpectedCalibrationError"]


class ExpectedCalibrationError:
    """Expected calibration error of top-label probabilities, updated one prediction at a time.

    Parameters
    ----------
    bins
        Number of equal-width probability bins (10, as is usual).
    """

    def __init__(self, bins: int = 10):
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
            raise ValueError(f"bins must be a positive integer, got {bins!r}")
        self.bins = bins
        self._n = [0] * bins
        self._confidence = [0.0] * bins
        self._correct = [0] * bins

    def update(self, y_true, proba: dict) -> ExpectedCalibrationError:
        """Count one prediction (a ``{label: probability}`` dict); an empty one is skipped."""
        if not proba:
            return self
        top = max(proba, key=proba.get)
        p = float(proba[top])
        b = min(int(p * self.bins), self.bins - 1)
        self._n[b] += 1
        self._confidence[b] += p
        self._correct[b] += top == y_true
        return self

    def get(self) -> float:
        """The error, in [0, 1] (0.0 before any prediction)."""
        total = sum(self._n)
        if not total:
            return 0.0
        return sum(abs(c - k) for c, k in zip(self._confidence, self._correct)) / total
