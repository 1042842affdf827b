"""Cut points of one numeric feature from a sample: point masses, equal-frequency grids, MDL.

Everything here works on a sample given as its **distinct values** in increasing order with
the **number of times** each occurs (:func:`distinct_counts` turns raw values into that), so
that several grids come from one shared sorted sample and a feature first read per value
(:mod:`onlinebma.numeric.values`) can be cut from its value counts.

Intervals are ``(a, b]`` (:mod:`onlinebma.numeric`): a value equal to a cut point falls in the
lower interval, interval ``i`` of sorted cuts ``c`` is ``(c[i-1], c[i]]`` with ``c[-1] = -inf``
and ``c[len(c)] = +inf``, and :func:`onlinebma.table.interval_index` (``side="left"``) finds it.

**Point masses.** A value that holds more than a share ``s`` of the sample (and occurs at least
twice: in a tiny sample a value seen once is no evidence of a mass) is a point mass
(:func:`point_masses`). An interval of its own is ``(a⁻, a]`` where ``a⁻ = nextafter(a, -inf)``
is the float just below ``a``: it holds ``a`` and nothing else (no float lies between ``a⁻``
and ``a``; :func:`mass_cuts`). A grid of ``B`` intervals gives its own interval to the values
holding more than ``1 / B`` of the sample. All members of a feature share one set of point
masses (``s = 1 / max(resolutions)`` in :class:`~onlinebma.numeric.grids.Grids`), which every
member measures by probability, inside its interval where the mass has none of its own
(:func:`within_shares`), and every other value by density: members that disagreed on which
values are masses would give a value a probability in one and a density in another, which
cannot be compared.

**Equal-frequency grids with point masses** (:func:`equal_frequency_cuts`): the values that are
not the grid's own point masses (the *free* values, ``n_free`` of the sample's ``n`` records)
are split into ``B' = max(1, B - n_masses)`` groups of nearly equal counts: for
``k = 1 .. B'-1`` the cut goes at the boundary between two adjacent free distinct values whose
cumulative count is nearest to ``k n_free / B'`` (the lower one on a tie), at the midpoint of
those two values (as MDL's cuts are). A boundary across which an own point mass lies needs no
cut (the point mass's own cuts already separate the two sides). The own point masses then get
their intervals. On a sample that is 0 in 92 % of records, a grid of 5 has the interval ``{0}``
and 4 groups of the positive values (plus an empty interval below 0, for values that may come
later), where plain equal-frequency cuts put every cut at 0.

**Class-aware cut points** (:func:`class_cuts`): the Fayyad–Irani MDL cut points of
:func:`onlinebma.preprocessing.mdl_cut_points` (Weka's), computed on the sample (plus, if
given, intervals of their own for some point masses; :class:`~onlinebma.numeric.grids.Grids`
gives none: its MDL member is Weka's rule unchanged).

**Widths** (:func:`extent`, :func:`interval_widths`): for densities uniform within an interval,
the two end intervals, unbounded, are measured within the sample's range widened on each side
by the sample's mean gap between adjacent distinct values, ``g = (max - min) / (d - 1)`` for
``d`` distinct values (``g = max(1, |min|)`` when ``d = 1``): a value beyond the last sample
value is taken to lie within about one more such gap. A member's density is normalised over
that extent. A value outside it still falls in its end interval and is given that interval's
density, which is then a score rather than part of a normalised density (it would not
integrate over the unbounded tail); such values are rare (a continuous feature has on average
``2 / (n + 1)`` of its records beyond the range of a sample of ``n``, fewer beyond the extent),
and all members of a feature share the extent and this rule, so they are compared on the same
footing.

>>> import numpy as np
>>> values, counts = distinct_counts(np.array([0.0] * 46 + [1.0, 2.0, 3.0, 4.0]))
>>> point_masses(values, counts, share=1 / 5)
array([0.])
>>> cuts = equal_frequency_cuts(values, counts, 3, np.array([0.0]))
>>> cuts.tolist() == [np.nextafter(0.0, -1.0), 0.0, 2.5]
True
>>> interval_index(np.array([-1.0, 0.0, 1.0, 2.5, 2.6]), cuts).tolist()
[0, 1, 2, 2, 3]
"""

from __future__ import annotations

import numpy as np

