"""The tree sums ``LT(l + log Q)`` of :class:`~onlinebma.tan.ModelAveragedTAN`'s graphs.

A record's stack (its K classes, the denominator, the members of ``decay="auto"``; or a
chunk of ``predict_proba_many``'s rows) of ``B`` graphs of ``g`` nodes is summed by one of
four routes, and :func:`choose_route` alone chooses (the crossovers are
:mod:`onlinebma.tuning`'s ``TINY_ARRAY_GRAPHS``, ``BASIS_WORK`` and ``BASIS_NODES``):

- ``"closed stack"``: of 2 or 3 features in closed form (the 2-3 trees or 2-16 rooted
  forests) with numpy over a stack of ``TINY_ARRAY_GRAPHS`` or more;
- ``"python"``: in plain Python floats straight from the edge lists when ``B g^3 <=
  BASIS_WORK`` (no matrices built; numpy's per-call overhead costs more than the arithmetic
  there), the closed forms of 2 or 3 features graph by graph;
- ``"basis"``: else, up to ``BASIS_NODES`` nodes, by the spanning-tree basis of
  :mod:`onlinebma.stats.tree_basis`: about fifteen numpy calls for the whole stack instead
  of one elimination step per node. The tree is a maximum spanning tree of ``l`` (the
  structure weights without the record's ``log Q``), kept per set of observed features
  while it passes the path's error bound and renewed at doubling record counts (the entries
  it leaves out grow as ``l`` sharpens); a graph whose bound fails is summed by elimination
  after one rebuild of the tree from the current ``l``, and a rebuilt tree that fails is not
  tried again for a doubling number of records. A stack of learners (``l`` ``(R, 1, P)``,
  ``decay="auto"``'s members) takes one tree per learner, in one call
  (:class:`~onlinebma.stats.tree_basis.TreeBases`), each learner with its own schedule: one
  whose tree fails backs off alone, the others' graphs stay on the basis;
- ``"elimination"``: else by elimination (:func:`~onlinebma.stats.spanning.log_tree_sum`).

Before any of them, :func:`takes_narrow_terms` says whether a record's terms are formed in
plain Python (:mod:`onlinebma.tan.narrow`) or with numpy.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import tuning
from ..caching import BoundedCache
from ..stats.elimination import float_log_pivots, log_tree_sums_python, python_float_nats
from ..stats.spanning import log_tree_sum
from ..stats.tree_basis import TreeBases, TreeBasis, maximum_spanning_tree, tree_basis_sums

__all__ = ["ROUTES", "RecordTreeSums", "choose_route", "takes_narrow_terms"]

#: The routes of a stack of tree sums (module docstring), as :func:`choose_route` names them.
ROUTES = ("closed stack", "python", "basis", "elimination")


def choose_route(m: int, graphs: int, forests: bool) -> str:
    """The route that sums a stack of ``graphs`` graphs over ``m`` observed features.

    Parameters
    ----------
    m : int
        Observed features of the record.
    graphs : int
        Graphs summed in one call (classes, denominators and members of a stack).
    forests : bool
        Rooted forests (one more node, the root) instead of spanning trees.

    Returns
    -------
    str
        One of :data:`ROUTES`.

    Examples
    --------
    >>> choose_route(3, 40, True), choose_route(5, 3, True), choose_route(8, 30, True)
    ('closed stack', 'python', 'basis')
    >>> choose_route(40, 3, False)
    'elimination'
    """
    g = m + bool(forests)
    if m <= 3 and graphs >= tuning.TINY_ARRAY_GRAPHS:
        return "closed stack"
    if graphs * g ** 3 <= tuning.BASIS_WORK:
        return "python"
    if g > tuning.BASIS_NODES:
        return "elimination"
    return "basis"


def takes_narrow_terms(cells: int) -> bool:
    """Whether a record whose gathered counts hold ``cells`` cells (classes x columns x
    members) forms its terms in plain Python floats (:mod:`onlinebma.tan.narrow`): up to
    :data:`onlinebma.tuning.NARROW_CELLS`.

    >>> takes_narrow_terms(2 * 7), takes_narrow_terms(10_000)
    (True, False)
    """
    return cells <= tuning.NARROW_CELLS

# After a rebuilt tree fails its bound, the basis is not tried again for this many records
# (doubling with each further failure, up to the cap).
_BACKOFF, _MAX_BACKOFF = 8, 1024


class RecordTreeSums:
    """Tree sums of the graphs ``l + log Q`` over a record's observed features.

    Parameters
    ----------
    forests
        Sum over rooted forests (node 0 joined to every feature with weight 1, the
        matrix-forest theorem) instead of spanning trees.
    log_edge_prior
        Added to every feature–feature edge (forests).
    """

    def __init__(self, forests: bool, log_edge_prior: float):
        self.forests = forests
        self.log_edge_prior = log_edge_prior
        # (set of observed features, learners) -> their bases (_LearnerTrees)
        self.bases = BoundedCache("TREE_BASES")

    def clear(self) -> None:
        self.bases.clear()

    def graphs(self, m: int, l_pairs, log_q) -> np.ndarray:
        """Log edge-weight matrices ``(..., g, g)`` whose tree sum is ``LT(l + log Q)``
        (``log_q`` ``(..., P)``, triu order): the features' graph (``g = m``) for trees; for
        forests node 0 joined to every feature with weight 1 and ``log edge_prior`` on every
        feature edge (``g = m + 1``)."""
        g = m + self.forests
        upper, lower = _triu_flat(g, int(self.forests))
        e = self._edges(l_pairs, log_q)
        w = np.zeros((*e.shape[:-1], g * g))
        w[..., upper] = e
        w[..., lower] = e
        return w.reshape(*e.shape[:-1], g, g)

    def _edges(self, l_pairs, log_q):
        e = l_pairs + log_q
        if self.forests and self.log_edge_prior:
            e = e + self.log_edge_prior
        return e

    def __call__(self, key, m: int, l_pairs, log_q, t: int) -> np.ndarray:
        """``LT(l + log Q)`` of each graph, shape ``log_q.shape[:-1]``; ``key`` names the
        set of observed features, ``t`` the learner's record count (for the back-off)."""
        g = m + self.forests
        e = self._edges(l_pairs, log_q)  # of the broadcast shape (..., P)
        shape, p = e.shape[:-1], e.shape[-1]
        route = choose_route(m, math.prod(shape), self.forests)
        if route == "closed stack":
            terms = e @ _TINY_EDGES[self.forests, m].T
            terms += _TINY_CONSTANTS[self.forests, m]
            top = terms.max(axis=-1, keepdims=True)
            return (top + np.log(np.exp(terms - top).sum(axis=-1, keepdims=True)))[..., 0]
        if route == "python":  # from the edge lists
            return self.python_sums(m, e.reshape(-1, p).tolist()).reshape(shape)
        if route == "elimination":
            return log_tree_sum(self.graphs(m, l_pairs, log_q))
        b = math.prod(shape)
        # the root node's edges (weight 1) first in the edge list, then the feature pairs
        pairs, e = e, np.zeros((*shape, m * self.forests + p))
        e[..., m * self.forests:] = pairs
        e = e.reshape(b, -1)
        tree, trees = _graph_trees(np.shape(l_pairs)[:-1], shape)  # each graph's own l
        l_rows = np.reshape(l_pairs, (-1, p))[:trees]
        state = self.bases.get((key, trees))
        if state is None:
            state = self.bases.put((key, trees), _LearnerTrees(trees, t))
        for i in state.due(t):  # first, after a back-off, or a renewal
            state.renew(i, self._basis(m, l_rows[i]), t)
        out = np.full(b, np.nan)
        if state.live:
            basis, which, graphs = state.stack(tree, b)
            lt, ok = tree_basis_sums(basis, e if len(graphs) == b else e[graphs], which)
            out[graphs] = lt
            if not ok.all():  # new trees from the current l for the learners refused, once
                retry = graphs[~ok]
                failed = np.unique(tree[retry]).tolist() if trees > 1 else [0]
                for i in failed:
                    state.renew(i, self._basis(m, l_rows[i]), None)
                basis, which, _ = state.stack(None if tree is None else tree[retry], len(retry))
                lt, ok = tree_basis_sums(basis, e[retry], which)
                out[retry[ok]] = lt[ok]
                refused = set(np.unique(tree[retry[~ok]]).tolist() if trees > 1
                              else [0] * (not ok.all()))
                for i in failed:
                    state.settle(i, i not in refused, t)
        todo = np.isnan(out)
        if todo.any():
            graphs = self.graphs(m, l_pairs, log_q).reshape(len(e), g, g)
            out[todo] = log_tree_sum(graphs[todo])
        return out.reshape(shape)

    def python_sums(self, m: int, edges: list) -> np.ndarray:
        """``LT`` of graphs given by their feature edges as lists (``l + log Q``, plus ``log
        edge_prior`` for forests, triu order), in plain Python floats: ``(len(edges),)``."""
        if m <= 3:  # the few trees summed directly
            tiny = _tiny_forest_sum if self.forests else _tiny_tree_sum
            return np.array([tiny(e) for e in edges])
        rows = _lower_rows(m, self.forests)
        forests = self.forests
        nats = python_float_nats(m + forests)
        exp = math.exp
        out = []
        for e in edges:
            top, low = max(e), min(e)
            if forests:  # the root node's edges weigh 1
                top, low = max(top, 0.0), min(low, 0.0)
            if top - low <= nats:  # shifted linear floats, rows gathered from the edges
                x = [exp(a - top) for a in e]
                get = x.__getitem__
                if forests:
                    r = exp(-top)
                    w = [[r, *map(get, p)] for p in rows[1:]]
                else:
                    w = [[*map(get, p)] for p in rows[1:]]
                out.append(float_log_pivots(w) + len(w) * top)
            else:  # the log path of log_tree_sums_python
                root = [0.0] * forests
                out.append(log_tree_sums_python([[root + [e[i] for i in r] for r in rows]])[0])
        return np.array(out)

    def _basis(self, m: int, l_row) -> TreeBasis:
        """The basis (:class:`TreeBasis`) of a maximum spanning tree of one learner's
        ``l`` over the record's pairs (``l_row`` ``(P,)``, triu order)."""
        w = self.graphs(m, l_row, 0.0)
        u, v = _edge_list(w.shape[-1], int(self.forests))
        return TreeBasis(maximum_spanning_tree(w), u, v, w[u, v])


