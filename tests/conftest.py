"""Fixtures shared by the test files of the learners, the batch adapter and Dask.

The data sets are read once per session; tests must not modify the frames they get (copy
first, as ``X.copy()``).
"""

import numpy as np
import pytest

from onlinebma.datasets import UCIDataset


def _grouped(name: str, last):
    """``name`` with its rows grouped by class (``last`` at the end), in a stable order."""
    X, y = UCIDataset(name).to_frame()
    order = np.argsort(y.to_numpy() == last, kind="stable")
    return X.iloc[order].reset_index(drop=True), y.iloc[order].reset_index(drop=True)


@pytest.fixture(scope="session")
def crx():
    """All of crx (mixed nominal/numeric records with missing values), rows grouped by class:
    partitions and shards meet the labels in a fixed order, and some hold one class only."""
    return _grouped("crx", True)  # "+" (approved) is True


@pytest.fixture(scope="session")
def votes():
    """All of house-votes-84 (nominal records with missing values), grouped by class."""
    return _grouped("house-votes-84", False)  # democrat is False


@pytest.fixture(scope="session")
def iris():
    """Iris as it comes: four numeric features, three classes."""
    return UCIDataset("iris").to_frame()
