"""Normal–Wishart (BGe) statistics of numeric features: marginal likelihoods of every subset,
Student-t predictives and the pair terms of the Gaussian forest average.

The shared core of the Gaussian members of the tree-augmented learners: a full-covariance
Gaussian per class, and the exact average over Gaussian forest-augmented structures, whose
family scores are the margins of sizes 1 and 2 computed here. Everything is in log space and
vectorised over leading *batch axes* (for example ``(member, class)``): every statistics array
has the shape ``shape + (d,)``, ``shape + (d, d)``, ..., and a record updates all of them at
once, each with its own weight and forgetting rate.

The prior (Geiger & Heckerman 1994, 2002; constants as corrected by Kuipers, Moffa & Heckerman
2014, "Addendum on the scoring of Gaussian directed acyclic graphical models", Ann. Statist.
42(4))::

    W = Sigma^-1 ~ Wishart(alpha_w, T^-1),    mu | W ~ N(nu, (k0 W)^-1)

over ``d`` features. The margin of a subset ``S`` of the features is again Normal–Wishart with
``alpha_S = alpha_w - d + |S|`` degrees of freedom and the blocks ``T_SS``, ``nu_S`` (Kuipers
et al. 2014), so every family score is a margin of one prior (score equivalence). After
records of total weight ``n``, weighted mean ``m`` and centred scatter ``S`` (``kappa = k0 + n``)::

    R = T + S + (k0 n / kappa) (m - nu)(m - nu)^T

    log ML(S) = -(n |S| / 2) log(pi) + (|S| / 2) log(k0 / kappa)
                + log Gamma_|S|((alpha_S + n) / 2) - log Gamma_|S|(alpha_S / 2)
                + (alpha_S / 2) log|T_SS| - ((alpha_S + n) / 2) log|R_SS|

(Kuipers et al. 2014, their corrected score of a subset; ``Gamma_p`` the multivariate Gamma
function; the equation numbers of the paper were not checked here). The posterior
predictive of the features in ``S`` is a multivariate Student t with
``df = alpha_w - d + 1 + n`` degrees of freedom (the same for every ``S``: the predictive of a
margin is the margin of the predictive), location ``(k0 nu + n m) / kappa`` and shape matrix
``R_SS (kappa + 1) / (kappa df)``.

Default prior (:class:`NormalWishartPrior`)
-------------------------------------------
``alpha_w = d + 2``, ``k0 = 0.01``, ``nu = 0`` and ``T = t diag(scale^2)`` with
``t = k0 (alpha_w - d - 1) / (k0 + 1)`` and ``scale = 1``. Kuipers et al. (2014) choose
``t`` so that the prior predictive of every feature has variance ``scale^2``; ``alpha_w = d + 2``
is the smallest integer for which that variance is finite, and with it each subset's prior
(``alpha_S = |S| + 2``, ``T_SS``) does not depend on how many features there are: adding a
feature changes no other family's score. ``k0 = 0.01`` makes the prior mean worth 1 % of a
record (as :class:`~onlinebma.stats.gaussian.NormalGammaPrior`'s ``kappa0``), so the location
follows the data from the first record, and the ``(k0 n / kappa)(m - nu)^2`` term of ``R``
gives an early scale proportional to the first values' distance from ``nu``. The prior is in
the data's units and fixed in advance: it never looks at the data (a scale estimated from the
first records would make a stream, a batch and merged shards disagree). Features on very
different scales should be standardised by a fixed transform or given their own ``scale``.

Statistics and missing values
-----------------------------
- :class:`PairStatistics`: for every pair ``(u, v)`` the weight, means and 2 x 2 scatter of the
  records where both are observed (*pairwise complete*, like the pair counts of the
  tree-augmented learners), and for every ``u`` those of the records where ``u`` is observed.
  The Gaussian forest needs only margins of sizes 1 and 2. A pair's edge term ``l_uv`` and its
  ``log Q`` use the univariate margins *of the pair's records*, so the chain rule
  ``l_uv(after x) = l_uv(before) + log Q(x)_uv`` holds exactly with missing values too (without
  missing values these margins are the singles).
- :class:`FullStatistics`: weight, mean and a Cholesky factor of the scatter over the
  *complete* records (a record with a missing value is not learned: complete-case learning is
  exact Bayes for the records learned; the pairwise scatter of incomplete records need not be
  positive definite). Its predictive of a record with missing values is the marginal Student t
  of the observed features (exact for the predictive of those features).
- :class:`MomentStatistics`: univariate weight, mean and scatter per feature, for the
  conditional Gaussian family of a numeric child ``v`` with a nominal parent ``u``: keep one
  with batch axes ``(class, value of u)`` and score it with the univariate margin of the prior
  of ``v`` (:func:`nominal_parent_log_weights`).

Forgetting: :meth:`add` first multiplies every stored weight and scatter by ``decay`` (the
means stay), then adds the record; after records ``1..t`` the record ``i`` weighs
``decay^(t - i)`` times its own weight.

Numerics: no determinant is formed as ``ab - c^2``. A pair's scatter is kept as the Cholesky
factor of each ordered pair, ``[[a, 0], [c, e]]`` (``a^2 = S_uu``, ``ac = S_uv``,
``e^2 = S_vv - S_uv^2 / S_uu``, the scatter of ``v`` left after its regression on ``u``), and
records and shards are pooled by Chan et al.'s formula written as a sum of positive terms
(Lagrange's identity); ``|R_uv|`` is the Cauchy–Binet sum of squared 2 x 2 minors of the
factors of ``T``, ``S`` and the prior-mean term. The full scatter is a Cholesky factor pooled
by QR (Householder; a single record's row by LAPACK's triangle-plus-rows QR,
:data:`~onlinebma.tuning.TRIANGLE_UPDATE_FEATURES`, and a record's Student t of a few small
factors by Givens rotations in plain floats, :data:`~onlinebma.tuning.NARROW_PREDICTIVE_WORK`), and
``log|R_SS|`` comes from a QR of the stacked factors, never from ``R`` itself; a Student t
takes ``log|R_SS|`` and its quadratic form from one QR of that stack bordered by the record's
row (``r^2 = 1 / (1 + u^T R^-1 u)`` by Sherman–Morrison; no solve). Near-duplicate
features (``x_v = x_u + 1e-9`` noise) therefore keep the prior's share of ``|R|`` to full relative
precision. :class:`MomentStatistics` learns a record into few statistics in plain floats
(:data:`~onlinebma.tuning.NARROW_MOMENT_UPDATE_CELLS`), the same arithmetic as its numpy path.

Interface (stable; ``x`` is one record, shape ``(d,)``, NaN = missing)
-----------------------------------------------------------------------
``NormalWishartPrior(n_features, k0=0.01, alpha_w=None, mean=0.0, scale=1.0)``:
``.alpha(size)``, ``.t`` (diagonal of ``T``), ``.nu``, ``.df(n)``.

``PairStatistics(n_features, shape=(), decay=1.0)``, ``FullStatistics(...)``,
``MomentStatistics(...)``: ``.add(x, weight=1.0)`` (``weight`` broadcast to ``shape``: e.g.
one-hot over classes), ``.add_many(X, weights=None)`` (rows in order, ``weights`` of shape
``(N,)`` or ``(N,) + shape``), ``.merge(other)``, ``.copy()``, read-only ``.n``, ``.mean``.

``PairStatistics`` scores (arrays of shape ``shape + (d,)`` or ``shape + (d, d)``):
``.log_marginal_singles(prior)``, ``.log_marginal_pairs(prior)`` (diagonal: the singles),
``.edge_log_weights(prior)`` (``l_uv``, zero diagonal), ``.log_predictive_singles(prior, x)``
(``log t1``, 0 where missing), ``.log_predictive_pairs(prior, x)``, ``.log_q(prior, x)``
(``log Q_uv``, 0 where ``u`` or ``v`` is missing and on the diagonal).

``FullStatistics`` scores (shape ``shape``): ``.log_marginal(prior, subset=None)``,
``.log_predictive(prior, x)``.

``MomentStatistics`` scores (shape ``shape + (d,)``): ``.log_marginal(prior)``,
``.log_predictive(prior, x)``, ``.pooled(axis)``; :func:`nominal_parent_log_weights` (the
directed edge weight ``u -> v`` per class) and :func:`nominal_parent_log_q` (its increment by
a record).

All three statistics: ``.grow(axis, size)`` lengthens a batch axis (a new class, a new value).

Examples
--------
>>> import numpy as np
>>> prior = NormalWishartPrior(2)
>>> X = np.array([[0.1, 0.3], [1.2, 1.0], [-0.4, -0.1], [0.8, 1.1]])
>>> pairs, full = PairStatistics(2), FullStatistics(2)
>>> pairs.add_many(X); full.add_many(X)
>>> # Every subset's score is a margin of one prior: both statistics agree on {0, 1} ...
>>> bool(np.isclose(pairs.log_marginal_pairs(prior)[0, 1], full.log_marginal(prior)))
True
>>> # ... and the marginal likelihood is the product of sequential predictives.
>>> seq, s = 0.0, FullStatistics(2)
>>> for x in X:
...     seq += s.log_predictive(prior, x)
...     s.add(x)
>>> bool(np.isclose(seq, full.log_marginal(prior), rtol=1e-12))
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from itertools import islice

import numpy as np
from scipy.linalg.lapack import dtpqrt as _tpqrt
from scipy.special import gammaln

from .. import tuning
from .gaussian import MAX_ABS_VALUE
from .numerics import LOG_PI

__all__ = ["FullStatistics", "MomentStatistics", "NormalWishartPrior", "PairStatistics",
           "nominal_parent_log_q", "nominal_parent_log_weights"]



# ----------------------------------------------------------------------------------- prior

@dataclass(frozen=True)
class NormalWishartPrior:
    """Normal–Wishart prior of ``d`` numeric features, BGe parameterisation.

    ``W = Sigma^-1 ~ Wishart(alpha_w, T^-1)`` and ``mu | W ~ N(nu, (k0 W)^-1)``, with a diagonal
    ``T = t diag(scale^2)``, ``t = k0 (alpha_w - d - 1) / (k0 + 1)``: the prior predictive of
    feature ``i`` has variance ``scale[i]^2`` (Kuipers, Moffa & Heckerman 2014). See the
    module docstring for why the defaults are what they are.

    Parameters
    ----------
    n_features : int
        ``d``, the number of numeric features the prior is over.
    k0 : float, default=0.01
        Weight of the prior mean, in records (``alpha_mu`` in Kuipers et al.).
    alpha_w : float or None, default=None
        Wishart degrees of freedom, above ``d + 1`` (finite prior predictive variance);
        ``None`` means ``d + 2``.
    mean : float or array-like of shape (d,), default=0.0
        ``nu``, the prior mean of each feature (kept as a float or a tuple; the vector is
        :attr:`nu`).
    scale : float or array-like of shape (d,), default=1.0
        Prior predictive standard deviation of each feature (sets ``T``, whose diagonal is
        :attr:`t`).

    Examples
    --------
    >>> p = NormalWishartPrior(3)
    >>> p.alpha_w, p.alpha(1), p.alpha(2)
    (5.0, 3.0, 4.0)
    >>> bool(np.allclose(p.t, 0.01 / 1.01))
    True
    """

    n_features: int
    k0: float = 0.01
    alpha_w: float | None = None
    mean: float | tuple = 0.0
    scale: float | tuple = 1.0
    nu: np.ndarray = field(init=False, repr=False, compare=False)
    t: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        d = self.n_features
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"n_features must be a positive integer, got {d!r}")
        if not (isinstance(self.k0, (int, float)) and math.isfinite(self.k0) and self.k0 > 0):
            raise ValueError(f"k0 must be a positive finite number, got {self.k0!r}")
        alpha_w = d + 2.0 if self.alpha_w is None else self.alpha_w
        if not (isinstance(alpha_w, (int, float)) and math.isfinite(alpha_w)
                and alpha_w > d + 1):
            raise ValueError(f"alpha_w must be a finite number above n_features + 1 = {d + 1}, "
                             f"got {alpha_w!r}")
        object.__setattr__(self, "alpha_w", float(alpha_w))
        nu = _feature_vector(self.mean, d, "mean")
        scale = _feature_vector(self.scale, d, "scale")
        if not np.all(scale > 0):
            raise ValueError(f"scale must be positive, got {self.scale!r}")
        t = self.k0 * (alpha_w - d - 1.0) / (self.k0 + 1.0) * scale * scale
        if not np.all((t > 0) & np.isfinite(t)):
            raise ValueError(f"scale {self.scale!r} gives a zero or infinite prior matrix T")
        for name in ("mean", "scale"):  # hashable and comparable, whatever was passed
            value = getattr(self, name)
            object.__setattr__(self, name, float(value) if np.ndim(value) == 0
                               else tuple(float(v) for v in np.asarray(value, dtype=float)))
        nu.flags.writeable = False
        t.flags.writeable = False
        object.__setattr__(self, "nu", nu)
        object.__setattr__(self, "t", t)

    def alpha(self, size: int) -> float:
        """``alpha_S = alpha_w - d + |S|``, the degrees of freedom of a margin of ``size``
        features (Kuipers et al. 2014)."""
        return self.alpha_w - self.n_features + size

    def df(self, n):
        """Degrees of freedom ``alpha_w - d + 1 + n`` of every predictive after weight ``n``."""
        return self.alpha_w - self.n_features + 1.0 + n


def _feature_vector(value, d: int, name: str) -> np.ndarray:
    v = np.array(np.broadcast_to(np.asarray(value, dtype=float), (d,)))
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _log_multigamma(x, p: int):
    """``log Gamma_p(x) = p (p - 1) / 4 log(pi) + sum_j lgamma(x + (1 - j) / 2)``."""
    return p * (p - 1) / 4.0 * LOG_PI + sum(gammaln(x + 0.5 * (1 - j)) for j in range(1, p + 1))


def _log_ml(prior, size, n, log_det_t, log_det_r):
    """Kuipers et al.'s (2014) log marginal likelihood of a margin of ``size`` features
    (module docstring), elementwise."""
    a = prior.alpha(size)
    kappa = prior.k0 + n
    return (-0.5 * n * size * LOG_PI + 0.5 * size * (math.log(prior.k0) - np.log(kappa))
            + _log_multigamma(0.5 * (a + n), size) - _log_multigamma(0.5 * a, size)
            + 0.5 * a * log_det_t - 0.5 * (a + n) * log_det_r)


def _log_student(prior, size, n, log_det_r, quad_r=None, *, log_quad=None):
    """Log multivariate Student t predictive of ``size`` features after weight ``n``, from
    ``log|R_SS|`` and ``delta^T R_SS^-1 delta`` (``delta`` = record - posterior location),
    given as ``quad_r`` or as its logarithm ``log_quad`` (finite however large the value)."""
    kappa = prior.k0 + n
    ratio = kappa / (kappa + 1.0)  # the shape matrix times df is R (kappa + 1) / kappa
    log_ratio = np.log(ratio)
    if log_quad is None:
        log_tail = np.log1p(ratio * quad_r)
    else:  # log(1 + ratio q) = logaddexp(0, log ratio + log q)
        log_tail = np.logaddexp(0.0, log_ratio + log_quad)
    half_df = 0.5 * prior.df(n)
    top = half_df + 0.5 * size
    return (gammaln(top) - gammaln(half_df) - 0.5 * size * LOG_PI
            + 0.5 * (size * log_ratio - log_det_r) - top * log_tail)


def _r_single(prior, n, mean, a, t=None):
    """``R_uu = t_u + a^2 + (k0 n / kappa)(mean - nu)^2`` of each feature (last axis);
    ``t`` the prior's ``T`` diagonal unless given (broadcast against the statistics)."""
    b = mean - prior.nu
    return (prior.t if t is None else t) + a * a + prior.k0 * n / (prior.k0 + n) * b * b