class _LearnerTrees:
    """The tree bases of one set of observed features for a stack of ``trees`` learners
    (one per weight vector ``l``), each with its own schedule: its basis (``None`` while it
    backs off), the record count at which it is next tried, its back-off and its renewal.
    A learner whose graphs its tree cannot certify backs off alone: the other learners'
    graphs stay on the basis (``decay="auto"``'s members forget at different rates, and
    one member's nearly tied weights need not send all of them to the elimination)."""

    def __init__(self, trees: int, t: int):
        self.bases = [None] * trees
        self.next_try = [t] * trees
        self.backoff = [_BACKOFF] * trees
        self.renewal = [t] * trees
        self.live = []  # the learners with a basis
        self._stacks = {}  # live learners -> their bases as one object

    def due(self, t: int) -> list:
        """The learners whose basis is (re)built at record count ``t``: those without one
        whose back-off is over, and those whose renewal is due."""
        return [i for i, basis in enumerate(self.bases)
                if t >= (self.next_try[i] if basis is None else self.renewal[i])]

    def renew(self, i: int, basis: TreeBasis, t) -> None:
        """Learner ``i``'s new basis; at record count ``t`` its next renewal is set (at
        doubling counts: the entries left out grow as ``l`` sharpens), ``None`` keeps it
        (a retry)."""
        self.bases[i] = basis
        if t is not None:
            self.renewal[i] = 2 * t + 16
        self._changed()

    def settle(self, i: int, passed: bool, t: int) -> None:
        """After learner ``i``'s retry at record count ``t``: its back-off starts anew if
        its rebuilt tree passed, else it waits (doubling up to the cap)."""
        if passed:
            self.backoff[i] = _BACKOFF
            return
        self.bases[i], self.next_try[i] = None, t + self.backoff[i]
        self.backoff[i] = min(2 * self.backoff[i], _MAX_BACKOFF)
        self._changed()

    def _changed(self) -> None:
        self.live = [i for i, basis in enumerate(self.bases) if basis is not None]
        self._stacks = {}

    def stack(self, tree, b: int):
        """``(basis, which, graphs)`` for :func:`tree_basis_sums` over the graphs of a stack
        of ``b`` (``tree`` ``(b,)`` each graph's learner, ``None`` for one learner) whose
        learner has a basis: those graphs' positions, and the basis and index of each in
        the bases of the live learners (one :class:`TreeBasis`, or :class:`TreeBases`)."""
        live = self.live
        if tree is None or len(live) == len(self.bases):
            graphs = _all_graphs(b)
        else:
            graphs = np.flatnonzero(_is_live(len(self.bases), tuple(live))[tree])
        if len(live) == 1:
            return self.bases[live[0]], None, graphs
        joined = self._stacks.get(tuple(live))
        if joined is None:
            rank = np.zeros(len(self.bases), dtype=np.int64)
            rank[live] = np.arange(len(live))
            joined = self._stacks[tuple(live)] = (
                TreeBases([self.bases[i] for i in live]), rank)
        return joined[0], joined[1][tree[graphs]], graphs


