"""The wide-record path of the naive Bayes family: a record's numeric features at once, in numpy.

A record with many numeric features costs the per-record paths of
:class:`~onlinebma.naive_bayes.base.BaseNB` a Python loop over its features and classes. From
:data:`WIDE_FEATURES` observed numeric features on, the learners hand the record to this
module instead, which keeps, beside the tables (still the state every other path reads, and
updated alike), the moments of every numeric feature as arrays with a class axis
(:class:`NumericBlock`), and computes the densities, the structure weights and the mixture
(eq. 12-13 of Dash & Cooper 2002, eq. 11 of Wu et al. 2015) over all features at once.

The path computes what the plain one computes, in the same operations: the moments' update is
Welford's in the same order, the densities the same formulas (numpy's ``log``/``log1p`` may
differ from the math module's in the last bit, and a sum over features is pairwise, not
sequential: equal to ~1e-13, tested to 1e-12 in ``tests/test_nb_wide.py``). It runs only
without forgetting and with ``absent="missing"``, for a record whose numeric features were all
seen before and whose label (when learning) is known; anything else (and any record after
state changed by another path: ``learn_many``, ``merge``, a narrow record) goes the plain way,
and the block is rebuilt from the tables when next needed (it notes the learner's record
count it is current for).

The path is taken from :data:`onlinebma.tuning.WIDE_FEATURES` observed numeric features and
:data:`onlinebma.tuning.WIDE_CELLS` cells on: speed crossovers measured by ``python -m
experiments wide`` ("Crossover of the wide-record path" in docs/results/wide.md; the
measurements behind the values in docs/naive_bayes.md, *Speed*). They are read at each
record, so setting them chooses the path: ``WIDE_FEATURES = math.inf`` sends every record
the plain way, ``WIDE_FEATURES = 1`` with ``WIDE_CELLS = 0`` every record that can go the
array way there (the tests run both on the same streams and compare them).
"""

from __future__ import annotations

import math

import numpy as np

from .. import tuning
from ..stats.gaussian import GaussianMoments, NormalGammaPrior
from ..stats.numerics import LOG_2PI, LOG_PI, VAR_SMOOTHING
from ..stats.tables import NumericTable

__all__ = ["MAX_SQUARED_Z", "NumericBlock", "WideNumerics"]

MAX_SQUARED_Z = 1e300
"""Cap on a record's squared z-score under a class Gaussian. Beyond it the log density is not
representable as a float (a value far outside data whose variance is tiny); capped, such a
feature scores alike for every class it is that far from, instead of turning every class's
score into -inf."""


class NumericBlock:
    """The moments of every numeric feature of a learner as arrays: ``n`` (ints), ``mean`` and
    ``m2``, shape (features, 1 + classes), column 0 the marginal, then the classes in
    ``classes`` order; ``has`` marks the (feature, class) pairs with moments; ``log_ml`` the
    two marginal likelihoods of ModelAveragedNB (``None`` for the others). ``columns`` holds
    the tables' :class:`GaussianMoments` per column (``None`` where absent), written at each
    update.
    """

    def __init__(self, tables: dict, classes: list, log_ml: dict | None, t: int):
        self.features = [f for f, tab in tables.items() if isinstance(tab, NumericTable)]
        self.keys = tuple(self.features)
        self.index = {f: i for i, f in enumerate(self.features)}
        self.classes = list(classes)
        self.t = t
        numeric = [tables[f] for f in self.features]
        # per column, the tables' moments of every feature (None where absent)
        self.columns = [[tab.marginal for tab in numeric]]
        self.columns += [[tab.by_class.get(y) for tab in numeric] for y in classes]
        shape = (len(self.features), len(self.columns))
        self.n = np.zeros(shape, dtype=np.int64)
        self.mean, self.m2 = np.zeros(shape), np.zeros(shape)
        self.has = np.zeros(shape, dtype=bool)
        for j, column in enumerate(self.columns):
            cells = [(m.n, m.mean, m.m2) if m is not None else (0, 0.0, 0.0) for m in column]
            if cells:
                self.n[:, j], self.mean[:, j], self.m2[:, j] = zip(*cells)
            self.has[:, j] = [m is not None for m in column]
        # ModelAveragedNB: its (authoritative) lists of marginal likelihoods, and an array copy
        self.log_ml_lists = [log_ml[f] for f in self.features] if log_ml is not None else None
        self.log_ml = np.array(self.log_ml_lists, dtype=float).reshape(shape[0], 2) \
            if log_ml is not None else None
        self.located = None  # (pairs, what locate found for them)
        self.last = None  # (pairs, their Student-t densities) of the last prediction

    def locate(self, pairs):
        """``(rows, x)``: the block rows of ``pairs``' features (``None``: all, in order) and
        their values as an array; ``None`` when a feature is not in the block. Kept for the
        same list of pairs (a prediction's, which learning the same record reuses)."""
        last = self.located
        if last is not None and last[0] is pairs:
            return last[1]
        fs, xs = zip(*pairs)
        if fs == self.keys:
            out = None, np.array(xs, dtype=float)
        else:
            index = self.index
            try:
                out = np.array([index[f] for f in fs], dtype=np.intp), np.array(xs, dtype=float)
            except KeyError:
                out = None
        self.located = (pairs, out)
        return out


