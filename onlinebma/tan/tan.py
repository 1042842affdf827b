"""TAN: Friedman, Geiger & Goldszmidt's tree-augmented naive Bayes, learned per record.

Friedman, N., Geiger, D. & Goldszmidt, M. (1997). Bayesian network classifiers. *Machine
Learning* 29, 131–163. Their procedure (section 4.1, "Construct-TAN"):

1. the weight of every pair of features is the conditional mutual information (their
   eq. 5) of the empirical distribution,
   ``I(X_u; X_v | C) = Σ P̂(x_u, x_v, c) log [P̂(x_u, x_v | c) / (P̂(x_u | c) P̂(x_v | c))]``,
   here computed from the pair table ``N(c, x_u, x_v)`` of
   :class:`~onlinebma.stats.pairs.PairCounts` and that table's own margins, i.e. over the
   records where both features are observed;
2. the maximum-weight spanning tree of the features (Prim's algorithm, the features taken
   in the order of their names, ``str``, so that the tree does not depend on the order they
   were first seen in; ties, weights equal to 1e-12 nats, go to the earlier name);
3. the tree is rooted at the first feature by name and every edge points away from it (the
   root does not change the tree; with per-table smoothing it changes the parameters
   slightly);
4. the class is a parent of every feature.

Parameters are posterior means under a Dirichlet prior of ``alpha`` pseudo-counts per cell of
every conditional table, as Weka's ``SimpleEstimator`` (``-A 0.5``, its default and ours):
``P(c) = (N(c) + α) / (N + α K)``, ``P(x_r | c) = (N(c, x_r) + α) / (N_r(c) + α r_r)`` for the
root and ``P(x_v | x_u, c) = (N(c, x_u, x_v) + α) / (N_uv(c, x_u) + α r_v)`` for a feature
``v`` with parent ``u`` (Friedman et al. smooth differently, eq. 9; Weka's choice is the one
compared with). ``r_v`` and ``K`` count the values and labels seen so far.

Prediction: ``log P(c, x) = log P(c) + Σ_v log P(x_v | x_parent(v), c)`` over the observed
features; an observed feature whose parent is missing (absent, or a value never seen) is
scored by its class-conditional ``P(x_v | c)`` from its single counts instead.

Updating: each record adds its counts (``1 + 2m + 4 m (m-1)/2`` cells for ``m`` observed
features); the weights, the tree and the log tables are recomputed lazily at the first
prediction after the counts changed: ``O(K Σ_uv r_u r_v)`` for the weights (vectorised over
all pair cells), ``O(N²)`` for Prim's algorithm and ``O(K Σ_v r_u r_v)`` for the tables. In
progressive validation that is once per record.
"""

from __future__ import annotations

import numpy as np

from ..stats.pairs import JOINT
from ..validation import check_real
from .base import PLUGIN_PARAMETERS_DOC, BaseTAN

__all__ = ["TAN", "cmi_index", "conditional_mutual_information", "maximum_spanning_tree"]


def conditional_mutual_information(counts, index=None) -> np.ndarray:
    """``I(X_u; X_v | C)`` (nats) of every pair of ``counts`` (a
    :class:`~onlinebma.stats.pairs.PairCounts`) as a symmetric ``(N, N)`` matrix with a zero
    diagonal: eq. 5 of Friedman et al. on the empirical distribution of each pair's table.
    ``index``: :func:`cmi_index` of the counts' current layout, if already at hand.

    >>> from onlinebma.tan.tan import TAN
    >>> m = TAN()
    >>> for a, b, y in [("0", "0", "x"), ("1", "1", "x"), ("0", "1", "y"), ("1", "0", "y")] * 5:
    ...     m.learn_one({"a": a, "b": b, "c": "1"}, y)
    >>> cmi = conditional_mutual_information(m.counts)
    >>> round(float(cmi[0, 1]), 6), round(float(cmi[0, 2]), 6)  # a, b dependent given class
    (0.693147, 0.0)
    >>> bool(cmi[0, 1] == cmi[1, 0])
    True
    """
    n = counts.n_features
    out = np.zeros((n, n))
    if n < 2 or not counts.n_classes:
        return out
    counts.class_counts()  # lays the columns out for the current features
    u_of, v_of, cells, pair, pair_u, pair_v, pair_c, pair_n = index or cmi_index(counts)
    table = counts.counts_
    joint = table[:, cells]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = joint * np.log(joint * table[:, pair_c] / (table[:, pair_u] * table[:, pair_v]))
    terms = np.where(joint > 0, terms, 0.0).sum(axis=0)
    total = table[:, pair_n].sum(axis=0)
    mi = np.bincount(pair, weights=terms, minlength=len(u_of))
    mi = np.divide(mi, total, out=np.zeros_like(mi), where=total > 0)
    out[u_of, v_of] = out[v_of, u_of] = np.maximum(mi, 0.0)  # rounding below 0: 0
    return out


