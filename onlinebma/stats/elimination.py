"""Kron reduction of log-weighted graphs: the elimination kernels and when they are exact.

The kernels behind :mod:`onlinebma.stats.spanning`, which chooses among them per graph.
Eliminating node ``k`` of a graph with edge weights ``w`` has the pivot ``d_k = sum_j w_kj``
(its weighted degree) and joins every pair of its neighbours, ``w_ij <- w_ij + w_ik w_kj /
d_k``: only positive terms are added (as in the GTH algorithm for Markov chains), so nothing
cancels, and the log determinant of the grounded Laplacian is the sum of the log pivots.

- :func:`log_eliminate`: every entry in log space (``logaddexp``): any spread, missing edges.
- :func:`float_eliminate` / :func:`scaled_reduce`: linear space, each row with its own scale
  (GTH on the directed graph), in float64 or x87 extended precision (:data:`EXTENDED`);
  exact to rounding within :func:`scaled_path_is_safe` (one shift per graph:
  :func:`float_path_is_safe`).
- :func:`log_tree_sums_python`: the log path in plain Python floats, for a record's few small
  graphs, where numpy's per-call overhead costs more than the arithmetic; shifted linear
  floats (:func:`float_log_pivots`) where the spread allows.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["EXTENDED", "SAFE_NATS", "diagonal", "float_eliminate", "float_log_pivots",
           "float_path_is_safe", "log_eliminate", "log_tree_sums_python", "python_float_nats",
           "row_safe_nats", "row_tops", "scaled_path_is_safe", "scaled_reduce",
           "shift_is_safe"]

# Spread bound of the float path (nats): S + n log 2 + log n <= SAFE_NATS, where 708 nats is
# the smallest normal float; 108 nats of margin.
SAFE_NATS = 600.0

# The per-step reductions and log additions of the elimination loops, bound once: a record's
# graphs are tiny (K x 21 x 21), so the np.sum wrapper and attribute look-ups cost as much as
# the arithmetic.
_ADD_REDUCE = np.add.reduce
_LOG_ADD = np.logaddexp
_LOG_ADD_REDUCE = np.logaddexp.reduce

# The row-scaled paths: float64, and numpy's extended precision where the platform has one
# (x87 80-bit on x86-64 Linux: 11,355 nats of exponent range instead of 708).
EXTENDED = np.longdouble
# Margin (nats) of the row-scaled bound: an underflow's absolute error is below e^-20 of a
# rounding error of the entry it is added to.
_ROW_MARGIN = 20.0
# -log(smallest normal) of each float type of the row-scaled paths
_TINY_NATS = {np.dtype(t): -float(np.log(np.finfo(t).tiny)) for t in (float, EXTENDED)}


def float_path_is_safe(log_weights) -> np.ndarray:
    """Whether linear-space elimination of each graph is exact to rounding.

    With every edge present (all off-diagonal log weights finite) and weights shifted so the
    largest is 1, eliminating node ``k`` sets ``w_ij <- w_ij + w_ik (w_kj / d_k)``: entries
    never decrease (the minimum stays ``>= exp(-S)``, ``S`` the spread max - min of the log
    weights) and at most double (``w_ik <= d_k``), so after ``n`` steps every entry is
    ``<= 2^n`` and every degree ``<= n 2^n``. The ratio ``w_kj / d_k`` is then
    ``>= exp(-(S + n log 2 + log n))``; while that stays a normal float (``S + n log 2 +
    log n <= 708`` nats, we require ``<= 600``) every quantity carries full relative precision
    and a product that underflows is below ``exp(-708)``, negligible (relative
    ``exp(S - 708) < 2^-53``) against the entry ``>= exp(-S)`` it is added to. A missing
    edge could be filled in by a product too small to represent, so graphs with a ``-inf``
    edge always take the log path.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of symmetric log edge weights; the diagonal is ignored.

    Returns
    -------
    Boolean array of shape ``(...)``.

    Examples
    --------
    >>> import numpy as np
    >>> float_path_is_safe(np.array([[[0, 500, 2], [500, 0, 3], [2, 3, 0]],
    ...                              [[0, -1e4, 2], [-1e4, 0, 3], [2, 3, 0]],
    ...                              [[0, -np.inf, 2], [-np.inf, 0, 3], [2, 3, 0]]]))
    array([ True, False, False])
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    if n < 2:
        return np.ones(a.shape[:-2], dtype=bool)
    diag = np.arange(n)
    a[..., diag, diag] = a[..., :1, 1]
    return shift_is_safe(a)[0]