class WideNumerics:
    """The array path of wide numeric records, held by each learner of the naive Bayes
    family (its ``_wide_numerics``) with the one :class:`NumericBlock` it keeps (``block``,
    ``None`` until first needed). The learner hands it, per call, the state it reads (the
    tables, its classes, the number of records learned, for which the block is current, and
    ModelAveragedNB's marginal likelihoods and prior) and decides when the path applies (no
    forgetting, ``absent="missing"``, from :data:`~onlinebma.tuning.WIDE_FEATURES` numeric
    features on). NaiveBayes and BMANB call :meth:`gaussian_terms`, ModelAveragedNB
    :meth:`student_terms`, from their ``_add_numerics``, and all :meth:`learn` from their
    ``_learn_numerics``; each returns ``None`` / ``False`` when the record must go the plain
    way (among others, below :data:`~onlinebma.tuning.WIDE_CELLS`)."""

    def __init__(self):
        self.block: NumericBlock | None = None

    def clear(self) -> None:
        """Forget the block (state changed in a way it does not follow: rebuilt when next
        needed)."""
        self.block = None

    def _current(self, tables: dict, classes: list, records: int,
                 log_ml: dict | None) -> NumericBlock:
        """The block, rebuilt when not current for ``records`` and ``classes``."""
        block = self.block
        if block is None or block.t != records or block.classes != classes:
            block = self.block = NumericBlock(tables, classes, log_ml, records)
        return block

    # -------------------------------------------------------------- predicting

    def gaussian_terms(self, scores: list, pairs, classes: list, tables: dict, records: int,
                       plugin_log_gamma):
        """NaiveBayes's and BMANB's numeric terms of a wide record (naive.py's
        ``_add_numerics``, vectorised); ``None`` to go the plain way.

        Parameters
        ----------
        scores : list
            The record's scores so far, one per class, in the order of ``classes``.
        pairs : list
            The record's observed numeric ``(feature, value)`` pairs, in the order the
            learner reads them.
        classes : list
            The learner's classes.
        tables : dict
            The learner's counts and moments, ``{feature: NominalTable or NumericTable}``.
        records : int
            How many records the learner learned: the block is current for that count.
        plugin_log_gamma : callable
            ``plugin_log_gamma()``: ``log Γ`` of BMANB's structure prior (eq. 11 of Wu et
            al.), ``None`` for NaiveBayes (every feature always used).

        Returns
        -------
        list or None
        """
        if len(pairs) * (1 + len(classes)) < tuning.WIDE_CELLS:
            return None
        block = self._current(tables, classes, records, None)
        where = block.locate(pairs)
        if where is None:
            return None
        rows, x = where
        n, mean, m2, has = _rows(block, rows)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            floor = VAR_SMOOTHING * m2[:, 0] / n[:, 0]
            var = m2 / n + floor[:, None]
            log_var = np.log(var)
            d = x[:, None] - mean
            q = np.minimum(d * d / var, MAX_SQUARED_Z)
            lp = -0.5 * (LOG_2PI + log_var + q)
            lp = np.where(has, lp, lp[:, :1])  # a class never seen: the marginal Gaussian
            keep = floor > 0.0  # a feature constant so far carries no information
            log_gamma = plugin_log_gamma()
            if log_gamma is None:  # NaiveBayes: every feature, always
                terms = lp[keep, 1:]
            else:  # BMANB's eq. 11 log odds, as naive.py computes them
                loglik = np.where(has, -0.5 * n * (LOG_2PI + log_var) - m2 / (2.0 * var), 0.0)
                odds = (loglik[:, 1:].sum(axis=1) - loglik[:, 0]
                        - (n[:, 0] + 1) * log_gamma)
                terms = _mixture(lp[keep], odds[keep])
        return (np.asarray(scores) + terms.sum(axis=0)).tolist()

    def student_terms(self, scores: list, pairs, classes: list, tables: dict, records: int,
                      log_ml: dict, prior: NormalGammaPrior, prior_log_odds: float):
        """ModelAveragedNB's numeric terms of a wide record (model_averaged.py's
        ``_add_numerics``, vectorised; its densities kept in the block for learning the
        record); ``None`` to go the plain way. ``scores`` to ``records`` as in
        :meth:`gaussian_terms`; ``log_ml`` the learner's ``{feature: [log P(D_f | no arc),
        log P(D_f | arc)]}`` (eq. 8), ``prior`` its Normal-Gamma prior and
        ``prior_log_odds`` the arc's prior log odds."""
        if len(pairs) * (1 + len(classes)) < tuning.WIDE_CELLS:
            return None
        block = self._current(tables, classes, records, log_ml)
        where = block.locate(pairs)
        if where is None:
            return None
        rows, x = where
        lps = _student_densities(block, rows, x, prior)
        kept = block.log_ml if rows is None else block.log_ml[rows]
        odds = prior_log_odds + kept[:, 1] - kept[:, 0]
        block.last = (pairs, lps)  # for learning this record (learning it the plain way
        # recomputes the densities, as after any prediction of another path)
        return (np.asarray(scores) + _mixture(lps, odds).sum(axis=0)).tolist()

    # ---------------------------------------------------------------- learning

    def learn(self, pairs, y, w, tables: dict, classes: list, records: int,
              log_ml: dict | None = None, prior: NormalGammaPrior | None = None) -> bool:
        """Learn a wide record's numeric ``pairs`` of class ``y`` with weight ``w`` (the
        tables, the block and, with ``log_ml``, ModelAveragedNB's marginal likelihoods,
        eq. 8, under the Normal-Gamma ``prior``); ``False`` (nothing changed) to go the
        plain way. ``tables``, ``classes`` and ``records`` as in :meth:`gaussian_terms`
        (``classes`` the learner's, before this record)."""
        if (w != 1 or y not in classes
                or len(pairs) * (1 + len(classes)) < tuning.WIDE_CELLS):
            return False
        block = self._current(tables, classes, records, log_ml)
        where = block.locate(pairs)
        if where is None:
            return False
        rows, x = where
        iy = 1 + block.classes.index(y)
        every = slice(None) if rows is None else rows
        if log_ml is not None:
            last = block.last
            if last is not None and last[0] is pairs:
                lps = last[1]
            else:
                lps = _student_densities(block, rows, x, prior)
            block.log_ml[every] += lps[:, [0, iy]]
            lists = block.log_ml_lists
            if rows is not None:
                lists = [lists[i] for i in rows.tolist()]
            kept = block.log_ml[every]
            for lm, a, b in zip(lists, kept[:, 0].tolist(), kept[:, 1].tolist()):
                lm[0] = a
                lm[1] = b
        block.last = None
        marginals, by_y = block.columns[0], block.columns[iy]
        if rows is not None:
            marginals = [marginals[i] for i in rows.tolist()]
            by_y = [by_y[i] for i in rows.tolist()]
        if not block.has[every, iy].all():  # a feature first seen with class y
            for k in np.flatnonzero(~block.has[every, iy]).tolist():
                m = tables[pairs[k][0]].by_class[y] = GaussianMoments()
                by_y[k] = block.columns[iy][k if rows is None else int(rows[k])] = m
            block.has[every, iy] = True
        cols = [0, iy]  # Welford's update of both, as NumericTable.update does it
        n = block.n[every][:, cols] + 1
        mean = block.mean[every][:, cols]
        delta = x[:, None] - mean
        mean = mean + delta / n
        m2 = block.m2[every][:, cols] + delta * (x[:, None] - mean)
        if rows is None:
            block.n[:, cols], block.mean[:, cols], block.m2[:, cols] = n, mean, m2
        else:
            for j, col in enumerate(cols):
                block.n[rows, col], block.mean[rows, col], block.m2[rows, col] = \
                    n[:, j], mean[:, j], m2[:, j]
        for a, n0, u0, s0 in zip(marginals, n[:, 0].tolist(), mean[:, 0].tolist(),
                                 m2[:, 0].tolist()):
            a.n = n0
            a.mean = u0
            a.m2 = s0
        for b, n1, u1, s1 in zip(by_y, n[:, 1].tolist(), mean[:, 1].tolist(), m2[:, 1].tolist()):
            b.n = n1
            b.mean = u1
            b.m2 = s1
        block.t = records + 1  # the learner counts the record next
        return True


