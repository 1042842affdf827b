"""Tree sums in the basis of one spanning tree: a fixed handful of numpy calls, certified.

The elimination of :mod:`onlinebma.stats.elimination` takes one numpy step per node, which
is what a record's few small graphs cost. This path takes about fifteen calls per stack of
graphs, whatever their size, and proves, graph by graph, a bound on its error; a graph whose
bound fails goes back to the elimination.

Let ``T`` be a spanning tree of the graph (nodes ``0..n``, ``0`` the ground), oriented towards
node 0, ``B_T`` the grounded incidence matrix of its edges (square, determinant ±1) and
``B_N`` that of the other edges. The grounded Laplacian is
``L = B_T^T W_T B_T + B_N^T W_N B_N``, so

.. math:: \\log\\det L = \\sum_{f \\in T} l_f + \\log\\det M,\\qquad
          M = I + A^T A,\\quad A_{ef} = C_{ef}\\, e^{(l_e - l_f)/2},

with ``C = B_N B_T^{-1}``: row ``e = uv`` holds +1 on the tree edges of the path from ``u``
to node 0 and -1 on those from ``v`` (the common part cancels), the fundamental cycle of
``e``. When ``T`` is a maximum spanning tree of the log weights, every tree edge on the cycle
of ``e`` weighs at least ``l_e`` (the cycle property), so ``|A_ef| <= 1``: ``M`` has
eigenvalues in ``[1, tr M]`` whatever the spread of the weights, and its Cholesky factor
gives ``log det M`` accurately.

**The bound** (:func:`tree_basis_sums`). With ``u`` the unit roundoff, forming ``A`` (each
entry one exponential of a rounded difference; entries below ``e^-40`` are negligible
against ``I``) and ``A^T A`` and factorising perturb ``M`` by ``|ΔM_ij| <= η sqrt(M_ii
M_jj)``, ``η = u (R + n + 94)``, ``R`` the rows of ``A`` computed (Higham, *Accuracy and
Stability of Numerical Algorithms*, Thm 10.3 for Cholesky; Cauchy–Schwarz for the product),
so ``||ΔM||_2 <= η tr M``. As ``M >= I``, the log determinant moves by at most
``n ||ΔM||_2 (1 + O(||ΔM||))``.

**Entries left out.** A basis built with the weights ``l`` it will be used near (the
classifier's structure weights; a record adds its ``log Q``) leaves out the entries of ``A``
below ``e^-DROP_NATS`` in ``l`` (after a few hundred records, all but a few dozen of a
20-feature record's 1,500). For the graph summed, each left-out entry is at most
``δ = exp(top + (max Δ - min Δ) / 2)``, ``top`` the largest left-out exponent in ``l`` and
``Δ`` the change of the edge vector from ``l``; leaving out ``D`` (``d`` entries, ``||D||_2
<= δ sqrt(d)``) perturbs ``M`` by at most ``2 ||Ã||_2 ||D||_2 + ||D||_2^2`` with ``||Ã||_2^2
<= tr M - n``.

A graph is accepted when twice the sum of both bounds times ``n`` is at most
``TOLERANCE`` (1e-10 nats; a prediction is a difference of two tree sums, so its
probabilities are within a relative 2e-10 of exact); ``nan`` (an exponential that overflows,
with a tree far from maximal) fails the test. The bound grows with each of its terms (``η``,
``tr M``, ``δ``, ``d``), so a stack is first tested once with the largest of each over its
graphs (``δ`` from the spread of the whole stack's change): when that passes, every graph
passes; else each graph is tested with its own. ``tr M >= n`` plus the ties among the root
node's edges, so beyond about 24 nodes the bound fails and the elimination is used (the
sharper bound below certifies some of those graphs).

**A sharper rounding bound, after factorising.** The test above spends ``n ||ΔM||_2 <= n η
tr M``; a graph it refuses with ``tr M <= 1e6`` (no tree dominant: nearly tied weights, as
in a learner's first records) whose entries left out pass alone is factorised anyway and
tested again. With ``X = M^{-1/2} ΔM M^{-1/2}``, ``|log det(M + ΔM) - log det M| = |log
det(I + X)| <= ||X||_* / (1 - ||X||_2)`` (``||.||_*`` the nuclear norm, the sum of the
singular values). Writing ``ΔM = Σ_ij ΔM_ij e_i e_j^T``, each term's ``M^{-1/2}``-scaled
nuclear norm is ``|ΔM_ij| ||M^{-1/2} e_i|| ||M^{-1/2} e_j||`` with ``||M^{-1/2} e_i||^2 =
(M^{-1})_ii``, so ``||X||_* <= η S^2``, ``S = Σ_i (M_ii (M^{-1})_ii)^{1/2}``. As ``M >= I``,
``(M^{-1})_ii <= 1`` and, by Cauchy–Schwarz, ``S^2 <= n tr M``: never looser than the
first bound, and several times tighter when the weights are spread over many trees. The
diagonal of ``M^{-1}`` comes from the Cholesky factor (``M = R^T R``: ``(M^{-1})_ii`` the
squared norm of row ``i`` of ``R^{-1}``), within a relative ``n u tr M`` (below 1e-8 at
``tr M <= 1e6``), taken 1.001 times larger and at most 1. The graph is accepted when ``2 η
S^2`` (the 2 covers ``1 / (1 - ||X||_2)``, as in the first test) plus the term of the
entries left out is at most ``TOLERANCE``.

**Several trees in one call** (:class:`TreeBases`): a stack whose graphs are far apart
(``decay="auto"``'s members, whose weights forget at different rates) needs a maximal tree
per graph. Each graph's ``A`` is gathered in its own tree, padded with zero rows to the
stack's largest, and the stack is multiplied and factorised at once; each graph keeps the
bound of its own tree (its ``R``, its left-out entries).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dtrtri as _trtri

from .. import tuning
from ..caching import BoundedCache

__all__ = ["DROP_NATS", "TOLERANCE", "TreeBases", "TreeBasis", "maximum_spanning_tree",
           "tree_basis_sums"]

# Largest certified error of a log tree sum on this path (nats).
TOLERANCE = 1e-10
# Entries of A at most e^-DROP_NATS in the weights a basis is built from are bounded, not
# computed (the bound needs them below about e^-35 when the record is summed: 25 nats of
# margin for its log Q).
DROP_NATS = 60.0
_UNIT_ROUNDOFF = np.finfo(float).eps / 2


def maximum_spanning_tree(log_weights: np.ndarray) -> np.ndarray:
    """Prim's maximum spanning tree of one graph (``(g, g)`` symmetric log weights, ``-inf``
    no edge) grown from node 0: ``parent`` ``(g,)`` with ``parent[0] = -1`` (``-1`` too for a
    node the tree cannot reach).

    >>> import numpy as np
    >>> maximum_spanning_tree(np.array([[0, 5, 1], [5, 0, 9], [1, 9, 0.]])).tolist()
    [-1, 0, 1]
    """
    w = np.asarray(log_weights, dtype=float)
    g = w.shape[0]
    rows = w.tolist()  # plain floats: a record's graph has a few dozen nodes
    parent = [-1] * g
    best = rows[0][:]
    best[0] = -math.inf
    src = [0] * g
    left = list(range(1, g))  # the nodes not in the tree yet, in order
    for _ in range(g - 1):
        k, top = -1, -math.inf  # the first largest best (a nan first), as np.argmax
        for j in left:
            b = best[j]
            if b != b:
                k = j
                break
            if b > top:
                k, top = j, b
        if k < 0:
            break
        left.remove(k)
        parent[k] = src[k]
        row = rows[k]
        for j in left:
            if row[j] > best[j]:
                best[j] = row[j]
                src[j] = k
    return np.array(parent, dtype=np.int64)


class TreeBasis:
    """The cycle matrix of one spanning tree over an edge list: which entries of an edge
    vector are the tree's and which are not, and the entries of ``C`` (module docstring)
    that the sums compute.

    Parameters
    ----------
    parent
        ``(g,)``: each node's parent in the tree towards node 0 (``parent[0] = -1``).
    u, v
        ``(E,)`` the endpoints of every edge of the edge vectors this basis reads (each pair
        of nodes at most once, the tree's edges among them).
    log_edges
        Optional ``(E,)`` log weights like those to be summed (the structure weights without
        a record's ``log Q``): entries of ``A`` below ``e^-DROP_NATS`` in them are not
        computed but bounded, graph by graph, in :func:`tree_basis_sums`.
    """

    def __init__(self, parent: np.ndarray, u: np.ndarray, v: np.ndarray, log_edges=None):
        g = len(parent)
        n = g - 1
        up = np.asarray(parent).tolist()
        if min(up[1:], default=0) < 0:
            raise ValueError(f"the tree must reach every node from node 0, got parents {up}")
        edge = np.full((g, g), -1, dtype=np.int64)  # the edge of each pair of nodes
        edge[u, v] = edge[v, u] = np.arange(len(u))
        tree = edge[np.arange(1, g), up[1:]]
        if (tree < 0).any():
            raise ValueError("every edge of the tree must be in the edge list")
        # path[x, f - 1]: tree edge (f, parent[f]) lies on the path from x to node 0
        path = [[0.0] * n for _ in range(g)]
        for x in range(1, g):
            y, on_path = x, path[x]
            while y > 0:
                on_path[y - 1] = 1.0
                y = up[y]
        path = np.array(path)
        on_tree = np.zeros(len(u), dtype=bool)
        on_tree[tree] = True
        off = np.flatnonzero(~on_tree)
        cycles = path[u[off]] - path[v[off]]  # (E_N, n): C of the module docstring
        e, f = np.nonzero(cycles)
        keep = np.ones(len(e), dtype=bool)
        self.log_edges_, self.dropped_top_ = log_edges, -np.inf
        if log_edges is not None:
            x = (log_edges[off[e]] - log_edges[tree[f]]) / 2
            keep = x >= -DROP_NATS
            if not keep.all():
                self.dropped_top_ = float(x[~keep].max())
        rows, e_kept = np.unique(e[keep], return_inverse=True)
        self.tree_ = tree
        self.edge_, self.tree_edge_ = off[e[keep]], tree[f[keep]]
        self.sign_ = cycles[e[keep], f[keep]]
        self.flat_ = e_kept.ravel() * n + f[keep]
        self.pairs_ = _row_pairs(e_kept.ravel(), f[keep], n)
        self.shape_ = (len(rows), n)
        self.dropped_ = (off[e[~keep]], tree[f[~keep]])
        self.n_ = n
        self.eta_ = _UNIT_ROUNDOFF * (len(rows) + n + 94)
        self.layouts = BoundedCache("BASIS_LAYOUTS")  # see _layout


def _row_pairs(rows: np.ndarray, cols: np.ndarray, n: int):
    """The ordered pairs of entries of ``A`` in one row (``rows``, ``cols`` of each entry):
    ``(first, second, flat target f * n + g in M)``, whose products summed per target are
    ``A^T A``."""
    order = np.argsort(rows, kind="stable")
    count = np.bincount(rows[order])
    start = np.cumsum(count) - count
    partners = count[rows[order]]  # of each entry, in row order
    first = np.repeat(order, partners)
    within = np.arange(len(first)) - np.repeat(np.cumsum(partners) - partners, partners)
    second = order[np.repeat(start[rows[order]], partners) + within]
    return first, second, cols[first] * n + cols[second]


class TreeBases:
    """Several :class:`TreeBasis` over one edge list, for a stack whose graphs need different
    maximal trees (``decay="auto"``'s members, whose structure weights differ): graph ``i``
    of :func:`tree_basis_sums` is summed in the basis ``tree[i]``, all in one batched call.

    Parameters
    ----------
    bases
        The bases (same nodes, same edge list), read once: not to be changed afterwards.
    """

    def __init__(self, bases):
        self.bases_ = list(bases)
        self.layouts = BoundedCache("BASIS_LAYOUTS")  # see _layout


def _layout(basis, tree, b: int, e: int):
    """What the sums of ``b`` graphs of ``e`` edges in the bases ``tree`` (``None``: all in
    ``basis``, a :class:`TreeBasis`) gather and scatter to form each graph's ``M = I + A^T
    A``: the edges of each entry of ``A`` and of its tree edge, the signs, the tree edges of
    each graph; for :class:`TreeBases` also the bound's terms of each graph's basis. ``M``
    is either summed from the products of the entries sharing a row of ``A`` (one bincount:
    a sparse ``A``, where most entries are left out or the cycles are short), or the
    stacked product of the ``(rows + n, n)`` matrices ``A`` padded with zero rows to the
    largest basis' rows and with ``I`` in their last rows (a buffer every call reuses, with
    the flat positions of ``A``'s entries in it). Cached on ``basis`` per stack of a
    record's size (at most ``tuning.CACHED_GRAPHS`` graphs)."""
    key = (b, e, None if tree is None else tree.tobytes())
    layout = basis.layouts.get(key)
    if layout is not None:
        return layout
    bases = getattr(basis, "bases_", [basis])
    which = np.zeros(b, dtype=np.int64) if tree is None else tree
    used = [k for k in range(len(bases)) if (which == k).any()]
    n = bases[0].n_
    size = (max(bases[k].shape_[0] for k in used) + n) * n  # of each graph's matrix
    groups = [(bases[k], np.flatnonzero(which == k)[:, None]) for k in used]
    pos, src_e, src_f, sign = [], [], [], []
    on_tree = np.zeros((b, e))
    for t, graphs in groups:  # the graphs of each basis at once
        src_e.append((graphs * e + t.edge_).ravel())
        src_f.append((graphs * e + t.tree_edge_).ravel())
        sign.append(np.tile(t.sign_, len(graphs)))
        on_tree[graphs, t.tree_] = 1.0
    products = sum(len(t.pairs_[0]) * len(graphs) for t, graphs in groups)
    # M from the products within A's rows when they are few (tuning.SPARSE_PRODUCTS_COST)
    if products * tuning.SPARSE_PRODUCTS_COST <= b * size * n:
        work, first, second, target, start = None, [], [], [], 0
        for t, graphs in groups:
            entries = start + np.arange(len(graphs))[:, None] * len(t.edge_)
            first.append((entries + t.pairs_[0]).ravel())
            second.append((entries + t.pairs_[1]).ravel())
            target.append((graphs * (n * n) + t.pairs_[2]).ravel())
            start += len(graphs) * len(t.edge_)
        identity = np.tile(np.eye(n).ravel(), b)
        pos = (np.concatenate(first), np.concatenate(second), np.concatenate(target),
               identity)
    else:  # the stacked product of the padded A: the stack's matrices, reused by every
        # call of the layout (the sums write A's entries at the same positions each time,
        # and nothing else changes; a fresh copy, mostly zeros, cost more than the product)
        diagonal = (size - n * n) + np.arange(n) * (n + 1)
        work = np.zeros(b * size)
        work[(np.arange(b)[:, None] * size + diagonal).ravel()] = 1.0
        pos = np.concatenate([(graphs * size + t.flat_).ravel() for t, graphs in groups])
    terms = None
    if tree is not None:  # each graph's (2 n eta, d, top, reference edges): bound below
        per_basis = [(t.eta_, len(t.dropped_[0]), t.dropped_top_,
                      np.zeros(e) if t.log_edges_ is None else t.log_edges_) for t in bases]
        eta, dropped, top, ref = (np.array(x)[tree] for x in zip(*per_basis))
        terms = (2 * n * eta, dropped, top, ref, bool(dropped.any()), 2 * n * eta.max(),
                 int(dropped.max()), float(top.max()))
    layout = (work, pos, np.concatenate(src_e), np.concatenate(src_f),
              np.concatenate(sign), on_tree[0] if tree is None else on_tree, terms)
    if b <= tuning.CACHED_GRAPHS:
        basis.layouts.put(key, layout)
    return layout


def tree_basis_sums(basis, log_edges: np.ndarray, tree=None):
    """``(log tree sums (B,), certified (B,) bool)`` of graphs given by their edge vectors
    ``log_edges`` ``(B, E)`` in the order of the basis' edge list: exact to
    :data:`TOLERANCE` where ``certified`` (module docstring), anything elsewhere.

    ``basis`` is a :class:`TreeBasis`, or :class:`TreeBases` with ``tree`` ``(B,)`` the
    basis of each graph. The bound is each graph's own, in its own tree: the rows that pad
    a graph's ``A`` to the stack's largest are zeros, exact terms of ``A^T A``'s sums, and
    ``I`` enters as one more term of each diagonal sum, the rounding of the sum ``I + A^T
    A`` of the module docstring.

    >>> import numpy as np
    >>> u, v = np.array([0, 0, 1]), np.array([1, 2, 2])
    >>> basis = TreeBasis(np.array([-1, 0, 0]), u, v)
    >>> lt, ok = tree_basis_sums(basis, np.zeros((1, 3)))   # a unit triangle: 3 trees
    >>> round(float(np.exp(lt[0])), 12), bool(ok[0])
    (3.0, True)
    >>> path = TreeBasis(np.array([-1, 0, 1]), u, v)        # another tree, the same sums
    >>> lt, ok = tree_basis_sums(TreeBases([basis, path]), np.zeros((2, 3)), np.array([0, 1]))
    >>> np.round(np.exp(lt), 12).tolist(), ok.tolist()
    ([3.0, 3.0], [True, True])
    """
    b, e = log_edges.shape
    a, pos, src_e, src_f, sign, on_tree, terms = _layout(basis, tree, b, e)
    if terms is None:  # one basis: its terms as they are now
        n = basis.n_
        c_eta, dropped = 2 * n * basis.eta_, len(basis.dropped_[0])
        top, ref, any_dropped = basis.dropped_top_, basis.log_edges_, dropped > 0
        worst = (c_eta, dropped, top)
    else:
        n = basis.bases_[0].n_
        c_eta, dropped, top, ref, any_dropped = terms[:5]
        worst = terms[5:]
    half = log_edges.ravel() * 0.5
    # the entries left out: each at most e^(top + spread / 2), spread that of the change of
    # the graph's edges from the weights its basis left them out in
    change = log_edges - ref if any_dropped else None
    with np.errstate(over="ignore", invalid="ignore"):  # a graph far from its tree: refused
        entries = np.exp(half.take(src_e) - half.take(src_f)) * sign
        if a is None:  # I + A^T A from the products of A's entries within each row
            first, second, target, identity = pos
            m = np.bincount(target, entries.take(first) * entries.take(second),
                            minlength=b * n * n) + identity  # (ints when A is empty)
            m = m.reshape(b, n, n)
        else:  # the stacked product of the padded A (I in its last rows)
            a[pos] = entries
            a = a.reshape(b, -1, n)
            m = np.matmul(a.transpose(0, 2, 1), a)
        trace = m.trace(axis1=1, axis2=2)
        # first the bound of the largest of each term over the stack (the bound grows with
        # each): usually every graph passes at once (a nan fails); else each graph's own
        delta = (_exp(worst[2] + float(change.max() - change.min()) * 0.5) if any_dropped
                 else 0.0)
        all_ok = _bound(n, worst[0], float(trace.max()), delta, worst[1]) <= TOLERANCE
    if all_ok:
        ok, refine, left = np.ones(b, dtype=bool), None, None
    else:  # each graph's own bound: rounding + entries left out
        with np.errstate(over="ignore", invalid="ignore"):
            delta = (np.exp(top + (change.max(axis=1) - change.min(axis=1)) * 0.5)
                     if any_dropped else 0.0)
            left = _bound(n, 0.0, trace, delta, dropped)
            ok = c_eta * trace + left <= TOLERANCE  # refuses nan
            # refused by the trace alone: factorised anyway, for the sharper bound
            refine = ~ok & (trace <= _SHARPER_TRACE) & (left <= TOLERANCE)
        if not refine.any():
            refine = None
    if b > tuning.LOOP_GRAPHS:  # stacked calls
        out = _stacked_log_dets(m, ok, refine, c_eta / (2 * n), left)
    else:  # graph by graph, in floats: numpy's calls cost more for a record's few graphs
        out = _looped_log_dets(m, ok, refine, c_eta / (2 * n), left)
    ok = ~np.isnan(out)
    # log det L = sum of the tree's l_f + 2 sum log diag(R)
    out += log_edges @ on_tree if terms is None else (log_edges * on_tree).sum(axis=1)
    return out, ok


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


# Largest trace of M whose graphs a failed first bound sends to the sharper one (module
# docstring): the diagonal of M^-1 from the factor is then within 1e-8 relative.
_SHARPER_TRACE = 1e6
# Margin on that diagonal (its computed value times this)
_INVERSE_MARGIN = 1.001


def _sharper_passes(eta, m_diag, inverse_diag, left) -> np.ndarray:
    """The sharper bound of the module docstring, ``2 η S^2`` plus the entries left out
    (``left``), at most :data:`TOLERANCE`: graphs ``(B,)`` from the diagonals of ``M`` and
    of ``M^-1`` ``(B, n)``."""
    s = np.sqrt(m_diag * np.minimum(inverse_diag * _INVERSE_MARGIN, 1.0)).sum(axis=1)
    return 2.0 * eta * s * s + left <= TOLERANCE


def _stacked_log_dets(m, ok, refine, eta, left) -> np.ndarray:
    """``log det M`` of the graphs ``ok`` and of those of ``refine`` (``None``: none) that
    pass the sharper bound, ``nan`` elsewhere, by numpy's stacked Cholesky."""
    b = len(m)
    out = np.full(b, np.nan)
    take = ok if refine is None else ok | refine
    if not take.any():
        return out
    every = take.all()
    try:
        factor = np.linalg.cholesky(m if every else m[take])
    except np.linalg.LinAlgError:  # not reached within the bound; kept exact anyway
        return out
    log_det = 2.0 * np.log(factor.diagonal(axis1=1, axis2=2)).sum(axis=1)
    if refine is not None:  # M = F F^T: (M^-1)_ii = sum_k (F^-1)_ki^2
        sharp = refine[take]
        inverse = np.linalg.inv(factor[sharp])
        passed = _sharper_passes(_graphs_of(eta, refine), m[refine].diagonal(axis1=1, axis2=2),
                                 (inverse * inverse).sum(axis=1), left[refine])
        log_det[np.flatnonzero(sharp)[~passed]] = np.nan
    if every:
        return log_det
    out[take] = log_det
    return out


def _looped_log_dets(m, ok, refine, eta, left) -> np.ndarray:
    """:func:`_stacked_log_dets` graph by graph (LAPACK's ``potrf`` and ``trtri``), the
    sharper bound once for the graphs that take it."""
    out, sharp = [], []
    m_diag = None if refine is None else m[refine].diagonal(axis1=1, axis2=2)
    for i, passed in enumerate(ok.tolist()):
        refined = refine is not None and bool(refine[i])
        if not (passed or refined):
            out.append(math.nan)
            continue
        r, info = _potrf(m[i], 0, int(refined), 1)  # upper; lower zeroed for trtri
        log_det = 2.0 * sum(map(math.log, r.diagonal().tolist())) if info == 0 else math.nan
        if info == 0 and refined:  # M = R^T R: (M^-1)_ii = sum_k (R^-1)_ik^2
            inverse, info = _trtri(r, 0, 0, 1)
            if info == 0:
                sharp.append(inverse)
            else:
                log_det = math.nan
        out.append(log_det)  # nan: refused, or not reached within the bound
    out = np.array(out)
    if sharp:
        inverse = np.array(sharp)
        rows = np.flatnonzero(refine)[~np.isnan(out[refine])]  # the graphs of sharp
        keep = ~np.isnan(out[refine])
        passed = _sharper_passes(_graphs_of(eta, refine)[keep], m_diag[keep],
                                 (inverse * inverse).sum(axis=2), left[refine][keep])
        out[rows[~passed]] = np.nan
    return out


def _graphs_of(eta, rows) -> np.ndarray:
    """``η`` of the graphs ``rows`` (a mask) from one value or one per graph."""
    return np.full(int(rows.sum()), eta) if np.ndim(eta) == 0 else eta[rows]


def _bound(n: int, c_eta, trace, delta, dropped):
    """The error bound of the module docstring, of floats or arrays: rounding (``c_eta =
    2 n eta``), then ``dropped`` entries left out, each at most ``delta``; ``nan`` for a
    graph whose ``A`` overflowed."""
    left_out = 2 * delta * (dropped * abs(trace - n)) ** 0.5 + delta * delta * dropped
    return c_eta * trace + 2 * n * left_out