from ..preprocessing import mdl_cut_points
from ..table import interval_index
from ..validation import check_int

__all__ = ["class_cuts", "distinct_counts", "equal_frequency_cuts", "extent", "interval_index",
           "interval_widths", "mass_cuts", "observed_sample", "point_masses", "within_shares"]


def distinct_counts(values) -> tuple[np.ndarray, np.ndarray]:
    """The distinct observed values of a sample in increasing order and how often each occurs.

    Parameters
    ----------
    values : array-like of float
        Raw sample values; NaN marks a missing value and is skipped.

    Returns
    -------
    tuple of np.ndarray
        ``(values, counts)``: float64 distinct values, int64 counts.

    Raises
    ------
    ValueError
        If a value is infinite (records refuse infinities already; this guards direct calls).

    >>> distinct_counts([2.0, float("nan"), 1.0, 2.0])
    (array([1., 2.]), array([1, 2]))
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[~np.isnan(x)]
    if np.isinf(x).any():
        raise ValueError("a numeric sample must not contain infinite values")
    u, m = np.unique(x, return_counts=True)
    return u, m.astype(np.int64)


def observed_sample(values, labels, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """A labelled sample, checked, without its missing values.

    Parameters
    ----------
    values : array-like of float
        Sample values in arrival order; NaN marks a missing value (dropped).
    labels : array-like of int
        The class code of each value.
    n_classes : int
        The number of classes: every label is below it.

    Returns
    -------
    tuple of np.ndarray
        ``(values, labels)`` of the observed values, in arrival order.

    Raises
    ------
    ValueError
        If the arrays differ in shape, a value is infinite or a label is not a class code.

    >>> observed_sample([1.0, float("nan"), 2.0], [0, 1, 1], n_classes=2)
    (array([1., 2.]), array([0, 1]))
    """
    x = np.asarray(values, dtype=float)
    labels = np.asarray(labels)
    if x.ndim != 1 or labels.shape != x.shape:
        raise ValueError(f"values and labels must be 1-d of one length, got shapes {x.shape} "
                         f"and {labels.shape}")
    check_int("n_classes", n_classes, 1)
    if labels.size and (labels.dtype.kind not in "iu" or labels.min() < 0
                        or labels.max() >= n_classes):
        raise ValueError(f"labels must be class codes in 0..{n_classes - 1}")
    if np.isinf(x).any():
        raise ValueError("a numeric sample must not contain infinite values")
    present = ~np.isnan(x)
    return x[present], labels[present].astype(np.int64)


def _check_sample(values: np.ndarray, counts: np.ndarray) -> None:
    if values.ndim != 1 or counts.shape != values.shape:
        raise ValueError(f"values and counts must be 1-d arrays of one length, got shapes "
                         f"{values.shape} and {counts.shape}")
    if values.size and not (np.all(np.diff(values) > 0) and np.isfinite(values).all()):
        raise ValueError("values must be finite, distinct and increasing (see distinct_counts)")
    if (counts <= 0).any():
        raise ValueError("counts must be positive")


def point_masses(values: np.ndarray, counts: np.ndarray, share: float) -> np.ndarray:
    """The values that hold more than ``share`` of the sample (each gets an interval of its own).

    Parameters
    ----------
    values : np.ndarray
        Distinct sample values, increasing.
    counts : np.ndarray
        How often each value occurs (positive).
    share : float
        A value is a point mass when its count exceeds ``share * counts.sum()`` (and is at
        least 2: a value seen once is no evidence of a mass); ``0 < share <= 1``.

    Returns
    -------
    np.ndarray
        The point masses, increasing.

    >>> point_masses(np.array([1.0, 2.0, 3.0]), np.array([5, 3, 2]), share=0.25)
    array([1., 2.])
    """
    values, counts = np.asarray(values, dtype=float), np.asarray(counts)
    _check_sample(values, counts)
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    return values[(counts > share * counts.sum()) & (counts >= 2)]


def mass_cuts(masses: np.ndarray) -> np.ndarray:
    """The cut points that give each point mass ``a`` the interval ``(a⁻, a]`` of ``a`` alone.

    >>> mass_cuts(np.array([1.0])).tolist() == [np.nextafter(1.0, -np.inf), 1.0]
    True
    """
    masses = np.asarray(masses, dtype=float)
    return np.unique(np.concatenate([np.nextafter(masses, -np.inf), masses]))


def equal_frequency_cuts(values: np.ndarray, counts: np.ndarray, n_intervals: int,
                         masses: np.ndarray) -> np.ndarray:
    """Equal-frequency cut points of the free values, plus an interval for each point mass.

    Parameters
    ----------
    values : np.ndarray
        Distinct sample values, increasing.
    counts : np.ndarray
        How often each value occurs.
    n_intervals : int
        The grid's resolution ``B`` (at least 1): the free values are split into
        ``max(1, B - len(masses))`` groups (fewer when they have fewer distinct values).
    masses : np.ndarray
        The point masses that get intervals of their own (values of ``values``), usually
        :func:`point_masses` with ``share = 1 / B``.

    Returns
    -------
    np.ndarray
        Sorted distinct cut points (module docstring: the rule exactly).

    >>> equal_frequency_cuts(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 1]), 2,
    ...                      np.array([]))
    array([2.5])
    """
    values, counts = np.asarray(values, dtype=float), np.asarray(counts)
    _check_sample(values, counts)
    if isinstance(n_intervals, bool) or not isinstance(n_intervals, (int, np.integer)) \
            or n_intervals < 1:
        raise ValueError(f"n_intervals must be an integer >= 1, got {n_intervals!r}")
    masses = np.asarray(masses, dtype=float)
    is_mass = np.isin(values, masses)
    free, free_counts = values[~is_mass], counts[~is_mass]
    groups = max(1, n_intervals - masses.size)
    cuts = [mass_cuts(masses)]
    if free.size > 1 and groups > 1:
        running = np.cumsum(free_counts)
        cum = running[:-1]  # records up to each boundary between adjacent free values
        targets = running[-1] * np.arange(1, groups) / groups
        above = np.minimum(np.searchsorted(cum, targets), cum.size - 1)
        below = np.maximum(above - 1, 0)
        nearer_below = np.abs(cum[below] - targets) <= np.abs(cum[above] - targets)
        boundary = np.unique(np.where(nearer_below, below, above))
        lo, hi = free[boundary], free[boundary + 1]
        # a point mass between lo and hi already separates them
        crossed = np.searchsorted(masses, lo, side="right") < np.searchsorted(masses, hi)
        lo, hi = lo[~crossed], hi[~crossed]
        cuts.append(_midpoints(lo, hi))
    return np.unique(np.concatenate(cuts))


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(lo + hi) / 2``, or ``lo`` where rounding reaches ``hi`` (adjacent floats): a cut
    strictly below ``hi`` and at least ``lo``, so ``lo`` and ``hi`` fall on its two sides."""
    mid = lo + (hi - lo) / 2
    return np.where(mid < hi, mid, lo)


