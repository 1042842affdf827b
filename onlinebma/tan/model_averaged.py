"""Exact Bayesian model averaging over every tree- or forest-augmented naive Bayes structure.

See :class:`ModelAveragedTAN` and the method page ``docs/tan.md`` for the formulas.
"""

from __future__ import annotations

import numpy as np

from ..stats.unique import unique_rows
from ..validation import check_choice, check_decay, check_real
from .base import BaseTAN
from .narrow import NARROW_CELLS, narrow_predictions
from .rates import SharedTreeRates
from .tree_terms import TreeTerms

__all__ = ["ModelAveragedTAN"]

class ModelAveragedTAN(BaseTAN):
    r"""Exact Bayesian model averaging over all tree- or forest-augmented naive Bayes networks.

    The class is a parent of every feature and each feature has at most one other feature as
    parent. ``structures="trees"`` averages over every spanning tree of the features (TBMATAN:
    Meilă & Jaakkola 2000/2006; Cerquides & López de Mántaras 2005); ``"forests"`` over every
    forest-augmented DAG, i.e. naive Bayes, every TAN and everything between, with the prior
    uniform over these DAGs times ``edge_prior`` per feature–feature edge (the DAGs are the
    rooted spanning forests, summed by the matrix-forest theorem).

    The parameter prior is one joint Dirichlet sample of size ``ess`` spread uniformly over the
    (class, X_u, X_v) cells: ``a_c = ess/K``, ``a_cu = ess/(K r_u)``, ``a_cuv = ess/(K r_u
    r_v)``, with ``K`` classes and ``r_u`` values seen so far, so every family's Dirichlet is
    a margin of one table and the likelihood does not depend on the roots. The marginal
    likelihood of a structure is then the naive one times ``prod_{uv in G} W_uv`` with

    .. math:: \log W_{uv} = h(CUV) - h(CU) - h(CV) + h(C),\quad
              h(S) = \sum_{\text{cells of } S} \ln\Gamma(a + n) - \ln\Gamma(a),

    over the pair table ``N(c, x_u, x_v)`` and its margins, and the prediction is

    .. math:: P(c \mid x) \propto \theta_c \prod_v \theta_{x_v \mid c}\,
              \exp\bigl(LT(l + \log Q_c(x)) - LT(l)\bigr),\quad
              Q_c(x)_{uv} = \frac{\theta_{x_u x_v \mid c}}{\theta_{x_u \mid c}\,
              \theta_{x_v \mid c}},

    with ``l = log W`` (plus ``log edge_prior`` for forests), posterior means θ and ``LT``
    the log of the sum over spanning trees (forests) of the product of edge weights
    (:mod:`onlinebma.stats.spanning`: positive terms only, exact at any spread of the weights).

    Learning a record without a new value or class adds ``log Q_y(x)`` (computed just
    before) to ``l`` (the chain rule), O(pairs); a new value or class recomputes ``l`` from
    the counts. Missing values: each pair is counted over the records where both features
    are observed, and ``l`` and ``Q`` of a pair come from that pair table and its margins; a
    prediction averages over the structures of its observed features only.

    Parameters
    ----------
    structures
        ``"forests"`` (default) or ``"trees"``. Forests had a lower mean error and log loss
        than trees at every ``ess`` measured (12 shared UCI sets, 5 folds, MDL per fold:
        docs/tan.md), and they include naive Bayes, which trees cannot fall back to.
    ess
        Equivalent sample size of the joint Dirichlet prior. Default 10 (docs/tan.md): on
        held-out UCI data the mean log loss falls with ``ess`` (0.5 to 50) while the mean
        error moves within the spread between fold draws, but on streams with forgetting the
        effective sample is small and a large ``ess`` over-smooths (``decay="auto"``, first
        2,000 records: log loss 0.39 -> 0.42 on Elec2 and 0.19 -> 0.30 on STAGGER from 10 to
        50). At 10 the mean error and log loss on the UCI sets are below Weka's TAN and AODE
        (docs/results/tan.md).
    edge_prior
        Prior weight of each feature–feature edge relative to none (forests only).
    decay
        λ in (0, 1]: every count is multiplied by λ after each learned record (the prior
        pseudo-counts are not), or ``"auto"``: learners over a grid of rates averaged with
        dynamic-model-averaging weights (as
        :class:`~onlinebma.naive_bayes.decay.RateMixture`), computed as one state with a
        member axis (:class:`~onlinebma.tan.rates.SharedTreeRates`).
    structure_decay
        α in (0, 1]: the structure posterior is flattened after each record,
        ``l <- α (l + log Q_y(x))`` (prequential, with the counts and priors current before
        the record; the prior over structures is applied outside, not flattened).
    nominal_attributes
        Features to treat as nominal even though their values are numbers.
    n_bins, bin_warmup
        Numeric features: intervals and warm-up of :mod:`onlinebma.tan.binning`.

    Examples
    --------
    >>> from onlinebma.tan import ModelAveragedTAN
    >>> model = ModelAveragedTAN()
    >>> model.predict_proba_one({"sky": "sunny"})
    {}
    >>> data = [({"sky": "sunny", "wind": "calm", "sea": "flat"}, "beach"),
    ...         ({"sky": "rain", "wind": "storm", "sea": "rough"}, "home"),
    ...         ({"sky": "sunny", "wind": "storm", "sea": "rough"}, "home"),
    ...         ({"sky": "sunny", "wind": "calm", "sea": "flat"}, "beach")]
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> p = model.predict_proba_one({"sky": "sunny", "wind": "calm"})
    >>> max(p, key=p.get)
    'beach'
    >>> edges = model.edge_posteriors()
    >>> sorted(edges) == [("sky", "sea"), ("sky", "wind"), ("wind", "sea")]
    True
    """

    def __init__(self, structures: str = "forests", ess: float = 10.0, edge_prior: float = 1.0,
                 decay: float | str = 1.0, structure_decay: float = 1.0,
                 nominal_attributes: list | None = None, n_bins: int = 5,
                 bin_warmup: int = 200):
        super().__init__(decay=decay, nominal_attributes=nominal_attributes, n_bins=n_bins,
                         bin_warmup=bin_warmup)
        check_choice("structures", structures, ("forests", "trees"))
        check_real("ess", ess, 0.0, strict=True)
        check_real("edge_prior", edge_prior, 0.0, strict=True)
        check_decay("structure_decay", structure_decay, auto=False)
        self.structures = structures
        self.ess = ess
        self.edge_prior = edge_prior
        self.structure_decay = structure_decay
        self._forests = structures == "forests"
        self._forgets = self._forgets or (not self._auto and structure_decay != 1)
        self._l = np.zeros(0)  # l_uv per pair id: log W_uv, or the prequential recursion
        # (observed features, LT(l) over them) while l has not changed otherwise: learning a
        # predicted record makes the next denominator the numerator of its class
        self._denominator = None
        self._tree = TreeTerms(ess, self._forests, edge_prior)

    def __getstate__(self):  # the prediction cache is derived, not state
        return {**super().__getstate__(), "_denominator": None}

    @classmethod
    def _unit_test_params(cls):
        # the other structures, forgetting of both kinds and small intervals in one set
        yield {"structures": "trees", "ess": 2.0, "decay": 0.99, "structure_decay": 0.99,
               "n_bins": 3, "bin_warmup": 10}

    # ---------------------------------------------------------------- weights

    @property
    def edge_log_weights(self) -> np.ndarray:
        """``l_uv`` of every pair of features learned, by pair id
        (:func:`~onlinebma.stats.pairs.pair_id`), a copy: ``log W_uv`` from the counts without
        forgetting, the prequential recursion with it (``decay="auto"``: this learner's own,
        empty)."""
        return self._l.copy()


    def _refresh(self) -> None:
        """``l = log W`` of every pair from the counts."""
        counts = self._counts
        self._denominator = None
        self._l = self._tree.log_weights(counts, counts.counts_, self._unit)

    def _rate_mixture(self):
        """``decay="auto"``: the members over the rates as one state
        (:class:`~onlinebma.tan.rates.SharedTreeRates`)."""
        if self._rates is None:
            self._rates = SharedTreeRates(
                self.structures, self.ess, self.edge_prior, self.structure_decay,
                self.nominal_attributes, self.n_bins, self.bin_warmup)
        return self._rates

    # -------------------------------------------------------------- per record

    def _plan(self, codes):
        """``(pair ids, prior)`` of a set of observed features (:meth:`TreeTerms.plan`)."""
        return self._tree.plan(self._counts, codes, self._counts.n_classes)

    def _joint_log_likelihood(self, codes, values, columns):
        counts = self._counts
        ids, prior = self._plan(codes)
        key = codes.tobytes()
        current = self._denominator is not None and self._denominator[0] == key
        if counts.n_classes * len(columns) <= NARROW_CELLS:
            jll, memo, d = narrow_predictions(
                self._tree, self._t, codes, ids, prior,
                [counts.counts_.take(columns, axis=1).tolist()], [self._unit],
                [self._l.take(ids).tolist()], [self._denominator[1]] if current else None)
            if d is not None:
                self._denominator = (key, d[0])
            return jll[0], memo[0]
        m = len(codes)
        base, log_q = self._tree.record(m, counts.counts_.take(columns, axis=1), prior,
                                        self._unit)
        if m < 2:
            return base, (log_q, None)
        l_pairs = self._l.take(ids)
        sums = self._tree.sums
        if current:
            lt = sums(key, m, l_pairs, log_q, self._t)
            denominator = self._denominator[1]
        else:
            lt = sums(key, m, l_pairs, np.vstack([log_q, np.zeros(len(ids))]), self._t)
            lt, denominator = lt[:-1], lt[-1]
            self._denominator = (key, denominator)
        return base + lt - denominator, (log_q, lt)

    def _learning(self, c, codes, values, columns, grew, memo) -> None:
        n_pairs = self._counts.n_pairs
        if len(self._l) < n_pairs:  # pairs of new features start from l = 0 (no counts)
            self._l = np.concatenate([self._l, np.zeros(n_pairs - len(self._l))])
        if grew and not self._forgets:
            return  # _refresh recomputes l from the counts after this record
        ids, prior = self._plan(codes)
        self._denominator = None
        if memo is None:
            log_q = self._tree.record(len(codes), self._counts.counts_[[c]][:, columns], prior,
                                      self._unit)[1][0]
        else:
            log_q = memo[0][c]
        self._l.put(ids, self._l.take(ids) + log_q)  # self._l[ids] += log_q, cheaper
        if self.structure_decay != 1:
            self._l *= self.structure_decay
        elif memo is not None and memo[1] is not None:  # LT(l + log Q_c): computed already
            self._denominator = (codes.tobytes(), memo[1][c])

    # --------------------------------------------------------------- batches

    def _joint_log_likelihood_many(self, codes):
        # identical coded rows (frequent after discretisation) are computed once
        distinct, back, _ = unique_rows(codes)
        return self._distinct_rows(distinct)[back]

    def _distinct_rows(self, codes):
        return self._tree.batch(self._counts, self._counts.counts_, self._unit, self._l, codes,
                                self._t)

    # ------------------------------------------------------------ structures

    def edge_posteriors(self) -> dict:
        """``{(u, v): P(edge u–v | data)}`` for every pair of features learned (in the order
        first seen): the exact posterior probability that the structure joins ``u`` and
        ``v`` (either direction), from the current ``l``; with ``decay="auto"`` averaged over
        the rates with :meth:`decay_posterior`."""
        if self._auto:
            return self._rate_mixture().edge_posteriors()
        return self._tree.edge_posteriors(self._counts, self._l, self._counts.n_classes)
