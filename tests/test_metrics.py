"""The streaming expected calibration error against its definition on arrays."""

import numpy as np
import pytest

from onlinebma.metrics import ExpectedCalibrationError


def test_equals_the_definition_on_random_predictions():
    rng = np.random.default_rng(0)
    ece, conf, right = ExpectedCalibrationError(bins=10), [], []
    for _ in range(500):
        p = float(rng.uniform(0.5, 1.0))
        y = "a" if rng.random() < p ** 2 else "b"  # overconfident on purpose
        ece.update(y, {"a": p, "b": 1 - p})
        conf.append(p)
        right.append(y == "a")
    conf, right = np.array(conf), np.array(right, dtype=float)
    idx = np.minimum((conf * 10).astype(int), 9)
    expected = sum((idx == b).mean() * abs(conf[idx == b].mean() - right[idx == b].mean())
                   for b in range(10) if (idx == b).any())
    assert ece.get() == pytest.approx(expected, abs=1e-12)
    assert ece.get() > 0.05


def test_empty_predictions_and_bad_bins():
    ece = ExpectedCalibrationError()
    assert ece.update("a", {}).get() == 0.0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="bins"):
            ExpectedCalibrationError(bins=bad)