def _log_ml_single(prior, n, mean, a):
    """``log ML({u})`` from the weight, mean and root scatter of each feature (last axis)."""
    r = _r_single(prior, n, mean, a)
    return _log_ml(prior, 1, n, np.log(prior.t), np.log(r))


def _log_t_single(prior, n, mean, a, x, observed, t=None):
    """``log t1(x_u)`` of each feature (last axis), 0 where not ``observed`` (``t`` as
    :func:`_r_single`'s)."""
    r = _r_single(prior, n, mean, a, t)
    loc = (prior.k0 * prior.nu + n * mean) / (prior.k0 + n)
    z = (np.where(observed, x, 0.0) - loc) / np.sqrt(r)
    return np.where(observed, _log_student(prior, 1, n, np.log(r), z * z), 0.0)


# ----------------------------------------------------------------------- shared plumbing

def _check_decay(decay, shape):
    lam = np.asarray(decay, dtype=float)
    try:
        lam = np.broadcast_to(lam, shape)
    except ValueError:
        raise ValueError(f"decay of shape {lam.shape} does not broadcast to the statistics' "
                         f"shape {shape}") from None
    if not np.all((lam > 0) & (lam <= 1)):
        raise ValueError(f"decay must be in (0, 1], got {decay!r}")
    return np.array(lam)


