"""The count event model of the naive Bayes family (``absent="zero"``): bags of words.

With ``absent="zero"`` a record's numeric features are counts (word counts, term
frequencies): an absent key is a zero count. The counts of a record are one observation of a
*multinomial over the vocabulary* (the words seen so far with a positive count), as in River's
``MultinomialNB``: a record with counts ``x_w`` is ``L = sum_w x_w`` tokens, and

    log P(x | y) = sum_w x_w log θ_wy + (multinomial coefficient, the same for every class)

so absent words cost nothing and a record costs O(present words × classes), whatever the
vocabulary's size. The per-class totals ``N_y`` (tokens of class ``y``) carry the absent words.

The tokens are one categorical variable of the naive network, "the word of a token", kept in
one :class:`~onlinebma.stats.tables.NominalTable` (value = word, weight = count) under the
reserved feature name :data:`COUNTS`. Its arc C → words is averaged like any other feature's:
ModelAveragedNB and BMANB average over all 2^(1 + nominal features) structures. With per-word
arcs (2^V structures) every word of the vocabulary, present or not, would have its own mixed
term for a zero count, whose weights and predictives change with every learned record; we know
of no per-class total that carries their sum, so exact per-word averaging would cost
O(vocabulary) per record.

- Plug-in (NaiveBayes, BMANB): ``θ_wy = (N_wy + α) / (N_y + α V)`` (:func:`plugin_bag`).
- Bayesian (ModelAveragedNB): the Dirichlet-multinomial predictive of the whole bag
  (:func:`dirichlet_bag`), ``Γ(αV + N_y) / Γ(αV + N_y + L) · Π_w Γ(α + N_wy + x_w) / Γ(α + N_wy)``,
  whose product over the stream is the token sequence's marginal likelihood (eq. 8 of Dash &
  Cooper 2002 for the variable "word").
"""

from __future__ import annotations

import math

__all__ = ["COUNTS", "check_bag", "check_name", "dirichlet_bag", "log_rising", "plugin_bag"]

COUNTS = "<counts>"
"""The reserved feature name under which the multinomial over words is kept and reported (for
example by ``feature_posteriors()``)."""


def check_name(new_features) -> None:
    """Refuse the reserved name :data:`COUNTS` among a record's new features."""
    if COUNTS in new_features:
        raise ValueError(f"the feature name {COUNTS!r} is reserved with absent='zero'")


def check_bag(pairs) -> list:
    """The ``(word, count)`` pairs with a positive count; a negative count is a ValueError
    naming the feature."""
    bag = []
    for f, v in pairs:
        if v > 0:
            bag.append((f, v))
        elif v < 0:
            raise ValueError(
                f"feature {f!r} has a negative count {v!r}; with absent='zero' numeric "
                f"features are counts (>= 0)"
            )
    return bag


def log_rising(z: float, x: float) -> float:
    """``log Γ(z + x) / Γ(z)``: a log for one token, a sum of logs for a few, else lgamma
    (whose difference loses digits when ``z`` is large)."""
    if x == 1:
        return math.log(z)
    if x == int(x) and x <= 8:
        return sum(math.log(z + i) for i in range(int(x)))
    return math.lgamma(z + x) - math.lgamma(z)


def plugin_bag(a: float, r: int, table, bag, classes, marginal: bool = True):
    """``(log Π_w θ_w^x_w, [log Π_w θ_wy^x_w for y in classes])`` with the smoothed estimates
    ``θ_wy = (N_wy + a) / (N_y + a r)`` (``a`` in the counts' unit); the first is ``None``
    unless ``marginal``."""
    log = math.log
    joint = table.n_joint
    pairs = [(joint[f], v) for f, v in bag]
    total = sum(v for _, v in bag)
    ra = r * a
    n_class = table.n_class
    arc = []
    for y in classes:
        s = -total * log(ra + n_class.get(y, 0))
        for row, v in pairs:
            n = row.get(y)
            s += v * log(a + n if n else a)
        arc.append(s)
    if not marginal:
        return None, arc
    n_value = table.n_value
    none = sum(v * log(a + n_value[f]) for f, v in bag) - total * log(ra + table.n)
    return none, arc


def dirichlet_bag(a: float, r: int, c: float, table, bag, classes, marginal: bool = True):
    """Like :func:`plugin_bag` with the Dirichlet(a)-multinomial predictive of the whole bag
    (counts times ``c`` are in records). Words of the bag not yet in ``table`` count zero."""
    joint = table.n_joint
    empty: dict = {}
    pairs = [(joint.get(f, empty), v) for f, v in bag]
    total = sum(v for _, v in bag)
    ra = r * a
    n_class = table.n_class
    rising = log_rising
    arc = []
    for y in classes:
        s = -rising(ra + n_class.get(y, 0) * c, total)
        for row, v in pairs:
            n = row.get(y)
            z = a + n * c if n else a
            s += math.log(z) if v == 1 else rising(z, v)
        arc.append(s)
    if not marginal:
        return None, arc
    n_value = table.n_value
    none = sum(rising(a + n_value.get(f, 0) * c, v) for f, v in bag) - rising(ra + table.n * c,
                                                                               total)
    return none, arc