def shift_is_safe(a: np.ndarray):
    """:func:`float_path_is_safe` of graphs whose diagonal holds one of their off-diagonal
    weights, and their largest log weight."""
    n = a.shape[-1]
    top = a.max(axis=(-2, -1))
    with np.errstate(invalid="ignore"):
        spread = top - a.min(axis=(-2, -1))
        return spread <= SAFE_NATS - n * math.log(2.0) - math.log(n), top


def log_eliminate(a: np.ndarray, keep: int):
    """Kron-reduce ``a`` (``(B, m, m)`` log weights, diagonal ``-inf``) onto its first
    ``keep`` nodes, last node first; return the sum of the log pivots ``(B,)`` and the reduced
    graphs ``(B, keep, keep)``. Each step writes a new contiguous array (faster than updating
    a strided view in place)."""
    b, m = a.shape[0], a.shape[1]
    log_pivots = np.empty((m - keep, b))
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, k in enumerate(range(m - 1, keep - 1, -1)):
            row = a[:, k, :k]
            log_d = _LOG_ADD_REDUCE(row, 1, None, log_pivots[j])
            a = _LOG_ADD(a[:, :k, :k], row[:, :, None] + (row - log_d[:, None])[:, None, :])
    return log_pivots.sum(axis=0), a


def float_eliminate(x: np.ndarray, keep: int):
    """:func:`log_eliminate` in linear space: ``x`` ``(B, m, m)`` positive weights (a float
    dtype; each row may carry its own scale, the diagonal is never read). Eliminating node
    ``k`` divides its row by its pivot ``d_k = sum_{j<k} x_kj`` and adds ``x_ik x_kj / d_k``
    to every ``x_ij``, ``x_ik`` read from row ``i`` (its own scale), so row scales are kept:
    this is GTH elimination of the directed graph. Returns the sum of the log pivots (in the
    dtype of ``x``) and the reduced graphs in linear space."""
    b, m = x.shape[0], x.shape[1]
    pivots = np.empty((m - keep, b), dtype=x.dtype)
    for j, k in enumerate(range(m - 1, keep - 1, -1)):
        row = x[:, k, :k]
        d = _ADD_REDUCE(row, 1, None, pivots[j])
        x = x[:, :k, :k] + x[:, :k, k, None] * (row / d[:, None])[:, None, :]
    return np.log(pivots).sum(axis=0), x