def _check_record(x, d: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.shape != (d,):
        raise ValueError(f"a record must have shape ({d},), got {x.shape}")
    if not sum(map(abs, x.tolist())) <= MAX_ABS_VALUE:  # else every value is (NaN: not)
        _check_values(x)
    return x


def _check_values(X) -> None:
    if (np.abs(X) <= MAX_ABS_VALUE).all():  # the usual case (NaN compares false)
        return
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(X) & ~(np.abs(X) <= MAX_ABS_VALUE)
    if np.any(bad):
        raise ValueError(f"values must be finite and at most {MAX_ABS_VALUE:g} in magnitude "
                         f"(NaN = missing), got {X[bad][0]!r}")


def _check_weights(weight, shape, lead=()) -> np.ndarray:
    w = np.asarray(weight, dtype=float)
    if lead and w.shape == lead:
        w = w.reshape(lead + (1,) * len(shape))
    if w.shape != lead + shape:
        try:
            w = np.broadcast_to(w, lead + shape)
        except ValueError:
            raise ValueError(f"weights of shape {np.shape(weight)} do not broadcast to "
                             f"{lead + shape}") from None
    if w.size and not (w.min() >= 0 and w.max() < math.inf):  # NaN fails both
        raise ValueError("weights must be finite and non-negative")
    return w


def _row_weights(X, weights, shape, decay):
    """Validated rows and per-row weights ``(N,) + shape``, each times ``decay^(N-1-i)``, and
    the factor ``decay^N`` the stored statistics get."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array of records, got shape {X.shape}")
    _check_values(X)
    N = X.shape[0]
    w = _check_weights(1.0 if weights is None else weights, shape, (N,))
    if np.all(decay == 1):
        return X, w, None
    age = np.arange(N - 1, -1, -1, dtype=float).reshape((N,) + (1,) * len(shape))
    return X, w * decay ** age, decay ** float(N)


def _blocks(N: int, per_row: int):
    step = max(1, tuning.GAUSSIAN_BLOCK // max(per_row, 1))
    return range(0, N, step), step


def _read_only(x: np.ndarray) -> np.ndarray:
    view = np.asarray(x).view()
    view.flags.writeable = False
    return view


def _safe_div(a, b):
    """``a / b`` where ``b > 0``, else 0 (no division is made there: no warning to silence)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.divide(a, b, out=np.zeros(np.broadcast_shapes(a.shape, b.shape)), where=b > 0)


# ------------------------------------------------------------------------ pair statistics

def _pool_pairs(A, B):
    """Pool two pair statistics ``(n, mean, a, c, e)`` (Chan, Golub & LeVeque 1979, in factor
    form; ``B`` may be single records ``(n, mean)``, whose scatter is 0). Entry ``[u, v]``
    holds the pair's weight, the mean of ``u``, and the factor ``[[a, 0], [c, e]]`` of its
    scatter in the order ``(u, v)``; the transposed entry holds the mean of ``v`` and the
    factor in the order ``(v, u)``.

    With the scatter of ``u`` and ``v`` the Gram matrix of the vectors
    ``U = (aA, 0, aB, 0, zu)`` and ``V = (cA, eA, cB, eB, zv)`` (``z`` the between-shard term),
    ``e^2 = |V|^2 - (U.V)^2 / |U|^2`` is, by Lagrange's identity, a sum of squares: nothing
    cancels but the 2 x 2 minors that carry the information. The minors are taken with
    ``U / |U|``, so that no fourth power of the data is formed (no overflow).
    """
    nA, mA, aA, cA, eA = A
    nB, mB, *scatter_B = B  # single records (add) come without a scatter: (n, mean)
    n = nA + nB
    frac = _safe_div(nB, n)
    diff = mB - mA
    mean = mA + frac * diff
    z = np.sqrt(nA * frac) * diff  # sqrt(nA nB / n) (mB - mA): entry [u, v] is zu
    zt = np.swapaxes(z, -1, -2)  # zv
    a2 = aA * aA + z * z
    if scatter_B:
        aB, cB, eB = scatter_B
        a2 = a2 + aB * aB
    a = np.sqrt(a2)
    uA, uz = _safe_div(aA, a), _safe_div(z, a)  # U / |U|: at most 1
    c = uA * cA + uz * zt
    minors = (uA * zt - uz * cA) ** 2
    alone = cA * cA + zt * zt  # e^2 where a = 0 (u constant): all of V
    e2 = eA * eA
    if scatter_B:
        uB = _safe_div(aB, a)
        c = c + uB * cB
        minors = minors + (uA * cB - uB * cA) ** 2 + (uB * zt - uz * cB) ** 2
        alone = alone + cB * cB
        e2 = e2 + eB * eB
    e2 = e2 + np.where(a > 0, minors, alone)
    e = np.sqrt(e2)
    diag = np.eye(n.shape[-1], dtype=bool)
    return n, mean, a, np.where(diag, a, c), np.where(diag, 0.0, e)


def _mirror_upper(M):
    """``M`` with each entry below the diagonal replaced by its mirror above: a pair's score
    computed once, in the order ``(u, v)`` with ``u < v``, so that it is exactly symmetric."""
    d = M.shape[-1]
    return np.where(np.tri(d, k=-1, dtype=bool), np.swapaxes(M, -1, -2), M)


def _record_pairs(X, w):
    """Pair statistics of single records: ``X`` of shape ``(..., d)``, ``w`` broadcast to the
    leading axes; missing values weigh nothing."""
    obs = ~np.isnan(X)
    both = obs[..., :, None] & obs[..., None, :]
    n = np.where(both, np.asarray(w)[..., None, None], 0.0)
    mean = np.broadcast_to(np.where(obs, X, 0.0)[..., :, None], n.shape)
    zero = np.zeros_like(n)
    return n, mean, zero, zero, zero


def _reduce(nodes, pool, axis_len):
    """Pool ``axis_len`` statistics along axis 0, pairwise (a balanced tree, like Chan et al.),
    in their order."""
    while axis_len > 1:
        half = axis_len // 2
        even = tuple(x[0:2 * half:2] for x in nodes)
        odd = tuple(x[1:2 * half:2] for x in nodes)
        pooled = pool(even, odd)
        if axis_len % 2:
            pooled = tuple(np.concatenate([p, x[-1:]]) for p, x in zip(pooled, nodes))
        nodes, axis_len = pooled, half + axis_len % 2
    return tuple(x[0] for x in nodes)


class _Statistics:
    """Shared mechanics: shape, decay, validation, add/add_many/merge through ``_pool``."""

    def __init__(self, n_features: int, shape=(), decay=1.0):
        if (isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer))
                or n_features < 1):
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        self.n_features = int(n_features)
        self.shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        self.decay = _check_decay(decay, self.shape)
        self._state = self._empty()

    # Subclasses set _layout (the number of feature axes of each state array: weight, means,
    # then the factors of the scatter), _pool(A, B) (Chan et al.'s pooling) and _nodes(X, w)
    # (the statistics of single records, for the tree reduction of a block).

    @property
    def state(self) -> tuple:
        """The arrays of the statistics (weights, means, then the factors of the scatter;
        batch axes first), to read, not to change."""
        return self._state

    def _empty(self):
        return tuple(np.zeros(self.shape + (self.n_features,) * k) for k in self._layout)

    def _scaled(self, state, factor):
        """Every weight times ``factor``, every factor of the scatter times its root."""
        f = np.asarray(factor)
        k = len(self.shape)

        def times(x, g):
            return x * g.reshape(g.shape + (1,) * (x.ndim - k))

        n, mean, *factors = state
        return (times(n, f), mean) + tuple(times(x, np.sqrt(f)) for x in factors)

    def _records(self, x, w):
        """``(n, mean)`` of one record in every statistic (no scatter of its own)."""
        return self._nodes(np.broadcast_to(x, self.shape + x.shape), w)[:2]

    def _row_size(self):
        return int(np.prod(self.shape, dtype=int)) * self.n_features ** max(self._layout)

    def _block(self, X, w):
        """One block's statistics: its rows pooled pairwise."""
        rows = X.reshape((len(X),) + (1,) * len(self.shape) + X.shape[1:])
        nodes = self._nodes(np.broadcast_to(rows, w.shape + X.shape[1:]), w)
        return _reduce(nodes, self._pool, len(X))

    @property
    def n(self) -> np.ndarray:
        """Weight of the records learned (see each class for which records count)."""
        return _read_only(self._state[0])

    @property
    def mean(self) -> np.ndarray:
        """Weighted means (see each class for the layout)."""
        return _read_only(self._state[1])

    def add(self, x, weight=1.0) -> None:
        """Forget by ``decay``, then learn one record.

        Parameters
        ----------
        x : array-like of shape (d,)
            The record; NaN marks a missing value.
        weight : float or array-like broadcastable to ``shape``, default=1.0
            The record's weight in each statistic (0 leaves it out: e.g. the other classes).
        """
        x = _check_record(x, self.n_features)
        w = _check_weights(weight, self.shape)
        self._state = self._pool(self._forgotten()[0], self._records(x, w))

    def _forgotten(self) -> tuple:
        """The state forgotten by ``decay`` (as :meth:`_scaled`, with ``decay``'s root and
        shapes kept between records) and whether anything was forgotten."""
        kept = self.__dict__.get("_decay_kept")
        if kept is None or kept[0] is not self.decay:  # (decay, weights', factors', < 1)
            root = np.sqrt(self.decay)
            kept = self._decay_kept = (
                self.decay, self.decay.reshape(self.shape + (1,) * self._layout[0]),
                [root.reshape(self.shape + (1,) * j) for j in self._layout[2:]],
                bool((self.decay != 1).any()))
        if not kept[3]:
            return self._state, False
        n, mean, *factors = self._state
        return (n * kept[1], mean) + tuple(f * r for f, r in zip(factors, kept[2])), True

    def __getstate__(self):  # the kept roots of decay are derived
        state = dict(self.__dict__)
        state.pop("_decay_kept", None)
        return state

    def add_many(self, X, weights=None) -> None:
        """Learn the rows of ``X`` in order: equal to :meth:`add` on each row (up to rounding),
        pooled a block at a time.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Records; NaN marks a missing value.
        weights : array-like of shape (N,) or (N,) + shape, or None, default=None
            Each row's weight (``None``: 1).
        """
        X, w, factor = _row_weights(X, weights, self.shape, self.decay)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X must have {self.n_features} columns, got {X.shape[1]}")
        state = self._state if factor is None else self._scaled(self._state, factor)
        starts, step = _blocks(len(X), self._row_size())
        for s in starts:
            block = self._block(X[s:s + step], w[s:s + step])
            state = self._pool(state, block)
        self._state = state

    def merge(self, other) -> None:
        """Pool another statistics of the same class, features and shape: the union of their
        records, each keeping its weight (Chan et al.'s pooling; no forgetting is applied).

        Parameters
        ----------
        other : PairStatistics, FullStatistics or MomentStatistics
            Of this object's class, ``n_features`` and ``shape``; left unchanged.
        """
        if type(other) is not type(self) or other.n_features != self.n_features \
                or other.shape != self.shape:
            raise ValueError("can only merge statistics of the same kind, features and shape")
        self._state = self._pool(self._state, other.state)

    def grow(self, axis: int, size: int) -> None:
        """Lengthen a batch axis to ``size`` with empty statistics (e.g. a class or a value of
        a nominal parent seen for the first time); their forgetting rate is the last entry's.

        Parameters
        ----------
        axis : int
            A batch axis (of ``shape``).
        size : int
            The new length, at least the current one.
        """
        k = len(self.shape)
        if not -k <= axis < k:
            raise ValueError(f"axis {axis} is not a batch axis of shape {self.shape}")
        axis %= k
        extra = int(size) - self.shape[axis]
        if extra < 0:
            raise ValueError(f"cannot shrink axis {axis} from {self.shape[axis]} to {size}")
        if extra == 0:
            return
        pad = [(0, 0)] * k
        pad[axis] = (0, extra)
        # zeros are empty statistics: weight, means and factors all 0
        self._state = tuple(np.pad(x, pad + [(0, 0)] * (x.ndim - k)) for x in self._state)
        self.decay = np.pad(self.decay, pad, mode="edge")
        self.shape = self.shape[:axis] + (int(size),) + self.shape[axis + 1:]

    def copy(self):
        """An independent copy."""
        new = object.__new__(type(self))
        new.__dict__.update({**self.__dict__, "_state": tuple(x.copy() for x in self._state)})
        return new


