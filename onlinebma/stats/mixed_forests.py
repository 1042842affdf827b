"""Exact averaging over forest- and tree-augmented structures of nominal and numeric features.

The structures: the class ``C`` parents every feature and each feature has at most one feature
parent (docs/tan.md, /work/shared/notes/numbers.md). Features are ordered nominal first
(``0 .. A-1``), then numeric (``A .. A+D-1``). The families, per class ``c``:

- nominal ``v``: a Dirichlet over its values (root) or over its values per value of a nominal
  parent ``u``, all margins of one joint Dirichlet of size ``ess`` over the (class, x_u, x_v)
  cells (docs/tan.md: ``a_c = ess/K``, ``a_cu = ess/(K r_u)``, ``a_cuv = ess/(K r_u r_v)``);
  a numeric parent of a nominal child has no conjugate family: the edge is disallowed;
- numeric ``v``, root or with a numeric parent ``u``: the margins over ``{v}`` and ``{u, v}``
  of one Normal–Wishart prior per class (Geiger & Heckerman 2002, the BGe score with the
  constants of Kuipers, Moffa & Heckerman 2014): score equivalence makes ``v | u`` the joint
  ``{u, v}`` over ``{u}``;
- numeric ``v`` with a nominal parent ``u``: one Gaussian for ``v`` per value of ``u`` (per
  class), each with the ``{v}`` margin of the prior.

Then ``log P(D | G) = sum_v log ML(v alone) + sum_{u -> v in G} l(u -> v)`` with the directed
edge log weights ``l(u -> v) = sum_c [log ML_c(v | u) - log ML_c(v)]`` (symmetric for two
nominal or two numeric features), and with the posterior predictive of every family the joint
of a record under ``G`` is ``theta_c prod_v p_c(x_v) prod_{u -> v in G} Q_c(x)(u -> v)``,
``Q_c(x)(u -> v) = p_c(x_v | x_u) / p_c(x_v)``. Summing over every structure with Tutte's
theorem (:mod:`onlinebma.stats.directed_forests`; ``F`` the log forest sum with the edge prior
``beta`` per feature–feature edge, or the log tree sum)::

    log P(c, x | D) = log theta_c + sum_v log p_c(x_v) + F(l + log Q_c(x)) - F(l)

Learning ``(x, y)`` multiplies every family's marginal likelihood by its predictive (the chain
rule), so ``l += log Q_y(x)``; with forgetting the prequential recursion of the counts version
applies unchanged (docs/tan.md, *Forgetting*): ``l <- alpha (l + log Q_y(x))`` with the
statistics current before the record, then the statistics forget by ``lambda`` and learn it.

:class:`onlinebma.tan.mixed_statistics.MixedStatistics` keeps the per-class statistics and
computes ``l`` in closed form and a record's terms; :func:`log_joint_scores`,
:func:`learned_weights` and :func:`edge_posteriors` here work on stacks of members (leading
axes) so that a learner can stack its members.

The numeric families' scores and predictives are those of :mod:`onlinebma.stats.normal_wishart`.
"""

from __future__ import annotations

import numpy as np

from .directed_forests import (
    directed_edge_probabilities,
    directed_tree_edge_probabilities,
    log_directed_forest_sum,
    log_directed_tree_sum,
)

__all__ = ["edge_posteriors", "learned_weights", "log_joint_scores"]


def _structure_sums(log_weights, log_edge_prior: float, structures: str):
    """``F`` of a stack of directed log weights ``(..., N, N)``."""
    if structures == "forests":
        n = log_weights.shape[-1]
        return log_directed_forest_sum(log_weights + log_edge_prior,
                                       np.zeros(log_weights.shape[:-2] + (n,)))
    if structures == "trees":
        return log_directed_tree_sum(log_weights)
    raise ValueError(f"structures must be 'forests' or 'trees', not {structures!r}")