def _rows(block: NumericBlock, rows):
    if rows is None:
        return block.n, block.mean, block.m2, block.has
    return block.n[rows], block.mean[rows], block.m2[rows], block.has[rows]


def _student_densities(block: NumericBlock, rows, x, prior: NormalGammaPrior):
    """``[log p(x) without the arc, log p(x | y) per class]`` per feature: the Student-t
    predictive (:meth:`NormalGammaPrior.predictive_params`, in its operations). A class
    without moments has zeros there, whose predictive is the prior's, as in the plain path."""
    n, mean, m2, _ = _rows(block, rows)
    k0, k0mu0, mu0, b2, a0h, ratios = prior.constants()
    kn = k0 + n
    d = mean - mu0
    nus2 = (b2 + m2 + k0 * n * d * d / kn) * (kn + 1.0) / kn
    table = _ratio_array(ratios)
    if n.max() < len(table):
        ratio = table[n]
    else:  # past the table: lgamma, element by element (after 65,536 records)
        ratio = np.array([math.lgamma(prior.a0 + 0.5 * k + 0.5) - math.lgamma(prior.a0 + 0.5 * k)
                          if k >= len(table) else table[k] for k in n.ravel().tolist()]
                         ).reshape(n.shape)
    log_norm = ratio - 0.5 * (LOG_PI + np.log(nus2))
    z = x[:, None] - (k0mu0 + n * mean) / kn
    with np.errstate(over="ignore", divide="ignore"):
        u = z * z / nus2
        tail = np.log1p(u)
        if np.isinf(u).any():  # past float range: 2 log|z| - log(nu scale^2), finite
            tail = np.where(np.isinf(u), 2.0 * np.log(np.abs(z)) - np.log(nus2), tail)
    return log_norm - (a0h + 0.5 * n) * tail


_RATIOS: dict = {}  # id of a prior's list of Gamma ratios -> (the list, it as an array)


def _ratio_array(ratios: list) -> np.ndarray:
    kept = _RATIOS.get(id(ratios))
    if kept is None or kept[0] is not ratios:
        kept = _RATIOS[id(ratios)] = (ratios, np.array(ratios))
    return kept[1]


def _mixture(densities: np.ndarray, odds: np.ndarray) -> np.ndarray:
    """Per feature and class, ``log(w0 e^none + w1 e^arc_y)`` with ``w1 = sigmoid(odds)``
    (base.py's ``_add_mixture`` over rows ``[none, arc_0, arc_1, ...]``; it leaves out a term
    40 nats below the other, less than 4.3e-18, which this adds)."""
    d = odds[:, None]
    log_w0 = -np.logaddexp(0.0, d)
    log_w1 = -np.logaddexp(0.0, -d)
    return np.logaddexp(log_w0 + densities[:, :1], log_w1 + densities[:, 1:])