def cmi_index(counts) -> tuple:
    """Column indices :func:`conditional_mutual_information` reads in the counts' current
    layout: every pair's features, and for every joint cell its pair, the cells of its two
    pair margins and of the pair's class count; then every pair's class-count column."""
    n = counts.n_features
    cap = counts.capacity_
    v_of = np.repeat(np.arange(1, n), np.arange(1, n))
    u_of = np.arange(len(v_of)) - v_of * (v_of - 1) // 2
    cu, cv = cap[u_of], cap[v_of]
    cells = np.flatnonzero(counts.column_roles_ == JOINT)
    pair = counts.column_pairs_[cells]
    after = counts.pair_offsets_ + cu * cv  # the first pair margin of every pair
    xu, xv = np.divmod(cells - counts.pair_offsets_[pair], cv[pair])
    pair_n = after + cu + cv
    return (u_of, v_of, cells, pair, after[pair] + xu, after[pair] + cu[pair] + xv,
            pair_n[pair], pair_n)


def maximum_spanning_tree(weights: np.ndarray) -> np.ndarray:
    """Prim's maximum-weight spanning tree of a complete graph, rooted at node 0: the parent
    of every node (``-1`` for the root). Ties go to the lower node.

    >>> w = np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]], dtype=float)
    >>> maximum_spanning_tree(w).tolist()
    [-1, 0, 1]
    """
    n = len(weights)
    parent = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return parent
    best = weights[0].astype(float)
    link = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    done[0] = True
    for _ in range(n - 1):
        v = int(np.argmax(np.where(done, -np.inf, best)))
        done[v] = True
        parent[v] = link[v]
        better = ~done & (weights[v] > best)
        best = np.where(better, weights[v], best)
        link = np.where(better, v, link)
    return parent