class PairStatistics(_Statistics):
    """Pairwise-complete weight, means and factored 2 x 2 scatter of ``d`` numeric features.

    Entry ``[..., u, v]`` of :attr:`n` is the weight of the records where ``u`` and ``v`` are
    observed (the diagonal: where ``u`` is), of :attr:`mean` the mean of ``u`` over them, and
    :attr:`root`, :attr:`cross`, :attr:`residual` the Cholesky factor ``[[a, 0], [c, e]]`` of
    their scatter in the order ``(u, v)``: ``a^2`` the scatter of ``u``, ``a c`` the cross
    scatter, ``e^2`` the scatter of ``v`` left after its regression on ``u``.

    Parameters
    ----------
    n_features : int
        ``d``.
    shape : tuple of int, default=()
        Leading batch axes, e.g. ``(n_members, n_classes)``.
    decay : float or array-like broadcastable to ``shape``, default=1.0
        Forgetting rate per record, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> s = PairStatistics(2, shape=(2,))              # two classes
    >>> s.add([1.0, 2.0], weight=[1.0, 0.0])           # a record of class 0
    >>> s.add([3.0, np.nan], weight=[1.0, 0.0])        # class 0, second feature missing
    >>> s.n[0]
    array([[2., 1.],
           [1., 1.]])
    >>> s.mean[0]                                      # mean of u over the pair's records
    array([[2., 1.],
           [2., 2.]])
    >>> prior = NormalWishartPrior(2)
    >>> s.log_q(prior, [1.5, np.nan])[0]               # a missing value: no pair term
    array([[0., 0.],
           [0., 0.]])
    """

    _layout = (2, 2, 2, 2, 2)  # n, mean, a, c, e: shape + (d, d)
    _pool = staticmethod(_pool_pairs)
    _nodes = staticmethod(_record_pairs)

    @property
    def root(self) -> np.ndarray:
        """``a``: square root of the scatter of ``u`` over the records of pair ``(u, v)``."""
        return _read_only(self._state[2])

    @property
    def cross(self) -> np.ndarray:
        """``c``: the cross scatter of ``u`` and ``v`` divided by ``a`` (``a`` on the diagonal)."""
        return _read_only(self._state[3])

    @property
    def residual(self) -> np.ndarray:
        """``e``: square root of the scatter of ``v`` after its regression on ``u``."""
        return _read_only(self._state[4])

    # ------------------------------------------------------------------ pieces of R

    def _posterior(self, prior):
        """The pair's posterior matrix ``R``, entry ``[u, v]`` in the order ``(u, v)``.

        ``R`` is the Gram matrix of ``U = (sqrt t_u, 0, a, 0, b_u)`` and
        ``V = (0, sqrt t_v, c, e, b_v)``, ``b = sqrt(k0 n / kappa) (mean - nu)``. Returns the
        weight, ``R_uu = |U|^2``, ``R_vv = |V|^2``, the components of the unit vectors
        ``U / |U|`` and ``V / |V|``, and ``D = |R| / (R_uu R_vv)``: by Cauchy–Binet the sum of
        the squared 2 x 2 minors of the unit vectors, so nothing cancels and, all terms being
        at most 1, nothing overflows.
        """
        _check_prior_for(prior, self.n_features)
        n, mean, a, c, e = self._state
        t_u, t_v = prior.t[:, None], prior.t[None, :]
        b = np.sqrt(prior.k0 * n / (prior.k0 + n)) * (mean - prior.nu[:, None])
        bt = np.swapaxes(b, -1, -2)
        r_u = t_u + a * a + b * b
        r_v = t_v + c * c + e * e + bt * bt
        root_u, root_v = np.sqrt(r_u), np.sqrt(r_v)
        unit_u = (np.sqrt(t_u / r_u), a / root_u, b / root_u)
        unit_v = (np.sqrt(t_v / r_v), c / root_v, e / root_v, bt / root_v)
        su, au, bu = unit_u
        sv, cv, ev, bv = unit_v
        D = ((su * sv) ** 2 + (su * cv) ** 2 + (su * ev) ** 2 + (su * bv) ** 2 + (sv * au) ** 2
             + (sv * bu) ** 2 + (au * ev) ** 2 + (au * bv - bu * cv) ** 2 + (bu * ev) ** 2)
        return n, r_u, r_v, unit_u, unit_v, D

    def _deltas(self, prior, x):
        """``x_u`` minus the posterior location of ``u`` in pair ``[u, v]`` (0 where missing)
        and the mask of observed pairs."""
        _check_prior_for(prior, self.n_features)
        x = _check_record(x, self.n_features)
        n, mean = self._state[0], self._state[1]
        loc = (prior.k0 * prior.nu[:, None] + n * mean) / (prior.k0 + n)
        obs = ~np.isnan(x)
        delta = np.where(obs[:, None], np.where(obs, x, 0.0)[:, None] - loc, 0.0)
        return delta, obs[:, None] & obs[None, :]

    # ------------------------------------------------------------------------ scores

    def log_marginal_singles(self, prior: NormalWishartPrior) -> np.ndarray:
        """``log ML({u})`` of each feature over the records where it is observed.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d,)``
        """
        _check_prior_for(prior, self.n_features)
        n, mean, a = (np.diagonal(v, 0, -2, -1) for v in self._state[:3])
        return _log_ml_single(prior, n, mean, a)

    def log_marginal_pairs(self, prior: NormalWishartPrior) -> np.ndarray:
        """``log ML({u, v})`` of every pair over the records where both are observed
        (Kuipers et al. 2014, with ``|S| = 2``); the diagonal holds ``log ML({u})``.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d, d)``
        """
        n, r_u, r_v, _, _, D = self._posterior(prior)
        log_t = np.log(prior.t)
        log_det = np.log(r_u) + np.log(r_v) + np.log(D)
        pairs = _mirror_upper(_log_ml(prior, 2, n, log_t[:, None] + log_t[None, :], log_det))
        d = self.n_features
        idx = np.arange(d)
        pairs[..., idx, idx] = self.log_marginal_singles(prior)
        return pairs

    def edge_log_weights(self, prior: NormalWishartPrior) -> np.ndarray:
        """``l_uv = log ML({u, v}) - log ML({u}) - log ML({v})``, all three over the records
        where both are observed: the log weight of the edge ``u - v`` in the forest sum of one
        class (sum over classes outside). Exactly symmetric, zero diagonal.

        Computed as one expression, ``-((alpha_2 + n) / 2) log(|R| / (R_uu R_vv))
        - (1/2) log(R_uu R_vv / (t_u t_v))`` plus Gamma terms (the ``pi`` and ``k0 / kappa``
        terms cancel), so no large scores are subtracted.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d, d)``
        """
        n, r_u, r_v, _, _, D = self._posterior(prior)
        a1, a2 = prior.alpha(1), prior.alpha(2)
        log_t = np.log(prior.t)
        l_uv = (gammaln(0.5 * (a2 + n)) - gammaln(0.5 * a2) - gammaln(0.5 * (a1 + n))
                + gammaln(0.5 * a1) - 0.5 * (a2 + n) * np.log(D)
                - 0.5 * (np.log(r_u) - log_t[:, None] + np.log(r_v) - log_t[None, :]))
        l_uv = _mirror_upper(l_uv)
        l_uv[..., np.arange(self.n_features), np.arange(self.n_features)] = 0.0
        return l_uv

    def log_predictive_singles(self, prior: NormalWishartPrior, x) -> np.ndarray:
        """``log t1(x_u)``: each observed feature's Student t predictive (over the records
        where it is observed); 0 for a missing feature.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        x : array-like of shape (d,)
            A record; NaN marks a missing value.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d,)``
        """
        _check_prior_for(prior, self.n_features)
        x = _check_record(x, self.n_features)
        n, mean, a = (np.diagonal(v, 0, -2, -1) for v in self._state[:3])
        return _log_t_single(prior, n, mean, a, x, ~np.isnan(x))

    def _pair_terms(self, prior, x):
        """Per entry ``[u, v]`` (order ``(u, v)``): ``log t2(x_u, x_v)``, ``log t1(x_u)``,
        ``log t1(x_v)`` over the pair's records, and the mask of observed pairs."""
        delta, both = self._deltas(prior, x)
        n, r_u, r_v, (su, au, bu), (sv, cv, ev, bv), D = self._posterior(prior)
        du = delta / np.sqrt(r_u)
        dv = np.swapaxes(delta, -1, -2) / np.sqrt(r_v)
        # delta^T R^-1 delta = (|R + delta delta^T| - |R|) / |R|: the new minors, squared
        quad = ((su * dv) ** 2 + (sv * du) ** 2 + (au * dv - du * cv) ** 2 + (du * ev) ** 2
                + (bu * dv - du * bv) ** 2) / D
        log_r_u, log_r_v = np.log(r_u), np.log(r_v)
        t2 = _log_student(prior, 2, n, log_r_u + log_r_v + np.log(D), quad)
        t1_u = _log_student(prior, 1, n, log_r_u, du * du)
        t1_v = _log_student(prior, 1, n, log_r_v, dv * dv)
        return t2, t1_u, t1_v, both

    def log_predictive_pairs(self, prior: NormalWishartPrior, x) -> np.ndarray:
        """``log t2(x_u, x_v)``: the bivariate Student t predictive of every observed pair
        (over the pair's records); the diagonal holds ``log t1``, 0 where missing.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        x : array-like of shape (d,)
            A record; NaN marks a missing value.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d, d)``
        """
        t2, _, _, both = self._pair_terms(prior, x)
        t2 = _mirror_upper(t2)
        idx = np.arange(self.n_features)
        t2[..., idx, idx] = self.log_predictive_singles(prior, x)
        return np.where(both, t2, 0.0)

    def log_q(self, prior: NormalWishartPrior, x) -> np.ndarray:
        """``log Q(x)_uv = log t2(x_u, x_v) - log t1(x_u) - log t1(x_v)``, the univariate
        margins taken over the pair's records: what learning ``x`` adds to
        :meth:`edge_log_weights` (without forgetting). 0 on the diagonal and where ``u`` or
        ``v`` is missing.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        x : array-like of shape (d,)
            A record; NaN marks a missing value.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d, d)``
        """
        t2, t1_u, t1_v, both = self._pair_terms(prior, x)
        q = _mirror_upper(t2 - t1_u - t1_v)
        q[..., np.arange(self.n_features), np.arange(self.n_features)] = 0.0
        return np.where(both, q, 0.0)


