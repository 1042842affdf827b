"""Exact Bayesian model averaging over every tree- or forest-augmented naive Bayes structure.

See :class:`ModelAveragedTAN` and the method page ``docs/tan.md`` for the formulas.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln

from ..naive_bayes.decay import check_decay
from ..order_mcmc.order_model import unique_rows
from ..stats.pairs import JOINT, PAIR_CLASS, PAIR_U, PAIR_V, VALUE, pair_id, pairs_of
from ..stats.spanning import edge_probabilities
from ..validation import check_choice, check_real
from .base import BaseTAN
from .narrow import NARROW_CELLS, NarrowRecords
from .record_sums import RecordTreeSums

__all__ = ["ModelAveragedTAN"]

# Matrix entries per log_tree_sum call of predict_proba_many: small enough for the arrays of
# each elimination step to stay in cache, large enough to amortise numpy's per-call overhead
# over the nodes (measured: 2^18 against 2^12-2^21 with 20 and 60 features, docs/tan.md).
_BATCH_ENTRIES = 1 << 18


class ModelAveragedTAN(NarrowRecords, BaseTAN):
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
        dynamic-model-averaging weights (:class:`~onlinebma.naive_bayes.decay.RateMixture`).
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
        self._plans: dict = {}  # derived per set of observed features (see _plan)
        self._plans_version = -1
        # (observed features, LT(l) over them) while l has not changed otherwise: learning a
        # predicted record makes the next denominator the numerator of its class
        self._denominator = None
        self._sums = RecordTreeSums(self._forests, math.log(edge_prior))

    def __getstate__(self):  # the caches are derived, not state
        return {**super().__getstate__(), "_plans": {}, "_plans_version": -1,
                "_denominator": None, "_sums": RecordTreeSums(self._forests,
                                                              math.log(self.edge_prior))}

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
        """``l = log W`` of every pair from the counts (``h`` over each pair table and its
        margins, vectorised over all columns; spare cells count 0)."""
        counts = self._counts
        n_pairs = counts.n_pairs
        k = counts.n_classes
        self._denominator = None
        if not n_pairs or not k:
            self._l = np.zeros(n_pairs)
            return
        pairs, roles = counts.column_pairs_, counts.column_roles_
        cols = np.flatnonzero(pairs >= 0)
        p, role = pairs[cols], roles[cols]
        a = self._column_prior()[cols] * self._unit
        n = counts.counts_[:, cols]
        h = (gammaln(a + n) - gammaln(a)).sum(axis=0)
        sign = np.where((role == JOINT) | (role == PAIR_CLASS), 1.0, -1.0)
        self._l = np.bincount(p, weights=sign * h, minlength=n_pairs)

    def _column_prior(self) -> np.ndarray:
        """The prior pseudo-count (per unit of counts) of every column of the counts: ess/K
        spread over the cells of the column's table (``a_c``, ``a_cu``, ``a_cuv``)."""
        counts = self._counts
        r = counts.n_values.astype(float)
        roles, pairs = counts.column_roles_, counts.column_pairs_
        cells = np.ones(len(roles))
        cap = counts.capacity_
        owner = np.repeat(np.arange(len(cap)), cap + 1)  # the single columns' features
        single = slice(1, 1 + len(owner))
        cells[single] = np.where(roles[single] == VALUE, r[owner], 1.0)
        cols = np.flatnonzero(pairs >= 0)
        p, role = pairs[cols], roles[cols]
        u, v = pairs_of(counts.n_features)
        ru, rv = r[u[p]], r[v[p]]
        cells[cols] = np.select([role == JOINT, role == PAIR_U, role == PAIR_V],
                                [ru * rv, ru, rv], 1.0)
        return self.ess / (counts.n_classes * cells)

    # -------------------------------------------------------------- per record

    def _plan(self, codes):
        """``(pair ids, prior)`` of a set of observed features: the pair ids in triu order
        and the prior pseudo-count (per unit of counts) of every column of
        ``record_columns``; cached until a class, feature or value is added."""
        counts = self._counts
        if self._plans_version != counts.version:
            self._plans, self._plans_version = {}, counts.version
            self._sums.clear()
        key = codes.tobytes()
        plan = self._plans.get(key)
        if plan is None:
            m = len(codes)
            i, j = np.triu_indices(m, 1)
            ac = self.ess / counts.n_classes
            r = counts.n_values[codes].astype(float)
            prior = np.concatenate([[ac], ac / r, np.full(m, ac), ac / (r[i] * r[j]),
                                    ac / r[i], ac / r[j], np.full(len(i), ac)])
            plan = self._plans[key] = (pair_id(codes[i], codes[j]), prior)
        return plan

    def _terms(self, codes, gathered, prior, unit=None):
        """``(log θ_c + Σ_v log θ_{x_v|c}, log Q_c(x))`` of a record from its gathered
        counts (``(..., K, L)``, the columns of ``record_columns``): the class and single
        terms, and ``log Q_c(x)_uv`` of its observed pairs (triu order) at posterior means
        from each pair table and its margins. ``unit``: the scaled unit of the counts
        (default this learner's; an array ``(..., 1)`` for stacked members)."""
        u = self._unit if unit is None else unit
        if unit is not None:
            prior = prior * unit[..., None]
        elif u != 1.0:
            prior = prior * u
        lg = np.log(prior + gathered)
        total = gathered[..., 0].sum(axis=-1, keepdims=True)
        return self._log_terms(len(codes), lg, np.log(self.ess * u + total))

    @staticmethod
    def _log_terms(m, lg, log_norm):
        """:meth:`_terms` from the logs ``lg`` of the gathered counts plus their prior and
        ``log_norm`` = log(ess + N) (per unit)."""
        p = m * (m - 1) // 2
        s = 1 + 2 * m
        # class count + value cells - feature margins, as one product
        base = lg[..., :s] @ _single_signs(m) - log_norm
        # joint + pair class count - the two pair margins, as one product
        log_q = np.matmul(_PAIR_SIGNS, lg[..., s:].reshape(*lg.shape[:-1], 4, p))
        return base, log_q

    def _joint_log_likelihood(self, codes, values, columns):
        counts = self._counts
        ids, prior = self._plan(codes)
        if counts.n_classes * len(columns) <= NARROW_CELLS:
            return self._narrow_predictions([self], codes, ids, prior, columns)[0]
        base, log_q = self._terms(codes, counts.counts_.take(columns, axis=1), prior)
        m = len(codes)
        if m < 2:
            return base, (log_q, None)
        l_pairs = self._l.take(ids)
        key = codes.tobytes()
        if self._denominator is not None and self._denominator[0] == key:
            lt = self._sums(key, m, l_pairs, log_q, self._t)
            denominator = self._denominator[1]
        else:
            lt = self._sums(key, m, l_pairs, np.vstack([log_q, np.zeros(len(ids))]), self._t)
            lt, denominator = lt[:-1], lt[-1]
            self._denominator = (key, denominator)
        return base + lt - denominator, (log_q, lt)

    def _predict_members(self, members, x) -> None:
        """The predictions of every member of a ``decay="auto"`` mixture at once: the record
        is read and coded once (the members learned the same records, so their codes and
        layouts are equal), their counts gathered into one stack and all their tree sums
        eliminated together (one loop over the nodes instead of one per member); each
        member keeps its own result as if it had predicted ``x`` itself."""
        first = members[0]
        counts = first._counts
        if not counts.n_classes or any(m._counts.version != counts.version or
                                       m._counts.counts_.shape != counts.counts_.shape
                                       for m in members):
            return
        codes, values, columns, split = first._read_record(x)
        ids, prior = first._plan(codes)
        if len(members) * counts.n_classes * len(columns) <= NARROW_CELLS:
            for member, (jll, memo) in zip(members, first._narrow_predictions(
                    members, codes, ids, prior, columns)):
                member._remember(x, codes, values, columns, split, memo, jll)
            return
        gathered = np.stack([m._counts.counts_.take(columns, axis=1) for m in members])
        units = np.array([[m._unit] for m in members])
        base, log_q = first._terms(codes, gathered, prior, units)
        m = len(codes)
        if m < 2:
            for r, member in enumerate(members):
                member._remember(x, codes, values, columns, split, (log_q[r], None), base[r])
            return
        key = codes.tobytes()
        l_pairs = np.stack([member._l.take(ids) for member in members])[:, None, :]
        cached = [member._denominator for member in members]
        if all(d is not None and d[0] == key for d in cached):
            lt = first._sums(key, m, l_pairs, log_q, first._t)
            denominator = np.array([d[1] for d in cached])
        else:
            zeros = np.zeros((len(members), 1, len(ids)))
            lt = first._sums(key, m, l_pairs, np.concatenate([log_q, zeros], 1), first._t)
            lt, denominator = lt[:, :-1], lt[:, -1]
            for member, d in zip(members, denominator.tolist()):
                member._denominator = (key, d)
        jll = base + lt - denominator[:, None]
        for r, member in enumerate(members):
            member._remember(x, codes, values, columns, split, (log_q[r], lt[r]), jll[r])

    def _learning(self, c, codes, values, columns, grew, memo) -> None:
        n_pairs = self._counts.n_pairs
        if len(self._l) < n_pairs:  # pairs of new features start from l = 0 (no counts)
            self._l = np.concatenate([self._l, np.zeros(n_pairs - len(self._l))])
        if grew and not self._forgets:
            return  # _refresh recomputes l from the counts after this record
        ids, prior = self._plan(codes)
        self._denominator = None
        if memo is None:
            log_q = self._terms(codes, self._counts.counts_[[c]][:, columns], prior)[1][0]
        else:
            log_q = memo[0][c]
        self._l[ids] += log_q
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
        counts = self._counts
        k = counts.n_classes
        out = np.zeros((len(codes), k))
        # the logs of every count plus its prior, once for all rows
        log_counts = np.log(self._column_prior() * self._unit + counts.counts_)
        log_norm = np.log(self.ess * self._unit + counts.counts_[:, 0].sum())
        present = codes >= 0
        patterns, which = np.unique(present, axis=0, return_inverse=True)
        which = which.ravel()
        for g, pattern in enumerate(patterns):
            members = np.flatnonzero(which == g)
            obs = np.flatnonzero(pattern)
            m = len(obs)
            ids = self._plan(obs)[0]
            l_pairs = self._l[ids]
            key = obs.tobytes()
            if m >= 2:
                denominator = self._sums(key, m, l_pairs, np.zeros((1, len(ids))), self._t)
            step = max(1, _BATCH_ENTRIES // (k * (m * m + 2 * len(ids) + 2 * m + 1)))
            for start in range(0, len(members), step):
                rows_g = members[start:start + step]
                columns = counts.record_columns(obs, codes[np.ix_(rows_g, obs)])
                lg = log_counts.take(columns, axis=1).transpose(1, 0, 2)  # (rows, K, L)
                base, log_q = self._log_terms(m, lg, log_norm)
                out[rows_g] = base
                if m >= 2:
                    out[rows_g] += self._sums(key, m, l_pairs, log_q, self._t) - denominator
        return out

    # ------------------------------------------------------------ structures

    def edge_posteriors(self) -> dict:
        """``{(u, v): P(edge u–v | data)}`` for every pair of features learned (in the order
        first seen): the exact posterior probability that the structure joins ``u`` and
        ``v`` (either direction), from the current ``l``; with ``decay="auto"`` averaged over
        the rates with :meth:`decay_posterior`."""
        if self._auto:
            mixture = self._rate_mixture()
            out: dict = {}
            for member, lw in zip(mixture.members, mixture.log_weights):
                for e, p in member.edge_posteriors().items():
                    out[e] = out.get(e, 0.0) + math.exp(lw) * p
            return out
        counts = self._counts
        n = counts.n_features
        n_pairs = counts.n_pairs
        if n_pairs == 0:
            return {}
        l_pairs = np.zeros(n_pairs)
        l_pairs[:len(self._l)] = self._l
        w = self._sums.graphs(n, l_pairs[self._plan(np.arange(n))[0]], np.zeros(n_pairs))
        p = edge_probabilities(w)[self._forests:, self._forests:]
        i, j = np.triu_indices(n, 1)
        p = p[i, j]
        names = counts.features_
        return {(names[a], names[b]): float(q) for a, b, q in zip(i, j, np.clip(p, 0.0, 1.0))}


_PAIR_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])


@functools.lru_cache(maxsize=256)
def _single_signs(m: int) -> np.ndarray:
    """+1 for the class count and the ``m`` value cells, -1 for the ``m`` feature margins:
    the columns of ``record_columns`` before its pairs."""
    return np.concatenate([np.ones(1 + m), -np.ones(m)])