def log_joint_scores(log_weights, base, log_q, log_edge_prior: float = 0.0,
                     structures: str = "forests") -> np.ndarray:
    """``log P(c, x | D)`` of every class averaged over every structure: ``base_c + F(l +
    log Q_c(x)) - F(l)`` (module docstring), the ``K`` numerators and the denominator of each
    member eliminated as one stack.

    Parameters
    ----------
    log_weights : numpy.ndarray, shape (..., N, N)
        Directed edge log weights ``l(u -> v)`` at ``[..., u, v]`` (``-inf``: disallowed;
        the diagonal is ignored). Leading axes: members.
    base : numpy.ndarray, shape (..., K)
        ``log theta_c + sum_v log p_c(x_v)``: the record's joint under naive Bayes.
    log_q : numpy.ndarray, shape (..., K, N, N)
        ``log Q_c(x)(u -> v)``; any finite value where the edge is disallowed.
    log_edge_prior : float, default 0.0
        Log prior weight of each feature–feature edge (forests).
    structures : str, default "forests"
        ``"forests"`` (every forest-augmented structure) or ``"trees"`` (every tree with any
        root).

    Returns
    -------
    numpy.ndarray, shape (..., K)
        Unnormalised log joint of each class and the record.

    Examples
    --------
    One nominal feature ``u`` and one numeric ``v``: only ``u -> v`` allowed, at weight 1
    (log 0), and a record that doubles it for class 1:

    >>> import numpy as np
    >>> l = np.array([[0.0, 0.0], [-np.inf, 0.0]])
    >>> log_q = np.zeros((2, 2, 2))
    >>> log_q[1, 0, 1] = np.log(2.0)
    >>> s = log_joint_scores(l, np.zeros(2), log_q)
    >>> [round(float(x), 12) for x in np.exp(s)]  # (1 + 2) / (1 + 1) forests
    [1.0, 1.5]
    """
    w = np.asarray(log_weights, dtype=float)[..., None, :, :]
    graphs = np.concatenate([w, w + np.asarray(log_q, dtype=float)], axis=-3)
    sums = _structure_sums(graphs, log_edge_prior, structures)
    return np.asarray(base, dtype=float) + sums[..., 1:] - sums[..., :1]


def learned_weights(log_weights, log_q_label, structure_decay: float = 1.0) -> np.ndarray:
    """The edge log weights after learning a record of class ``y``: ``alpha (l + log Q_y(x))``
    (the chain rule; with ``structure_decay`` ``alpha < 1`` the prequential recursion of the
    dynamic model average over structures). Disallowed edges stay ``-inf``.

    Parameters
    ----------
    log_weights : numpy.ndarray, shape (..., N, N)
        ``l`` before the record.
    log_q_label : numpy.ndarray, shape (..., N, N)
        ``log Q_y(x)`` of the record's class, from the statistics before the record.
    structure_decay : float, default 1.0
        ``alpha`` in ``(0, 1]``.

    Returns
    -------
    numpy.ndarray, shape (..., N, N)

    Examples
    --------
    >>> import numpy as np
    >>> learned_weights(np.array([[0.0, 2.0], [-np.inf, 0.0]]), np.ones((2, 2)), 0.5)
    array([[ 0.5,  1.5],
           [-inf,  0.5]])
    """
    return structure_decay * (np.asarray(log_weights, dtype=float) + log_q_label)


def edge_posteriors(log_weights, log_edge_prior: float = 0.0, structures: str = "forests"):
    """Posterior probability of each directed edge and of each feature having no feature
    parent, over every forest-augmented structure
    (:func:`~onlinebma.stats.directed_forests.directed_edge_probabilities` of ``l + log
    beta``) or every tree-augmented one
    (:func:`~onlinebma.stats.directed_forests.directed_tree_edge_probabilities` of ``l``).

    Parameters
    ----------
    log_weights : numpy.ndarray, shape (..., N, N)
        Directed edge log weights ``l``.
    log_edge_prior : float, default 0.0
        Log prior weight of each feature–feature edge (forests).
    structures : str, default "forests"
        ``"forests"`` or ``"trees"``.

    Returns
    -------
    edges : numpy.ndarray, shape (..., N, N)
        ``P(u -> v | D)`` at ``[..., u, v]``.
    roots : numpy.ndarray, shape (..., N)
        ``P(v has no feature parent | D)``.

    Examples
    --------
    >>> import numpy as np
    >>> edges, roots = edge_posteriors(np.array([[0.0, 0.0], [-np.inf, 0.0]]))
    >>> float(edges[0, 1]), roots.tolist()
    (0.5, [1.0, 0.5])
    >>> edges, roots = edge_posteriors(np.array([[0.0, 0.0], [-np.inf, 0.0]]), 0.0, "trees")
    >>> float(edges[0, 1]), roots.tolist()
    (1.0, [1.0, 0.0])
    """
    w = np.asarray(log_weights, dtype=float)
    if structures == "trees":
        return directed_tree_edge_probabilities(w)
    if structures != "forests":
        raise ValueError(f"structures must be 'forests' or 'trees', not {structures!r}")
    n = w.shape[-1]
    return directed_edge_probabilities(w + log_edge_prior, np.zeros(w.shape[:-2] + (n,)))