# ------------------------------------------------------------------------ full statistics

def _lower_factor(M):
    """Lower-triangular ``F`` with ``F F^T = M^T M`` and a non-negative diagonal: ``G^T``
    of the Householder QR ``M = Q G`` of the stacked rows ``M`` (batched over leading axes),
    read from the leading lower triangle of numpy's raw QR (its ``h`` is the transposed
    LAPACK array, ``G^T`` below the diagonal and the Householder vectors above), which skips
    the copy and ``triu`` of ``mode="r"``."""
    p = M.shape[-1]
    F = np.linalg.qr(M, mode="raw")[0][..., :p] * _lower_mask(p)
    return F * np.copysign(1.0, np.diagonal(F, 0, -2, -1))[..., None, :]


@functools.lru_cache(maxsize=64)
def _lower_mask(p: int) -> np.ndarray:
    """``p x p`` ones on and below the diagonal, zeros above."""
    return np.tri(p)


def _pool_full(A, B):
    """Pool two ``(n, mean, L)`` (Chan et al.; ``L`` lower Cholesky factor of the scatter;
    ``B`` may be single records ``(n, mean)``): the new factor is the QR of the stacked
    factors and the between-shard row."""
    nA, mA, LA = A
    nB, mB, *scatter_B = B  # single records (add) come without a scatter: (n, mean)
    n = nA + nB
    frac = _safe_div(nB, n)
    diff = mB - mA
    mean = mA + frac[..., None] * diff
    z = (np.sqrt(nA * frac)[..., None] * diff)[..., None, :]
    M = np.concatenate([np.swapaxes(L, -1, -2) for L in [LA, *scatter_B]] + [z], axis=-2)
    return n, mean, _lower_factor(M)




def _triangle_plus_row(L, todo, rows) -> np.ndarray:
    """The lower factors ``L`` (``(F, d, d)``; changed in place when C-contiguous) with each
    ``L[f]``, ``f`` the ``i``-th of ``todo``, become the lower factor of the QR of
    ``[L[f]^T; rows[i]]`` (``rows`` is overwritten), and every diagonal non-negative: one
    call of LAPACK's ``dtpqrt`` per factor, the Householder QR of a triangle on top of rows
    (the reflections of :func:`_lower_factor`'s QR of the stacked matrix, without the
    triangle's zeros). ``L[f]`` in C order is ``L[f]^T`` in Fortran order, factored in place
    (its other triangle is not touched). Under
    :data:`~onlinebma.tuning.TRIANGLE_UPDATE_FEATURES` features only (a cliff beyond)."""
    L = np.ascontiguousarray(L)  # else the wrapper would factor a copy and drop it
    d = L.shape[-1]
    for f, row in zip(todo.tolist(), rows):
        _tpqrt(0, d, L[f].T, row[None, :], overwrite_a=1, overwrite_b=1)
    # a reflection's pivot is -sign(old pivot) times the norm: flip those columns
    L *= np.copysign(1.0, np.diagonal(L, 0, -2, -1))[..., None, :]
    return L


def _rotate_in(U, w) -> None:
    """Rotate the row ``w`` (a list of floats, the columns ``d - len(w)`` on of a row that
    is zero before them) into the upper-triangular ``U`` (``d`` lists, ``U[i]`` holding
    columns ``i..d-1`` of row ``i``; changed) by Givens rotations: ``U`` becomes the factor
    of the QR of ``[U; w]``, with a non-negative diagonal (each pivot is ``hypot(U_ii,
    w_i)``, a sum of squares)."""
    hypot = math.hypot
    d = len(U)
    for i in range(d - len(w), d):
        b = w[0]
        if b == 0.0:
            w = w[1:]
            continue
        row = U[i]
        a = row[0]
        r = hypot(a, b)
        c, s = a / r, b / r
        U[i] = pivot_row = [r]
        rest, w = w, []
        for u, v in zip(islice(row, 1, None), islice(rest, 1, None)):
            pivot_row.append(c * u + s * v)
            w.append(c * v - s * u)


def _rotate_in_diagonal(U, root) -> None:
    """Rotate the rows of ``diag(root)`` (a list of floats) into ``U`` (as
    :func:`_rotate_in`, in their order): row ``i`` has its one nonzero ``root[i]`` in column
    ``i``, so its rotation with ``U``'s row ``i`` (the rest of which is ``u``) only scales:
    the pivot row becomes ``[r, c u]`` and the row rotated on ``-s u``, which
    :func:`_rotate_in` takes into the rows below (no products with the zeros)."""
    hypot = math.hypot
    for i, t in enumerate(root):
        row = U[i]
        a = row[0]
        r = hypot(a, t)
        c, s = a / r, t / r
        U[i] = [r] + [c * u for u in islice(row, 1, None)]
        if len(row) > 1:
            _rotate_in(U, [-s * u for u in islice(row, 1, None)])