@functools.lru_cache(maxsize=64)
def _all_graphs(b: int) -> np.ndarray:
    return np.arange(b)


@functools.lru_cache(maxsize=256)
def _is_live(trees: int, live: tuple) -> np.ndarray:
    mask = np.zeros(trees, dtype=bool)
    mask[list(live)] = True
    return mask


@functools.lru_cache(maxsize=256)
def _graph_trees(l_shape: tuple, shape: tuple):
    """Which weight vector of ``l_pairs`` (leading axes ``l_shape``) each graph of a stack
    of ``shape`` is built from (``None`` when there is one), and their number."""
    trees = math.prod(l_shape)
    if trees <= 1:
        return None, 1
    index = np.arange(trees).reshape(l_shape)
    return np.ascontiguousarray(np.broadcast_to(index, shape)).ravel(), trees


_LOG2, _LOG3 = math.log(2.0), math.log(3.0)


def _log_sum(terms) -> float:
    top = max(terms)
    return top + math.log(sum([math.exp(t - top) for t in terms]))


def _tiny_forest_sum(e) -> float:
    """The log sum over the rooted forests of 2 or 3 features, edges ``e`` in triu order:
    each forest weighs the product of its edges times its number of root choices (the
    product of its components' sizes): ``1 + 2 w`` and ``1 + 2 Σ w + 3 Σ w w'``."""
    if len(e) == 1:
        return _log_sum((0.0, _LOG2 + e[0]))
    a, b, c = e
    return _log_sum((0.0, _LOG2 + a, _LOG2 + b, _LOG2 + c, _LOG3 + a + b, _LOG3 + a + c,
                     _LOG3 + b + c))