def scaled_path_is_safe(log_weights, dtype=float) -> np.ndarray:
    """Whether the row-scaled elimination in ``dtype`` is exact to rounding for each graph.

    The row-scaled path divides each row ``i`` of the graph by its largest off-diagonal
    weight (the scale ``M_i`` kept in log) and eliminates by GTH in linear space
    (:func:`float_eliminate`): node ``k``'s pivot ``d_k`` is the sum of its row, and
    ``x_ij += x_ik (x_kj / d_k)`` with ``x_ik`` in row ``i``'s scale, so every row keeps its
    own scale and ``log det = sum_k (log d_k + M_k)``. Let ``S_i`` be row ``i``'s spread
    (``max_j l_ij - min_j l_ij`` over ``j != i``) and ``m`` the nodes. Scaled entries start
    in ``[exp(-S_i), 1]``; elimination only adds positive terms, so they never decrease, and
    a row's sum over the remaining nodes never increases (the part of ``x_ik`` sent back to
    ``i`` itself leaves it), so every entry stays in ``[exp(-S_i), m)`` and every pivot in
    ``[exp(-S_k), m)``: nothing overflows, every entry and pivot is a normal float, and the
    only quantities that can leave the normal range are the quotients ``x_kj / d_k`` and the
    products ``x_ik x_kj / d_k``. Their absolute error is then at most ``m`` times the
    subnormal spacing ``tiny * eps``, and they are added to an entry ``x_ij >= exp(-S_i)``:
    a relative error of at most ``m exp(S_i) tiny`` times ``eps``, below one rounding
    (``eps``) when ``S_i + log m <= -log(tiny)``. We require a margin of 20 nats:
    ``S_i <= -log(tiny) - log m - 20`` for every row (688 - log m nats in float64, 11,335 -
    log m in x87 extended precision). So every operation has a relative error of at most
    one rounding and, all terms being positive, nothing cancels: the result is exact to
    rounding like the log path, whatever the spread across rows. A missing edge (``-inf``)
    could be filled in by a product too small to represent: such graphs are not safe.

    Parameters
    ----------
    log_weights
        Array ``(..., n, n)`` of log edge weights; the diagonal is ignored.
    dtype
        The float type of the elimination: ``float`` or ``numpy.longdouble``.

    Returns
    -------
    Boolean array of shape ``(...)``.

    Examples
    --------
    Spreads of 900 nats across rows but at most 895 within one: too wide for float64, fine
    in extended precision (where the platform has it).

    >>> import numpy as np
    >>> l = np.array([[0.0, 900.0, 5.0], [900.0, 0.0, 5.0], [5.0, 5.0, 0.0]])
    >>> extended = bool(np.finfo(np.longdouble).tiny < np.finfo(float).tiny)
    >>> bool(scaled_path_is_safe(l)), bool(scaled_path_is_safe(l, np.longdouble)) == extended
    (False, True)
    """
    a = np.array(log_weights, dtype=float)
    n = a.shape[-1]
    if n < 2:
        return np.ones(a.shape[:-2], dtype=bool)
    spread = row_tops(a.reshape(-1, n, n))[1]
    return (spread <= row_safe_nats(dtype, n)).reshape(a.shape[:-2])


def log_tree_sums_python(a) -> np.ndarray:
    """The log path of :func:`log_eliminate` onto node 0, in plain Python floats, for graphs
    ``a`` (``(B, m, m)`` symmetric log weights, only the lower triangle read) of a few nodes,
    where numpy's per-call overhead costs more than the arithmetic (the crossover,
    ``tuning.SMALL_WORK``, is measured in docs/results/spanning-cost.md). ``a`` may also
    be a list of graphs given by their lower triangles as lists (row ``k`` holds its ``k``
    weights to nodes ``0..k-1``; changed). A graph whose log weights spread over at most
    :func:`python_float_nats` is eliminated in plain floats shifted by its largest weight
    instead (exact to rounding, no ``log1p`` per entry). Returns ``(B,)``."""
    exp, log, log1p, neg = math.exp, math.log, math.log1p, -math.inf
    float_nats = python_float_nats(1)
    out = []
    for g in (a.tolist() if isinstance(a, np.ndarray) else a):
        n = len(g)
        if n > 1:
            low = [row[:k] for k, row in enumerate(g) if k] if len(g[-1]) >= n else g[1:]
            top = max(map(max, low))
            if top - min(map(min, low)) <= float_nats - log(n):  # refuses inf and nan
                out.append(_float_tree_sum(low, top))
                continue
        total = 0.0
        for k in range(len(g) - 1, 0, -1):
            row = g[k]
            top = max(row[:k])
            if top == neg:
                total = neg
                break
            s = 0.0
            for j in range(k):
                s += exp(row[j] - top)
            d = top + log(s)
            total += d
            for i in range(1, k):
                t0 = row[i]
                if t0 == neg:
                    continue
                t0 -= d
                gi = g[i]
                for j in range(i):
                    t = t0 + row[j]
                    c = gi[j]
                    if t > c:
                        gi[j] = t + log1p(exp(c - t))
                    elif t != neg:
                        gi[j] = c + log1p(exp(t - c))
        out.append(total)
    return np.array(out)