def class_cuts(values: np.ndarray, class_counts: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Fayyad–Irani MDL cut points of the sample (Weka's), plus an interval per point mass.

    Parameters
    ----------
    values : np.ndarray
        Distinct sample values, increasing.
    class_counts : np.ndarray
        Integer counts of shape ``(len(values), n_classes)``: how often each value occurs with
        each class.
    masses : np.ndarray
        Point masses to give intervals of their own (may be empty).

    Returns
    -------
    np.ndarray
        Sorted distinct cut points: those of
        :func:`onlinebma.preprocessing.mdl_cut_points` on the sample expanded to its records,
        with :func:`mass_cuts` of ``masses``.

    >>> class_cuts(np.array([1.0, 2.0, 3.0, 4.0]), np.array([[3, 0], [3, 0], [0, 3], [0, 3]]),
    ...            np.array([]))
    array([2.5])
    """
    values = np.asarray(values, dtype=float)
    class_counts = np.asarray(class_counts)
    if class_counts.ndim != 2 or class_counts.shape[0] != values.size:
        raise ValueError(f"class_counts must have shape (len(values), n_classes), got "
                         f"{class_counts.shape} for {values.size} values")
    if class_counts.dtype.kind not in "iu" or (class_counts < 0).any():
        raise ValueError("class_counts must be non-negative integers")
    _check_sample(values, class_counts.sum(axis=1))
    n_classes = class_counts.shape[1]
    x = np.concatenate([np.repeat(values, class_counts[:, c]) for c in range(n_classes)])
    y = np.repeat(np.arange(n_classes), class_counts.sum(axis=0))
    mdl = mdl_cut_points(x, y, max(1, n_classes))
    return np.unique(np.concatenate([mdl, mass_cuts(masses)]))


def extent(values: np.ndarray) -> tuple[float, float]:
    """The range within which the end intervals are measured: the sample's range widened by
    its mean gap between adjacent distinct values on each side (module docstring).

    Parameters
    ----------
    values : np.ndarray
        Distinct sample values, increasing (at least one).

    Returns
    -------
    tuple of float
        ``(low, high)``.

    >>> extent(np.array([0.0, 1.0, 4.0]))
    (-2.0, 6.0)
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError("the extent of an empty sample is not defined")
    lo, hi = float(values[0]), float(values[-1])
    gap = (hi - lo) / (values.size - 1) if values.size > 1 else max(1.0, abs(lo))
    return lo - gap, hi + gap


def interval_widths(cuts: np.ndarray, low: float, high: float) -> np.ndarray:
    """The width of each interval, the end intervals cut at ``low`` and ``high`` (:func:`extent`).

    Parameters
    ----------
    cuts : np.ndarray
        Sorted distinct cut points.
    low : float
        Lower end of the first interval, below every cut.
    high : float
        Upper end of the last interval, above every cut.

    Returns
    -------
    np.ndarray
        ``len(cuts) + 1`` positive floats.

    >>> interval_widths(np.array([1.0, 2.5]), 0.0, 5.0).tolist()
    [1.0, 1.5, 2.5]
    """
    cuts = np.asarray(cuts, dtype=float)
    if cuts.size and not (low < cuts[0] and cuts[-1] < high):
        raise ValueError(f"the extent ({low}, {high}) must lie around every cut point")
    return np.diff(np.concatenate([[low], cuts, [high]]))


def within_shares(cuts: np.ndarray, values: np.ndarray, counts: np.ndarray,
                  masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How a member spreads each interval's probability within the interval: a share to each
    point mass inside it, the rest uniformly over it (fixed from the sample).

    A point mass alone in its interval ``(a⁻, a]`` takes all of it. In any other interval, with
    ``n`` of the sample's records, a point mass with ``k`` of them takes ``k / (n + 1)`` and the
    values that are not point masses take the rest, ``(n - sum of k + 1) / (n + 1)``: the
    sample's proportions with one pseudo-record for the free values, so that every value of the
    interval keeps a positive density (also in an interval the sample left empty).

    Parameters
    ----------
    cuts : np.ndarray
        The member's sorted distinct cut points.
    values : np.ndarray
        Distinct sample values, increasing.
    counts : np.ndarray
        How often each value occurs.
    masses : np.ndarray
        The shared point masses (values of ``values``).

    Returns
    -------
    tuple of np.ndarray
        ``(mass_shares, free_shares)``: one share per point mass, one per interval; in every
        interval the free share and its point masses' shares sum to 1.

    >>> within_shares(np.array([2.5]), np.array([1.0, 2.0, 3.0]), np.array([1, 4, 2]),
    ...               np.array([2.0]))
    (array([0.66666667]), array([0.33333333, 1.        ]))
    """
    cuts = np.asarray(cuts, dtype=float)
    values, counts = np.asarray(values, dtype=float), np.asarray(counts)
    masses = np.asarray(masses, dtype=float)
    _check_sample(values, counts)
    at = np.minimum(np.searchsorted(values, masses), max(values.size - 1, 0))
    if masses.size and not np.array_equal(values[at], masses):
        raise ValueError("every point mass must be one of the sample's values")
    n_intervals = cuts.size + 1
    records = np.bincount(np.searchsorted(cuts, values, side="left"), weights=counts,
                          minlength=n_intervals)
    held = counts[at].astype(float)
    interval = np.searchsorted(cuts, masses, side="left")
    lower = np.concatenate([[-np.inf], cuts])[interval]
    upper = np.concatenate([cuts, [np.inf]])[interval]
    alone = (upper == masses) & (lower == np.nextafter(masses, -np.inf))
    in_mass = np.bincount(interval[~alone], weights=held[~alone], minlength=n_intervals)
    free = (records - in_mass + 1) / (records + 1)
    free[interval[alone]] = 0.0
    shares = np.where(alone, 1.0, held / (records[interval] + 1))
    return shares, free