def _upper_rows(rows) -> list:
    """The rows of ``L^T`` (lists of ``d`` floats, zero below the diagonal) as the rows of
    :func:`_rotate_in`: row ``i`` from column ``i`` on."""
    return [row[i:] for i, row in enumerate(rows)]


def _python_student(prior, root_t, nu, n: float, mean, Lt, x) -> float:
    """``log t(x)`` of a complete record ``x`` (list) from one statistic's weight ``n``, mean
    (list) and the rows of ``L^T`` (lists; ``L`` its lower factor), ``root_t`` and ``nu``
    the prior's ``T^(1/2)`` diagonal and mean as lists, in plain Python floats: the factor
    ``G`` of ``R`` by rotating the rows of ``T^(1/2)`` and then the prior-mean term into
    ``L^T`` (the order of :meth:`FullStatistics._log_det_r_and_quad`), then a forward
    substitution with ``G^T``; the quadratic form kept in log space as
    :meth:`FullStatistics.log_predictive` keeps it."""
    d = len(x)
    log = math.log
    k0 = prior.k0
    kappa = k0 + n
    U = _upper_rows(Lt)
    _rotate_in_diagonal(U, root_t)
    f = math.sqrt(k0 * n / kappa)
    _rotate_in(U, [f * (m - v) for m, v in zip(mean, nu)])
    delta = [a - (k0 * v + n * m) / kappa for a, v, m in zip(x, nu, mean)]
    scale = max(max(map(abs, delta)), 1.0)
    y = []
    quad = 0.0
    for i in range(d):
        s = delta[i] / scale
        for j in range(i):
            s -= U[j][i - j] * y[j]
        s /= U[i][0]
        y.append(s)
        quad += s * s
    log_det_r = 2.0 * sum([log(row[0]) for row in U])
    df = prior.df(n)
    ratio = kappa / (kappa + 1.0)
    if quad == 0.0:
        log_tail = 0.0
    else:  # log(1 + ratio q) = logaddexp(0, log ratio + log q), as numpy's
        a = log(ratio) + 2.0 * log(scale) + log(quad)
        log_tail = a + math.log1p(math.exp(-a)) if a > 0 else math.log1p(math.exp(a))
    return (math.lgamma(0.5 * (df + d)) - math.lgamma(0.5 * df) - 0.5 * d * LOG_PI
            - 0.5 * (log_det_r - d * log(ratio)) - 0.5 * (df + d) * log_tail)


class FullStatistics(_Statistics):
    """Weight, mean and Cholesky factor of the scatter of ``d`` numeric features over the
    complete records: the statistics of a full-covariance Gaussian.

    A record with a missing value is not learned (its weight counts for nothing; forgetting
    still applies). :meth:`log_predictive` of such a record is the marginal Student t of its
    observed features.

    Parameters
    ----------
    n_features : int
        ``d``.
    shape : tuple of int, default=()
        Leading batch axes, e.g. ``(n_members, n_classes)``.
    decay : float or array-like broadcastable to ``shape``, default=1.0
        Forgetting rate per record, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> s = FullStatistics(2)
    >>> s.add_many([[0.0, 1.0], [2.0, 3.0], [np.nan, 5.0]])   # the last one is incomplete
    >>> float(s.n), s.mean
    (2.0, array([1., 2.]))
    >>> s.scatter
    array([[2., 2.],
           [2., 2.]])
    >>> # A record with a missing value: the Student t of the observed feature, which is
    >>> # the univariate margin's predictive (here learned from the same two records).
    >>> prior, one = NormalWishartPrior(2), MomentStatistics(2)
    >>> one.add_many([[0.0, 1.0], [2.0, 3.0]])
    >>> bool(np.isclose(s.log_predictive(prior, [np.nan, 2.5]),
    ...                 one.log_predictive(prior, [np.nan, 2.5])[1]))
    True
    """

    _layout = (0, 1, 2)  # n, mean, L
    _pool = staticmethod(_pool_full)

    def __getstate__(self):  # the kept prior terms and decay roots: derived
        state = super().__getstate__()
        state.pop("_prior_kept", None)
        return state

    def add(self, x, weight=1.0) -> None:
        """Forget by ``decay``, then learn one record (:meth:`_Statistics.add`): the
        factors of the statistics the record reaches get its row ``z`` (Chan et al.'s
        between term, as :func:`_pool_full`) by a QR of ``[L^T; z]``: LAPACK's
        triangle-plus-rows QR one factor at a time when they have at most
        :data:`~onlinebma.tuning.TRIANGLE_UPDATE_FEATURES` features, else numpy's QR of the
        stacked factors; the others are only scaled (the QR of ``[L^T; 0]`` is ``L^T``).
        The parameters are :meth:`_Statistics.add`'s.
        """
        x = _check_record(x, self.n_features)
        w = _check_weights(weight, self.shape)
        (nA, mA, LA), forgot = self._forgotten()
        # nothing learned but the forgetting (the values are at most 1e100: NaN sums to NaN)
        if not w.any() or math.isnan(sum(x.tolist())):
            self._state = (nA, mA, LA)
            return
        n = nA + w
        frac = w / np.where(n > 0, n, 1.0)  # 0 where n = 0 (then w = 0)
        diff = x - mA
        root = np.sqrt(nA * frac)
        d = self.n_features
        todo = root.ravel().nonzero()[0]  # the factors a nonzero row can reach
        L = LA.reshape(-1, d, d) if forgot else LA.reshape(-1, d, d).copy()
        if len(todo):
            rows = (root[..., None] * diff).reshape(-1, d)[todo]
            if d <= tuning.TRIANGLE_UPDATE_FEATURES:
                L = _triangle_plus_row(L, todo, rows)
            else:
                L[todo] = _lower_factor(np.concatenate([np.swapaxes(L[todo], -1, -2),
                                                        rows[:, None, :]], axis=-2))
        self._state = (n, mA + frac[..., None] * diff, L.reshape(LA.shape))

    def _block(self, X, w):
        """One block's weight, mean (one weighted pass) and factor (QR of the centred,
        weighted rows)."""
        complete = ~np.isnan(X).any(axis=1)
        w = w * complete.reshape((-1,) + (1,) * len(self.shape))
        X = np.where(complete[:, None], X, 0.0)
        n = w.sum(axis=0)
        mean = _safe_div(np.tensordot(np.moveaxis(w, 0, -1), X, axes=1), n[..., None])
        rows = np.sqrt(w)[..., None] * (X.reshape((len(X),) + (1,) * len(self.shape)
                                                  + X.shape[1:]) - mean)
        d = self.n_features
        M = np.concatenate([np.moveaxis(rows, 0, -2), np.zeros(self.shape + (d, d))], axis=-2)
        return n, mean, _lower_factor(M)

    @property
    def cholesky(self) -> np.ndarray:
        """Lower-triangular ``L`` with ``L L^T`` the scatter (shape ``shape + (d, d)``)."""
        return _read_only(self._state[2])

    @property
    def scatter(self) -> np.ndarray:
        """The centred scatter ``L L^T`` (formed on demand; the scores never form it)."""
        L = self._state[2]
        return L @ np.swapaxes(L, -1, -2)

    def _prior_terms(self, prior) -> tuple:
        """What a predictive takes from ``prior`` (kept for the last prior and shape, not
        shared with a copy): the array ``N`` of :meth:`_log_det_r_and_quad` over every
        feature with its constant parts filled in (filling a new array per record cost about
        as much as the QR), and ``T^(1/2)``'s diagonal and ``nu`` as lists (for
        :func:`_python_student`)."""
        kept = self.__dict__.get("_prior_kept")
        if (kept is None or kept[0] is not prior or kept[1] != self.shape
                or kept[2] != id(self)):
            kept = self._prior_kept = (prior, self.shape, id(self),
                                       self._bordered_rows(prior, np.arange(self.n_features)),
                                       np.sqrt(prior.t).tolist(), prior.nu.tolist())
        return kept[3:]

    def _bordered_rows(self, prior, idx) -> np.ndarray:
        """A new array ``N`` of :meth:`_log_det_r_and_quad` for the features ``idx`` with its
        constant parts filled in: ``T_SS^(1/2)``, the zero column and the corner 1."""
        d, p = self.n_features, len(idx)
        N = np.zeros(self.shape + (d + p + 2, p + 1))
        N[..., d:d + p, :p] = np.diag(np.sqrt(prior.t[idx]))
        N[..., -1, p] = 1.0
        return N

    def _log_det_r_and_quad(self, prior, idx, x):
        """``log|R_SS|`` and ``log(delta^T R_SS^-1 delta)`` of the features ``idx`` (``None``:
        every one), ``delta`` the record's values ``x`` of them (``None``: the location,
        ``delta = 0``) minus the posterior location, from one QR with no solve.

        The stacked factors ``M`` of ``R_SS``, in this order: the scatter's rows ``S`` of
        ``L`` (transposed), ``T_SS^(1/2)``, the prior-mean term ``b = sqrt(k0 n / kappa)
        (mean - nu)``. The order matters to the QR: with the scatter's factor on top, each
        Householder pivot is a large entry of ``L`` and ``T``'s share of a near-singular
        scatter enters as products, not as a difference of large numbers (``T`` on top lost
        about ``sqrt(S / t)`` relative, 2e-10 nats on 10^4 near-duplicate records). ``M``
        bordered by a column of zeros and the row ``[u^T, 1]``,

        .. math:: N = \\begin{pmatrix} M & 0 \\\\ u^T & 1 \\end{pmatrix}, \\qquad
                  N^T N = \\begin{pmatrix} R + u u^T & u \\\\ u^T & 1 \\end{pmatrix},

        has the determinant ``|R|`` (the Schur complement of the corner 1 is ``R``), and the
        factor of its QR, ``[[G, g], [0, r]]``, has ``G^T g = u`` and ``r^2 = 1 - u^T (R +
        u u^T)^-1 u = 1 / (1 + u^T R^-1 u)`` (Sherman–Morrison), so ``log|R| = 2 sum_i
        log|G_ii| + 2 log|r|`` and ``u^T R^-1 u = |g|^2 / r^2``: products and sums of
        squares, nothing subtracted. ``u = delta / s``, ``s`` the largest ``|delta|`` of the
        batch and at least 1, and the quadratic form is ``log(s^2) + log(|g|^2 / r^2)``: any
        finite value may be predicted (a value near the largest float gives a finite, very
        small density instead of ``inf - inf``)."""
        n, mean, L = self._state
        d = self.n_features
        nu = prior.nu
        if idx is None:  # the kept array, T^(1/2), the zeros and the corner in place
            N = self._prior_terms(prior)[0]
        else:
            N = self._bordered_rows(prior, idx)
            nu, mean, L = nu[idx], mean[..., idx], L[..., idx, :]
        p = mean.shape[-1]
        kappa = n + prior.k0
        shrink = prior.k0 / kappa
        centred = mean - nu
        N[..., :d, :p] = np.swapaxes(L, -1, -2)
        np.multiply(np.sqrt(shrink * n)[..., None], centred, out=N[..., d + p, :p])
        if x is None:
            scale = 1.0
            N[..., -1, :p] = 0.0
        else:  # x - (k0 nu + n mean) / kappa
            delta = (x - mean) + shrink[..., None] * centred
            scale = max(float(np.abs(delta).max()), 1.0)
            np.divide(delta, scale, out=N[..., -1, :p])
        h = np.linalg.qr(N, mode="raw")[0]  # the factor's transpose in its lower triangle
        log_diag = np.log(np.abs(np.diagonal(h, 0, -2, -1)))
        g = h[..., p, :p]  # the last column of the factor, above its diagonal
        with np.errstate(divide="ignore"):  # u = 0: log 0 = -inf (and log1p(0) = 0 later)
            log_quad = np.log(np.vecdot(g, g)) - 2.0 * (log_diag[..., p] - math.log(scale))
        return 2.0 * log_diag.sum(axis=-1), log_quad

    def _subset(self, subset):
        d = self.n_features
        if subset is None:
            return np.arange(d)
        idx = np.asarray(subset)
        if idx.size == 0:
            return np.zeros(0, dtype=int)
        if idx.ndim != 1 or idx.dtype.kind not in "iu" or len(np.unique(idx)) != len(idx) \
                or np.any((idx < 0) | (idx >= d)):
            raise ValueError(f"subset must list distinct feature indices in [0, {d}), "
                             f"got {subset!r}")
        return idx

    def log_marginal(self, prior: NormalWishartPrior, subset=None) -> np.ndarray:
        """``log ML(S)`` of the features ``subset`` (Kuipers et al. 2014).

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        subset : sequence of int or None, default=None
            Feature indices; ``None`` is all of them. The empty subset scores 0.

        Returns
        -------
        numpy.ndarray of shape ``shape``
        """
        _check_prior_for(prior, self.n_features)
        idx = self._subset(subset)
        if len(idx) == 0:
            return np.zeros(self.shape)
        log_det_r = self._log_det_r_and_quad(prior, idx, None)[0]
        return _log_ml(prior, len(idx), self._state[0], np.log(prior.t[idx]).sum(), log_det_r)

    def log_predictive(self, prior: NormalWishartPrior, x) -> np.ndarray:
        """Log multivariate Student t predictive density of the observed features of ``x``
        (0 if none is observed).

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        x : array-like of shape (d,)
            A record; NaN marks a missing value.

        Returns
        -------
        numpy.ndarray of shape ``shape``
        """
        _check_prior_for(prior, self.n_features)
        x = np.asarray(x, dtype=float)
        d = self.n_features
        if x.shape != (d,):
            raise ValueError(f"a record must have shape ({d},), got {x.shape}")
        values = x.tolist()
        idx = None  # every feature
        if not math.isfinite(sum(values)):  # a value missing or infinite (or a huge sum)
            if np.isinf(x).any():
                raise ValueError(f"values must be finite (NaN = missing), got {values}")
            observed = np.flatnonzero(~np.isnan(x))
            if len(observed) == 0:
                return np.zeros(self.shape)
            if len(observed) < d:
                idx, x = observed, x[observed]
        n, mean, L = self._state
        if idx is None and n.size * (d ** 3 + 125) <= tuning.NARROW_PREDICTIVE_WORK:
            _, root_t, nu = self._prior_terms(prior)  # a few small factors: plain floats
            return np.array([_python_student(prior, root_t, nu, *s, values) for s in
                             zip(n.ravel().tolist(), mean.reshape(-1, d).tolist(),
                                 np.swapaxes(L, -1, -2).reshape(-1, d, d).tolist())]
                            ).reshape(self.shape)
        log_det_r, log_quad = self._log_det_r_and_quad(prior, idx, x)
        return _log_student(prior, len(x), n, log_det_r, log_quad=log_quad)


