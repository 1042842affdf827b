"""How a numeric feature is read once its sample is known: per value, or by interval members.

:class:`NumericSettings` holds the choices (the grids' resolutions, MDL or not, the sample
size, the rule for values); :func:`read_sample` decides a feature's reading from its sample
(:class:`~onlinebma.numeric.values.ValueCodes` when
:func:`~onlinebma.numeric.values.reads_as_values` holds, else
:class:`~onlinebma.numeric.grids.Grids`); :func:`read_table` does it for every numeric column
of a whole table, the table being each feature's sample (``learn_many`` takes its cut points
from the table itself), and :func:`code_column` codes a column vectorised.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> columns = {"rating": rng.integers(1, 6, 300).astype(float), "size": rng.normal(size=300)}
>>> labels = rng.integers(0, 2, 300)
>>> readings = read_table(columns, labels, n_classes=2)
>>> type(readings["rating"]).__name__, type(readings["size"]).__name__
('ValueCodes', 'Grids')
>>> code_column(readings["size"], columns["size"]).shape  # 5 grids and MDL
(300, 6)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_bool, check_int
from .cuts import distinct_counts, observed_sample
from .grids import DEFAULT_RESOLUTIONS, Grids, check_resolutions
from .values import ValueCodes, reads_as_values

__all__ = ["NumericSettings", "code_column", "read_sample", "read_table"]


@dataclass(frozen=True)
class NumericSettings:
    """The choices that decide how numeric features are read.

    Parameters
    ----------
    resolutions : tuple of int, default (3, 5, 8, 16, 32)
        One equal-frequency grid per number of intervals (distinct, at least 2).
    class_aware : bool, default True
        Add the MDL cut points as a member.
    sample_size : int, default 500
        A feature's cut points are fixed from its first ``sample_size`` values in a stream
        (:class:`~onlinebma.numeric.pending.PendingRecords` keeps the records until then). 500
        gives the 32-interval grid about 15 values per interval.
    max_values : int, default 16
        A feature is read per value when its sample has at most this many distinct values...
    min_count : int, default 2
        ... each occurring at least this many times (:mod:`onlinebma.numeric.values`).

    Examples
    --------
    >>> NumericSettings(resolutions=(4, 8)).resolutions
    (4, 8)
    >>> NumericSettings(resolutions=(1,))
    Traceback (most recent call last):
    ...
    ValueError: resolutions must be distinct integers >= 2, got (1,)
    """

    resolutions: tuple = DEFAULT_RESOLUTIONS
    class_aware: bool = True
    sample_size: int = 500
    max_values: int = 16
    min_count: int = 2

    def __post_init__(self):
        check_resolutions(self.resolutions)
        check_bool("class_aware", self.class_aware)
        check_int("sample_size", self.sample_size, 1)
        check_int("max_values", self.max_values, 1)
        check_int("min_count", self.min_count, 1)


def read_sample(values, labels, n_classes: int, settings: NumericSettings | None = None):
    """The reading of a feature from its sample.

    Parameters
    ----------
    values : array-like of float
        The feature's sample, in arrival order; NaN where missing.
    labels : array-like of int
        The class code of each sampled value.
    n_classes : int
        The number of classes.
    settings : NumericSettings or None, default None
        ``None``: ``NumericSettings()``.

    Returns
    -------
    ValueCodes or Grids
        Per value when :func:`~onlinebma.numeric.values.reads_as_values` holds for the sample.

    Raises
    ------
    ValueError
        If the sample has no observed value, a value is infinite or a label is not a class code.
    """
    settings = NumericSettings() if settings is None else settings
    x, labels = observed_sample(values, labels, n_classes)
    distinct, counts = distinct_counts(x)
    if distinct.size == 0:
        raise ValueError("the sample has no observed value: nothing to read a feature from")
    if reads_as_values(counts, settings.max_values, settings.min_count):
        return ValueCodes.from_sample(x, labels, n_classes, settings.max_values)
    class_counts = np.zeros((distinct.size, n_classes), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(distinct, x), labels), 1)
    return Grids.from_sample(distinct, class_counts, settings.resolutions, settings.class_aware)


def read_table(columns: dict, labels, n_classes: int,
               settings: NumericSettings | None = None) -> dict:
    """The reading of every numeric column of a table, each column being its feature's sample.

    Parameters
    ----------
    columns : dict
        ``{feature: float array}``, NaN where missing, all of the table's length (for a
        DataFrame validated by :class:`~onlinebma.records.FeatureKinds`, each numeric column
        through :func:`~onlinebma.records.numeric_values`).
    labels : array-like of int
        The class code of each row.
    n_classes : int
        The number of classes; every row's label is below it.
    settings : NumericSettings or None, default None
        The settings every column is read with; ``None``: ``NumericSettings()``.

    Returns
    -------
    dict
        ``{feature: ValueCodes or Grids}`` for the columns with an observed value.

    Notes
    -----
    A learner that already keeps records of a feature
    (:class:`~onlinebma.numeric.pending.PendingRecords`, from ``learn_one`` before the table)
    reads it from those values followed by the table's column (:func:`read_sample` of the
    concatenation, labels alike), then replays the kept records and counts the table with that
    reading.
    """
    labels = np.asarray(labels)
    out = {}
    for f, column in columns.items():
        column = np.asarray(column, dtype=float)
        if column.shape != labels.shape:
            raise ValueError(f"column {f!r} has shape {column.shape}, the labels {labels.shape}")
        if not np.isnan(column).all():
            out[f] = read_sample(column, labels, n_classes, settings)
    return out


def code_column(reading, column) -> np.ndarray:
    """Every member's code of each value of a column: ``(len(column), n_members)`` ints for
    :class:`Grids`, ``(len(column), 1)`` for :class:`ValueCodes` (every member reads the
    code of the value, or of its gap for a value not in the sample); ``-1`` where missing.

    Parameters
    ----------
    reading : ValueCodes or Grids
        The feature's reading.
    column : array-like of float
        Its values, NaN where missing.

    Returns
    -------
    np.ndarray
    """
    if isinstance(reading, Grids):
        return reading.code_many(column)
    if isinstance(reading, ValueCodes):
        return reading.code_many(column)[:, None]
    raise TypeError(f"reading must be Grids or ValueCodes, got {type(reading).__name__}")