# The closed sums as (edges of each term, log of its multiplicity), by (forests, m): what
# _tiny_forest_sum and _tiny_tree_sum add up, for a stack at once.
_TINY_EDGES = {(1, 2): np.array([[0.0], [1.0]]),
               (1, 3): np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0],
                                 [1, 0, 1], [0, 1, 1]]),
               (0, 2): np.array([[1.0]]),
               (0, 3): np.array([[1.0, 1, 0], [1, 0, 1], [0, 1, 1]])}
_TINY_CONSTANTS = {(1, 2): np.array([0.0, _LOG2]),
                   (1, 3): np.array([0.0, _LOG2, _LOG2, _LOG2, _LOG3, _LOG3, _LOG3]),
                   (0, 2): np.zeros(1), (0, 3): np.zeros(3)}


def _tiny_tree_sum(e) -> float:
    """The log sum over the spanning trees of 2 or 3 features (edges ``e`` in triu
    order): one edge, or the three paths."""
    if len(e) == 1:
        return float(e[0])
    a, b, c = e
    return _log_sum((a + b, a + c, b + c))


@functools.lru_cache(maxsize=256)
def _triu_flat(g: int, offset: int):
    """Flat indices, in a ``g x g`` matrix, of the entries above and below the diagonal of
    its trailing ``g - offset`` nodes, in ``np.triu_indices(g - offset, 1)`` order."""
    i, j = np.triu_indices(g - offset, 1)
    i, j = i + offset, j + offset
    return i * g + j, j * g + i


@functools.lru_cache(maxsize=256)
def _edge_list(g: int, offset: int):
    """Endpoints of the edge vectors :meth:`RecordTreeSums.__call__` builds: with a root
    node (``offset`` 1) its edges to every feature first, then the feature pairs in triu
    order."""
    i, j = np.triu_indices(g - offset, 1)
    root = np.arange(1, g) if offset else np.zeros(0, dtype=np.int64)
    return (np.concatenate([np.zeros(len(root), dtype=np.int64), i + offset]),
            np.concatenate([root, j + offset]))



@functools.lru_cache(maxsize=256)
def _lower_rows(m: int, root: bool):
    """For each node of the graph (the root node, if any, first and without edges below
    it), the triu-order positions of its feature pairs with the features before it: the
    lower triangle of :meth:`RecordTreeSums.graphs` as lists."""
    rows = [[] for _ in range(m)]
    for p, j in enumerate(np.triu_indices(m, 1)[1].tolist()):
        rows[j].append(p)
    return [[]] * root + rows