class TAN(BaseTAN):
    __doc__ = f"""Tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997), per record.

    One maximum-weight spanning tree over the conditional mutual information of the features
    given the class, and posterior-mean parameters; see the module docstring for the formulas,
    the smoothing and the cost of an update.

    Parameters
    ----------
    alpha : float, default 0.5
        Dirichlet pseudo-count per cell of every conditional table (Weka's ``SimpleEstimator``
        default).
    {PLUGIN_PARAMETERS_DOC}

    Examples
    --------
    >>> from onlinebma.tan.tan import TAN
    >>> model = TAN()
    >>> model.predict_proba_one({{"a": "x"}})
    {{}}
    >>> for a, b, y in [("p", "p", 1), ("q", "q", 1), ("p", "q", 0), ("q", "p", 0)] * 10:
    ...     model.learn_one({{"a": a, "b": b, "noise": "n"}}, y)
    >>> model.tree()
    {{'a': None, 'b': 'a', 'noise': 'a'}}
    >>> p = model.predict_proba_one({{"a": "p", "b": "p"}})
    >>> round(p[1], 4), round(p[0], 4)
    (0.9545, 0.0455)
    """

    def __init__(self, alpha: float = 0.5, decay: float | str = 1.0,
                 nominal_attributes: list | None = None, numeric: str = "5 intervals",
                 sample_size: int = 200, numeric_attributes: list | None = None):
        check_real("alpha", alpha, 0.0, strict=True)
        super().__init__(decay=decay, nominal_attributes=nominal_attributes, numeric=numeric,
                         sample_size=sample_size, numeric_attributes=numeric_attributes)
        self.alpha = alpha
        self._model = None  # (parent, log prior, log table, offsets) or None when stale
        self._index = None  # (layout key, cmi_index) of the counts' layout

    def __getstate__(self):
        return {**super().__getstate__(), "_model": None, "_index": None}

    def _learning(self, c, codes, values, columns, grew, memo) -> None:
        self._model = None

    def _refresh(self) -> None:
        self._model = None

    # ------------------------------------------------------------------ the model

    def _fit(self):
        """The tree and the log tables from the current counts (see the module docstring)."""
        if self._model is not None:
            return self._model
        counts = self.counts
        n = counts.n_features
        a = self.alpha * self._unit  # pseudo-counts in the counts' scaled unit
        counts.class_counts()  # lays the columns out for the current features
        key = (counts.n_features, counts.capacity_.tobytes())
        if self._index is None or self._index[0] != key:
            self._index = (key, cmi_index(counts))
        parent = self._tree(conditional_mutual_information(counts, self._index[1]))
        n_class = counts.class_counts()
        k = len(n_class)
        log_prior = np.log(n_class + a) - np.log(n_class.sum() + a * k)
        blocks, single_at, cond_at, at = [], np.zeros(n, np.int64), np.zeros(n, np.int64), 0
        r = counts.n_values
        for v in range(n):
            single, margin = counts.single(v)
            blocks.append(np.log(single + a) - np.log(margin + a * r[v])[:, None])
            single_at[v], at = at, at + r[v]
            u = parent[v]
            if u >= 0:
                joint, margin_u, _, _ = counts.pair(u, v)
                cond = np.log(joint + a) - np.log(margin_u + a * r[v])[:, :, None]
                blocks.append(cond.reshape(k, -1))
                cond_at[v], at = at, at + r[u] * r[v]
        blocks.append(np.zeros((k, 1)))  # the last column: a skipped feature's 0
        table = np.concatenate(blocks, axis=1)
        self._model = (parent, log_prior, table, single_at, cond_at, r)
        return self._model

    def _tree(self, weights: np.ndarray) -> np.ndarray:
        """Parents (feature codes, -1 for the root) of the maximum spanning tree, built in the
        order of the features' names so that it does not depend on the order features were
        first seen in (``learn_one``, ``learn_many`` and ``merge`` give the same tree)."""
        names = self.counts.features_
        order = np.array(sorted(range(len(names)),
                                key=lambda i: (str(names[i]), type(names[i]).__name__)),
                         dtype=np.int64)
        # Weights equal to 1e-12 nats are ties: the same counts laid out in another order
        # sum in another order, and must not give another tree.
        ranked = maximum_spanning_tree(np.round(weights[np.ix_(order, order)], 12))
        parent = np.full(len(order), -1, dtype=np.int64)
        parent[order] = np.where(ranked >= 0, order[np.maximum(ranked, 0)], -1)
        return parent

    def _cells(self, codes: np.ndarray) -> np.ndarray:
        """Columns of the log table for an int matrix of value codes (-1: missing)."""
        parent, _, table, single_at, cond_at, r = self._fit()
        n = len(parent)
        padded = np.concatenate([codes, np.full((len(codes), 1), -1)], axis=1)
        pv = padded[:, np.where(parent >= 0, parent, n)]
        cells = np.where(pv >= 0, cond_at + pv * r + codes, single_at + codes)
        return np.where(codes >= 0, cells, table.shape[1] - 1)

    def _joint_log_likelihood(self, codes, values, columns):
        _, log_prior, table, *_ = self._fit()
        row = np.full((1, self.counts.n_features), -1, dtype=np.int64)
        row[0, codes] = values
        return log_prior + table[:, self._cells(row)[0]].sum(axis=1), None

    def _joint_log_likelihood_many(self, codes):
        _, log_prior, table, *_ = self._fit()
        cells = self._cells(codes)
        return log_prior + np.stack([table[c, cells].sum(axis=1) for c in range(len(table))],
                                    axis=1)

    # ------------------------------------------------------------------ reading

    def draw(self):
        """The current tree as a graphviz graph (:func:`onlinebma.drawing.dependency_graph`):
        the class points to every feature, the tree's edges drawn at probability 1.

        Returns
        -------
        graphviz.Graph
            Needs the optional ``graphviz`` package (``pip install "onlinebma[draw]"``).
        """
        from ..drawing import dependency_graph

        tree = self.tree()
        edges = {(parent, f): 1.0 for f, parent in tree.items() if parent is not None}
        return dependency_graph(list(tree), edges)

    def tree(self) -> dict:
        """``{feature: its parent feature, or None for the root}`` of the current tree; with
        ``decay="auto"``, the tree of the most probable rate's clone (ties to the first rate
        of the grid), the learner ``counts`` shows too."""
        if self._auto:
            return self._shown().tree()
        if not self.counts.n_classes:
            return {}
        parent = self._fit()[0]
        names = self.counts.features_
        return {f: (names[p] if p >= 0 else None) for f, p in zip(names, parent)}

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"alpha": 1.0}
        yield {"decay": 0.9, "sample_size": 10}  # numeric intervals within the checks
        yield {"decay": "auto"}