def _check_prior_for(prior, d):
    if not isinstance(prior, NormalWishartPrior) or prior.n_features != d:
        raise ValueError(f"need a NormalWishartPrior over {d} features, got {prior!r}")


# ---------------------------------------------------------------------- moment statistics

def _pool_moments(A, B):
    """Pool two ``(n, mean, root scatter)`` per feature (Chan et al.; ``B`` may be single
    records ``(n, mean)``)."""
    nA, mA, aA = A
    nB, mB, *scatter_B = B  # single records (add) come without a scatter: (n, mean)
    n = nA + nB
    frac = _safe_div(nB, n)
    diff = mB - mA
    z = np.sqrt(nA * frac) * diff  # as in _pool_pairs, whose diagonal this is
    a2 = aA * aA + z * z
    if scatter_B:
        a2 = a2 + scatter_B[0] * scatter_B[0]
    return n, mA + frac * diff, np.sqrt(a2)


def _record_moments(X, w):
    obs = ~np.isnan(X)
    return np.where(obs, np.asarray(w)[..., None], 0.0), np.where(obs, X, 0.0), np.zeros(X.shape)


class MomentStatistics(_Statistics):
    """Per-feature weight, mean and root scatter of ``d`` numeric features, each over the
    records where it is observed: univariate Gaussians, e.g. the conditional Gaussian family
    of numeric children given a nominal parent (batch axes ``(class, value of the parent)``).

    Parameters
    ----------
    n_features : int
        ``d``.
    shape : tuple of int, default=()
        Leading batch axes.
    decay : float or array-like broadcastable to ``shape``, default=1.0
        Forgetting rate per record, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> s = MomentStatistics(2, shape=(3,))          # 3 values of a nominal parent
    >>> s.add([1.0, 2.0], weight=[0, 1, 0])          # the parent took value 1
    >>> s.add([3.0, np.nan], weight=[0, 1, 0])
    >>> s.n[1], s.mean[1], s.scatter[1]
    (array([2., 1.]), array([2., 2.]), array([2., 0.]))
    >>> prior = NormalWishartPrior(2)
    >>> s.pooled(0).n
    array([2., 1.])
    """

    _layout = (1, 1, 1)  # n, mean, root scatter: shape + (d,)
    _pool = staticmethod(_pool_moments)
    _nodes = staticmethod(_record_moments)

    def add(self, x, weight=1.0) -> None:
        """Forget by ``decay``, then learn one record (:meth:`_Statistics.add`, whose
        parameters these are): :func:`_pool_moments` of the forgotten statistics and the
        record, in plain Python floats when the statistics are few
        (:data:`~onlinebma.tuning.NARROW_MOMENT_UPDATE_CELLS`)."""
        x = _check_record(x, self.n_features)
        w = _check_weights(weight, self.shape)
        if self._state[0].size > tuning.NARROW_MOMENT_UPDATE_CELLS:
            self._state = self._pool(self._forgotten()[0], self._records(x, w))
            return
        d = self.n_features
        decay = self.decay.ravel().tolist()
        forgets = any(lam != 1.0 for lam in decay)
        values = x.tolist()
        n_out, mean_out, a_out = [], [], []
        for n_s, mean_s, a_s, lam, w_s in zip(*(s.reshape(-1, d).tolist() for s in self._state),
                                             decay, w.ravel().tolist()):
            root = math.sqrt(lam) if forgets else 1.0
            n_row, mean_row, a_row = [], [], []
            for n, m, a, value in zip(n_s, mean_s, a_s, values):
                if forgets:  # as _scaled
                    n, a = n * lam, a * root
                if value != value or w_s == 0.0:  # missing or not this statistic's: forget
                    n_row.append(n)
                    mean_row.append(m)
                    a_row.append(math.sqrt(a * a))
                    continue
                total = n + w_s
                frac = w_s / total
                diff = value - m
                z = math.sqrt(n * frac) * diff
                n_row.append(total)
                mean_row.append(m + frac * diff)
                a_row.append(math.sqrt(a * a + z * z))
            n_out.append(n_row)
            mean_out.append(mean_row)
            a_out.append(a_row)
        shape = self.shape + (d,)
        self._state = tuple(np.array(s).reshape(shape) for s in (n_out, mean_out, a_out))

    @property
    def scatter(self) -> np.ndarray:
        """Centred (weighted) sum of squares of each feature."""
        return self._state[2] ** 2

    def _batch_axis(self, axis: int) -> int:
        k = len(self.shape)
        if not -k <= axis < k:
            raise ValueError(f"axis {axis} is not a batch axis of shape {self.shape}")
        return axis % k

    def _pooled_moments(self, axis: int) -> tuple:
        """Weight, mean and scatter (squared) of each feature pooled over the batch axis
        ``axis`` (non-negative): Chan et al.'s pooled moments in one pass, a sum of
        non-negative terms: the weights, the weighted mean, and the scatters plus each part's
        weight times its squared distance from that mean."""
        n_c, mean_c, a_c = self._state
        n = n_c.sum(axis=axis)
        mean = _safe_div((n_c * mean_c).sum(axis=axis), n)
        a2 = (a_c * a_c + n_c * (mean_c - np.expand_dims(mean, axis)) ** 2).sum(axis=axis)
        return n, mean, a2

    def spread(self, axis: int) -> np.ndarray:
        """Each feature's standard deviation over the records of every statistic along one
        batch axis (the square root of :meth:`pooled`'s scatter over its weight; 1 where that
        has no weight or no scatter), without building the pooled statistics.

        Parameters
        ----------
        axis : int
            A batch axis (of ``shape``).

        Returns
        -------
        numpy.ndarray of shape ``shape`` without ``axis``, plus ``(d,)``

        Examples
        --------
        >>> s = MomentStatistics(2, shape=(2,))
        >>> s.add_many([[0.0, 5.0], [2.0, 5.0]], weights=[[1, 0], [0, 1]])
        >>> s.spread(0)                # 0 and 2 pooled: standard deviation 1; 5, 5: none
        array([1., 1.])
        """
        n, _, a2 = self._pooled_moments(self._batch_axis(axis))
        return np.sqrt(np.divide(a2, n, out=np.ones_like(a2), where=(n > 0) & (a2 > 0)))

    def pooled(self, axis: int) -> MomentStatistics:
        """The statistics pooled over one batch axis (e.g. over the parent's values: the
        child's own family over the same records).

        Parameters
        ----------
        axis : int
            A batch axis (of ``shape``).
        """
        axis = self._batch_axis(axis)
        n, mean, a2 = self._pooled_moments(axis)
        new = object.__new__(MomentStatistics)
        new.__dict__.update(
            n_features=self.n_features, shape=self.shape[:axis] + self.shape[axis + 1:],
            decay=np.array(np.moveaxis(np.asarray(self.decay), axis, 0)[0])
            if np.ndim(self.decay) else self.decay,
            _state=(n, mean, np.sqrt(a2)))
        return new

    def log_marginal(self, prior: NormalWishartPrior) -> np.ndarray:
        """``log ML({u})`` of each feature (its margin of ``prior``).

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d,)``
        """
        _check_prior_for(prior, self.n_features)
        return _log_ml_single(prior, *self._state)

    def log_predictive(self, prior: NormalWishartPrior, x, scale=None) -> np.ndarray:
        """``log t1(x_u)`` of each observed feature, 0 where missing.

        Parameters
        ----------
        prior : NormalWishartPrior
            Over the same ``d`` features.
        x : array-like of shape (d,)
            A record; NaN marks a missing value.
        scale : array-like or None, default None
            Positive factors, broadcast to ``shape + (d,)``, of the prior's ``scale`` per
            statistic and feature (``T`` times their squares): e.g. each feature's spread
            read from the statistics themselves (:mod:`onlinebma.tan.gaussian`). ``None``:
            the prior's own.

        Returns
        -------
        numpy.ndarray of shape ``shape + (d,)``

        Examples
        --------
        >>> s = MomentStatistics(1)
        >>> s.add_many([[0.10], [0.12], [0.11]])
        >>> prior = NormalWishartPrior(1)
        >>> wide, narrow = s.log_predictive(prior, [0.11]), s.log_predictive(prior, [0.11], 0.01)
        >>> bool(narrow[0] > wide[0])  # a prior as wide as the data sharpens the prediction
        True
        """
        _check_prior_for(prior, self.n_features)
        x = _check_record(x, self.n_features)
        t = None
        if scale is not None:
            scale = np.asarray(scale, dtype=float)
            if scale.size and not (scale.min() > 0 and scale.max() < math.inf):  # NaN: no
                raise ValueError(f"scale must be positive and finite, got {scale!r}")
            t = prior.t * scale * scale
        return _log_t_single(prior, *self._state, x, ~np.isnan(x), t)