def python_float_nats(m: int) -> float:
    """Spread of the log weights (largest minus smallest) of a graph of ``m`` nodes up to
    which :func:`log_tree_sums_python` eliminates in plain floats shifted by the largest:
    every weight, and every entry filled in (they only grow), is then a normal float at
    least ``e^-(spread)``, and a product that underflows is below ``e^-2 _ROW_MARGIN`` of
    the entry it is added to, so every step is exact to rounding (all terms positive)."""
    return _TINY_NATS[np.dtype(float)] - math.log(m) - 2 * _ROW_MARGIN


def _float_tree_sum(low: list, top: float) -> float:
    """The elimination of :func:`log_tree_sums_python` on the weights ``exp(low - top)``
    (``low[k - 1]``: the log weights of node ``k`` to nodes ``0..k-1``): GTH pivots summed
    in log, the shift added back once per tree edge."""
    exp = math.exp
    return float_log_pivots([[exp(x - top) for x in row] for row in low]) + len(low) * top


def float_log_pivots(w: list) -> float:
    """The sum of the log GTH pivots of a graph given by the lower triangle of its weights
    in plain floats (``w[k - 1]``: node ``k``'s weights to nodes ``0..k-1``, changed),
    eliminated onto node 0: the log of its tree sum, exact to rounding when every weight
    is a normal float at least ``e^-S`` of the largest with ``S`` within
    :func:`python_float_nats` (the caller's shift: all terms positive, nothing cancels)."""
    log = math.log
    total = 0.0
    for k in range(len(w), 0, -1):
        row = w[k - 1]
        d = sum(row)
        total += log(d)
        for i in range(1, k):
            f = row[i] / d
            gi = w[i - 1]
            for j in range(i):
                gi[j] += f * row[j]
    return total


def row_tops(a: np.ndarray):
    """Row maxima ``(B, m)`` and largest row spread ``(B,)`` of graphs ``a`` (``(B, m, m)``
    log weights, diagonal overwritten: it is left at the row maxima); the spread is ``inf``
    or ``nan`` where an edge is missing."""
    diag = diagonal(a.shape[1])
    a[:, diag, diag] = -np.inf
    top = a.max(axis=2)
    a[:, diag, diag] = top
    with np.errstate(invalid="ignore"):
        return top, (top - a.min(axis=2)).max(axis=1)


@functools.lru_cache(maxsize=64)
def diagonal(m: int) -> np.ndarray:
    return np.arange(m)


def row_safe_nats(dtype, m: int) -> float:
    """Within-row spread up to which the row-scaled elimination in ``dtype`` is exact to
    rounding, for graphs of ``m`` nodes (:func:`scaled_path_is_safe`)."""
    return _TINY_NATS[np.dtype(dtype)] - math.log(m) - _ROW_MARGIN


def scaled_reduce(a: np.ndarray, top: np.ndarray, keep: int, dtype, want_graph: bool):
    """The row-scaled float path: each row of the log weights ``a`` (changed) shifted by its
    maximum ``top`` (kept in log), exponentiated in ``dtype`` and eliminated by GTH
    (:func:`float_eliminate`). Returns the log pivot sums and, if asked, the reduced log
    graphs (symmetrised: both halves are equal up to rounding)."""
    if dtype is float:
        x = np.subtract(a, top[:, :, None], out=a)
    else:
        x = a.astype(dtype) - top[:, :, None].astype(dtype)
    logs, reduced = float_eliminate(np.exp(x, out=x), keep)
    total = (logs + top[:, keep:].sum(axis=1)).astype(float)
    if not want_graph:
        return total, None
    g = np.log(reduced).astype(float) + top[:, :keep, None]
    return total, (g + g.transpose(0, 2, 1)) / 2

