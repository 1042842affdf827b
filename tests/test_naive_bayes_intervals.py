"""Numbers read as intervals (the family's default): declared numeric features, and
``decay="auto"`` on the shared rate state against one learner per rate."""

import numpy as np
import pytest

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from tests.test_nb_numbers import assert_same, coded


@pytest.mark.parametrize("cls", [NaiveBayes, ModelAveragedNB, BMANB])
def test_a_declared_numeric_feature_is_cut_when_its_sample_completes(cls):
    """numeric_attributes: the replay counts the declared feature's intervals (its kept
    values are not refused as text), as a learner given the cut points from the first record."""
    rng = np.random.default_rng(31)
    data = [({"g": float(rng.normal(y)), "colour": "red" if rng.random() < 0.3 + 0.4 * y
              else "blue"}, y) for y in rng.integers(2, size=700).tolist()]
    learner = cls(numeric="8 intervals", numeric_attributes=["g"])
    for x, y in data:
        learner.learn_one(x, y)
    cuts = learner.cut_points()
    assert list(cuts) == ["g"]
    reference = cls(numeric="gaussian")
    for x, y in data:
        reference.learn_one(coded(x, cuts), y)
    assert_same(learner, reference, [x for x, _ in data[:20]], cuts)