def nominal_parent_log_weights(conditional: MomentStatistics, prior: NormalWishartPrior,
                               value_axis: int = -1) -> np.ndarray:
    """Log weight of a nominal parent ``u`` for each numeric child ``v``: the conditional
    Gaussian family (one Gaussian per value of ``u``) against ``v``'s own family, over the same
    records (those where ``u`` and ``v`` are observed).

    ``sum_j log ML({v} | u = j) - log ML({v})``, each a univariate margin of ``prior``.

    Parameters
    ----------
    conditional : MomentStatistics
        Statistics of the children with a batch axis over the values of ``u``.
    prior : NormalWishartPrior
        Over the children.
    value_axis : int, default=-1
        The batch axis of the values of ``u``.

    Returns
    -------
    numpy.ndarray
        Shape ``conditional.shape`` without ``value_axis``, plus ``(d,)``.

    Examples
    --------
    >>> s = MomentStatistics(1, shape=(2,))
    >>> for value, x in [(0, 0.0), (0, 0.1), (1, 5.0), (1, 5.2)]:
    ...     s.add([x], weight=[value == 0, value == 1])
    >>> bool(nominal_parent_log_weights(s, NormalWishartPrior(1))[0] > 0)
    True
    """
    k = len(conditional.shape)
    if not -k <= value_axis < k:
        raise ValueError(f"value_axis {value_axis} is not a batch axis of shape "
                         f"{conditional.shape}")
    pooled = conditional.pooled(value_axis)
    return (conditional.log_marginal(prior).sum(axis=value_axis % k)
            - pooled.log_marginal(prior))


def nominal_parent_log_q(conditional: MomentStatistics, prior: NormalWishartPrior, x, value: int,
                         value_axis: int = -1) -> np.ndarray:
    """What learning ``x`` adds to :func:`nominal_parent_log_weights` (without forgetting):
    ``log t1(x_v | u = value) - log t1(x_v)``, the child's predictive in the parent's cell
    against its predictive over the records where ``u`` is observed; 0 where ``x_v`` is
    missing. The predictive of a directed edge ``u -> v``'s factor in the forest sum.

    Parameters
    ----------
    conditional : MomentStatistics
        As for :func:`nominal_parent_log_weights`.
    prior : NormalWishartPrior
        Over the children.
    x : array-like of shape (d,)
        The children's values (NaN = missing).
    value : int
        The parent's value in ``x`` (an index along ``value_axis``).
    value_axis : int, default=-1
        The batch axis of the values of ``u``.

    Returns
    -------
    numpy.ndarray
        Shape ``conditional.shape`` without ``value_axis``, plus ``(d,)``.

    Examples
    --------
    >>> prior, s = NormalWishartPrior(1), MomentStatistics(1, shape=(2,))
    >>> s.add_many([[0.0], [0.2], [5.0]], weights=[[1, 0], [1, 0], [0, 1]])
    >>> before = nominal_parent_log_weights(s, prior)
    >>> q = nominal_parent_log_q(s, prior, [5.1], value=1)
    >>> s.add([5.1], weight=[0, 1])
    >>> bool(np.isclose(nominal_parent_log_weights(s, prior), before + q, rtol=1e-12))
    True
    """
    k = len(conditional.shape)
    if not -k <= value_axis < k:
        raise ValueError(f"value_axis {value_axis} is not a batch axis of shape "
                         f"{conditional.shape}")
    if not 0 <= value < conditional.shape[value_axis]:
        raise ValueError(f"value {value!r} is not an index along axis {value_axis} of shape "
                         f"{conditional.shape}")
    cell = np.take(conditional.log_predictive(prior, x), value, axis=value_axis % k)
    return cell - conditional.pooled(value_axis).log_predictive(prior, x)
