"""Exact Bayesian model averaging over every tree- or forest-augmented naive Bayes structure.

See :class:`ModelAveragedTAN` and the method page ``docs/tan.md`` for the formulas.
"""

from __future__ import annotations

import numpy as np
from river import base

from ..forgetting import AUTO_GRID
from ..validation import check_bool, check_choice, check_decay, check_int, check_real
from .base import NOMINAL_DOC, NUMERIC_ATTRIBUTES_DOC, SAMPLE_SIZE_DOC
from .gaussian import GAUSSIAN, INDEPENDENT_GAUSSIANS
from .gaussian_forests import GAUSSIAN_FORESTS
from .grid_stack import GridStack
from .members import AODE, Member, TreeMemberStack
from .merging import Merging
from .numbers import LEARN_MANY_CHECK, REPRESENTATIONS

#: The representations of ``numeric="auto"`` for a learner that forgets nothing
#: (``decay=1``: tables, stationary streams) and for one that forgets (docs/tan.md: the
#: measured choice: class-aware MDL cut points beside a 16-interval grid were better on the
#: small tables and adult than MDL alone, 8 equal-frequency intervals on the drifting
#: streams, where cut points fitted to the early classes go stale and a second grid would
#: cost the speed of every record; independent Gaussians beside the full-covariance one
#: when forgetting, where fast rates hold too few records for a covariance: Elec2 0.877 ->
#: 0.889 accuracy, the other streams unchanged).
AUTO_REPRESENTATIONS = {"remembering": ("MDL", "16 intervals", GAUSSIAN),
                        "forgetting": ("8 intervals", GAUSSIAN, INDEPENDENT_GAUSSIANS)}

#: What ``numeric`` may name.
NUMERIC_CHOICES = ("auto", GAUSSIAN, INDEPENDENT_GAUSSIANS, GAUSSIAN_FORESTS,
                   *REPRESENTATIONS)

__all__ = ["ModelAveragedTAN", "auto_representations", "chosen_representations"]


def auto_representations(decay) -> tuple:
    """The representations ``numeric="auto"`` averages at this ``decay``
    (:data:`AUTO_REPRESENTATIONS`)."""
    return AUTO_REPRESENTATIONS["remembering" if decay == 1 else "forgetting"]


def chosen_representations(numeric, decay) -> tuple:
    """The representations a learner's ``numeric`` names at this ``decay``: ``"auto"``'s
    (:func:`auto_representations`), one name of :data:`NUMERIC_CHOICES`, or a tuple or list
    of distinct names (not ``"auto"``); a ValueError naming a bad one.

    >>> chosen_representations(["3 intervals", "MDL"], 1.0)
    ('3 intervals', 'MDL')
    >>> chosen_representations(("MDL", "7 intervals"), 1.0)
    Traceback (most recent call last):
    ...
    ValueError: numeric must name representations among ('Gaussian', 'independent Gaussians', \
'Gaussian forests', '3 intervals', '5 intervals', '8 intervals', '16 intervals', \
'32 intervals', 'MDL'), got '7 intervals'
    """
    if isinstance(numeric, (tuple, list)):
        if not numeric:
            raise ValueError("numeric must name at least one representation, got an empty "
                             f"{type(numeric).__name__}")
        for name in numeric:
            if not isinstance(name, str) or name not in NUMERIC_CHOICES[1:]:
                raise ValueError(f"numeric must name representations among "
                                 f"{NUMERIC_CHOICES[1:]}, got {name!r}")
        for name in numeric:
            if numeric.count(name) > 1:
                raise ValueError(f"numeric names {name!r} twice")
        return tuple(numeric)
    check_choice("numeric", numeric, NUMERIC_CHOICES)
    return auto_representations(decay) if numeric == "auto" else (numeric,)

class ModelAveragedTAN(Merging, base.MiniBatchClassifier):
    __doc__ = rf"""Exact Bayesian model averaging over all tree- or forest-augmented networks.

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
    likelihood of a structure is then the naive one times ``prod_{{uv in G}} W_uv`` with

    .. math:: \log W_{{uv}} = h(CUV) - h(CU) - h(CV) + h(C),\quad
              h(S) = \sum_{{\text{{cells of }} S}} \ln\Gamma(a + n) - \ln\Gamma(a),

    over the pair table ``N(c, x_u, x_v)`` and its margins, and the prediction is

    .. math:: P(c \mid x) \propto \theta_c \prod_v \theta_{{x_v \mid c}}\,
              \exp\bigl(LT(l + \log Q_c(x)) - LT(l)\bigr),\quad
              Q_c(x)_{{uv}} = \frac{{\theta_{{x_u x_v \mid c}}}}{{\theta_{{x_u \mid c}}\,
              \theta_{{x_v \mid c}}}},

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
    structures : {{"forests", "trees"}}, default "forests"
        Forests had a lower mean error and log loss than trees at every ``ess`` measured (12
        shared UCI sets, 5 folds, MDL per fold: docs/tan.md), and they include naive Bayes,
        which trees cannot fall back to.
    ess : float, default 10.0
        Equivalent sample size of the joint Dirichlet prior (docs/tan.md): on held-out UCI
        data the mean log loss falls with ``ess`` (0.5 to 50) while the mean error moves
        within the spread between fold draws, but on streams with forgetting the effective
        sample is small and a large ``ess`` over-smooths (``decay="auto"``, first 2,000
        records: log loss 0.39 -> 0.42 on Elec2 and 0.19 -> 0.30 on STAGGER from 10 to 50).
        At 10 the mean error and log loss on the UCI sets are below Weka's TAN and AODE
        (docs/results/tan.md).
    edge_prior : float, default 1.0
        Prior weight of each feature–feature edge relative to none (forests only).
    decay : float or "auto", default 1.0
        λ in (0, 1]: every count is multiplied by λ after each learned record (the prior
        pseudo-counts are not), or ``"auto"``: one member per rate of
        :data:`~onlinebma.forgetting.AUTO_GRID`, averaged with dynamic-model-averaging
        weights (as :class:`~onlinebma.forgetting.RateMixture`). Either way the state
        is one :class:`~onlinebma.tan.members.TreeMemberStack`: one member per (numeric
        representation, rate).
    structure_decay : float, default 1.0
        α in (0, 1]: the structure posterior is flattened after each record,
        ``l <- α (l + log Q_y(x))`` (prequential, with the counts and priors current before
        the record; the prior over structures is applied outside, not flattened).
    {NOMINAL_DOC}
    numeric : str or tuple of str, default "auto"
        How numeric features are read: ``"auto"`` averages several representations per
        record, exactly, with dynamic-model-averaging weights over (representation, rate)
        (:meth:`representation_posterior`; stacking weights after :meth:`learn_many` of a
        learner that forgets nothing): a full-covariance Normal–Wishart Gaussian per
        class (:mod:`onlinebma.tan.gaussian`) and intervals, class-aware MDL cut points
        beside a 16-interval grid without forgetting (``decay=1``), or 8 equal-frequency
        intervals and independent Gaussians (one per feature and class, the prior as wide as
        the data's spread) with it (:data:`AUTO_REPRESENTATIONS`; docs/tan.md: the measured
        choice); or one of them: ``"B intervals"`` (B = 3, 5, 8, 16, 32), ``"MDL"``
        (class-aware cut points), ``"Gaussian"``, ``"independent Gaussians"`` or
        ``"Gaussian forests"`` (:data:`NUMERIC_CHOICES`): the
        exact average over every forest- (tree-) augmented structure of the nominal and
        numeric features, numeric pairs by BGe (Normal–Wishart) families, a nominal feature
        may parent a numeric one (one Gaussian per value), never the reverse, summed by
        Tutte's directed matrix-tree theorem (:mod:`onlinebma.tan.gaussian_forests`; not in
        ``"auto"``); or a tuple (or list) of distinct names of them, averaged alike: e.g.
        ``("3 intervals", "16 intervals", "MDL", "Gaussian")``, interval grids at several
        resolutions, each with its own cut points from the same sample
        (:class:`~onlinebma.tan.grid_stack.GridStack`).
    {SAMPLE_SIZE_DOC}
    {NUMERIC_ATTRIBUTES_DOC}
    aode : bool, default True
        Whether AODE's estimates (Webb, Boughton & Wang 2005; :mod:`onlinebma.tan.aode`,
        Laplace, every value a super-parent) join the average: beside each interval
        representation's structure average at each rate, a member that predicts with AODE
        from the same counts, weighed with the others (the same recursion; stacking in
        :meth:`learn_many`; :meth:`predictive_posterior`). It costs no counts of its own,
        only its estimates per record. With no interval representation (``numeric=
        "Gaussian"``) there is none. The default is the measured choice (docs/tan.md: lower
        log loss on the small tables, adult and five of the six drift streams).

    Attributes
    ----------
    counts : PairCounts
        The counts of every member (:class:`~onlinebma.stats.pairs.PairCounts` with
        ``n_members`` = R, one for a fixed decay): read member ``r``'s tables with
        ``counts.class_counts(r)``, ``counts.single(u, r)``, ``counts.pair(u, v, r)``, in
        that member's scaled unit (a multiple of the decayed counts, renormalised now and
        then; exact counts without forgetting). With several interval representations,
        those of the first one's grid (each grid counts its own intervals:
        ``state.parts[j].counts``).
    edge_log_weights : numpy.ndarray
        ``l`` of every count row (one per rate), ``(R, pairs)`` (the first grid's with
        several).

    Examples
    --------
    >>> from onlinebma.tan import ModelAveragedTAN
    >>> model = ModelAveragedTAN()
    >>> model.predict_proba_one({{"sky": "sunny"}})
    {{}}
    >>> data = [({{"sky": "sunny", "wind": "calm", "sea": "flat"}}, "beach"),
    ...         ({{"sky": "rain", "wind": "storm", "sea": "rough"}}, "home"),
    ...         ({{"sky": "sunny", "wind": "storm", "sea": "rough"}}, "home"),
    ...         ({{"sky": "sunny", "wind": "calm", "sea": "flat"}}, "beach")]
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> p = model.predict_proba_one({{"sky": "sunny", "wind": "calm"}})
    >>> max(p, key=p.get)
    'beach'
    >>> edges = model.edge_posteriors()
    >>> sorted(edges) == [("sky", "sea"), ("sky", "wind"), ("wind", "sea")]
    True
    """

    def __init__(self, structures: str = "forests", ess: float = 10.0, edge_prior: float = 1.0,
                 decay: float | str = 1.0, structure_decay: float = 1.0,
                 nominal_attributes: list | None = None, numeric: str = "auto",
                 sample_size: int = 200, numeric_attributes: list | None = None,
                 aode: bool = True):
        check_decay("decay", decay, auto=True)
        representations = chosen_representations(numeric, decay)
        check_int("sample_size", sample_size, 1)
        check_bool("aode", aode)
        check_choice("structures", structures, ("forests", "trees"))
        check_real("ess", ess, 0.0, strict=True)
        check_real("edge_prior", edge_prior, 0.0, strict=True)
        check_decay("structure_decay", structure_decay, auto=False)
        self.structures = structures
        self.ess = ess
        self.edge_prior = edge_prior
        self.decay = decay
        self.structure_decay = structure_decay
        self.nominal_attributes = nominal_attributes
        self.numeric = numeric
        self.sample_size = sample_size
        self.numeric_attributes = numeric_attributes
        self.aode = aode
        rates = AUTO_GRID if decay == "auto" else (decay,)
        grids = [r for r in representations if r in REPRESENTATIONS]
        members = [Member(rate, representation)
                   for representation in representations for rate in rates]
        if aode:
            members += [Member(rate, r, AODE) for r in grids for rate in rates]
        state = GridStack if len(grids) > 1 else TreeMemberStack
        self._state = state(structures, ess, edge_prior, structure_decay, nominal_attributes,
                            sample_size, members, numeric_attributes)

    @property
    def _multiclass(self):
        return True

    @property
    def representations(self) -> tuple:
        """The numeric representations the members read numbers with
        (:func:`chosen_representations` of ``numeric``)."""
        return chosen_representations(self.numeric, self.decay)

    @property
    def weighs_members(self) -> bool:
        """Whether the learner weighs several members (representations, rates or AODE
        members): then :meth:`learn_many` stacks them and ``merge`` needs equal weights."""
        return len(self._state.members) > 1

    @property
    def _forgets(self) -> bool:
        return self._state.forgets

    @classmethod
    def _unit_test_params(cls):
        # the other structures, forgetting of both kinds and small intervals in one set
        yield {"structures": "trees", "ess": 2.0, "decay": 0.99, "structure_decay": 0.99,
               "numeric": "3 intervals", "sample_size": 10}
        yield {"decay": "auto", "aode": True, "sample_size": 10}

    def _unit_test_skips(self):  # River's hook: the checks not to run
        return {LEARN_MANY_CHECK}

    # -------------------------------------------------- River's methods: the state's

    def learn_one(self, x: dict, y) -> None:
        self._state.learn_one(x, y)

    def learn_many(self, X, y) -> None:
        """Learn a pandas DataFrame (NaN/None = missing) and its labels.

        The whole batch is validated before anything changes (a bad frame leaves the model
        as it was), and its numeric columns without cut points get them from a sample of the
        whole column first. Then:

        - nothing forgets (``decay=1``, ``structure_decay=1``): the table is counted at once
          (counts and Gaussian statistics add, as ``learn_one`` on each row would count
          them), and with several representations (``numeric="auto"``) their weights are set
          to the table's **stacking weights** (:mod:`onlinebma.tan.stacking`): row ``i`` is in
          fold ``SplitMix64(i) mod 5``, each row's probability of its label under each member
          trained on the other folds (and on what the learner learned before the table) is
          computed, and the weights are those that maximise the mixture's log score of those
          probabilities. They depend on which rows share a fold, not on the order of the rows
          within a fold; what the learner had learned before is in every fold's training
          state, and its weights are replaced by the table's. Folds without rows (a table of
          fewer than 5 rows) are skipped; an empty table changes nothing. The cut points
          are the whole table's in every fold. Learned in batches, the counts add up as
          for the whole table, but the weights are the last batch's: give the whole table
          at once (on Dask, :func:`onlinebma.distributed.fit` does). ``learn_one``
          afterwards continues the dynamic-model-averaging recursion from these weights;
        - a learner that forgets: row by row in order, equal to ``learn_one`` on each row.

        Parameters
        ----------
        X : pandas.DataFrame
            The records, one per row.
        y : pandas.Series or array-like
            Their labels, one per row, none missing.

        Examples
        --------
        A numeric feature that separates two classes, read as MDL intervals and as a
        Gaussian per class: the weights are stacking's, whatever the order of the rows within
        a fold.

        >>> import numpy as np
        >>> import pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> y = pd.Series(rng.integers(0, 2, 200))
        >>> X = pd.DataFrame({"a": rng.normal(2.0 * y, 1.0)})
        >>> model = ModelAveragedTAN()
        >>> model.learn_many(X, y)
        >>> weights = model.representation_posterior()
        >>> list(weights), round(sum(weights.values()), 12)
        (['MDL', '16 intervals', 'Gaussian'], 1.0)
        """
        self._state.learn_many(X, y)

    def predict_proba_one(self, x: dict) -> dict:
        return self._state.predict_proba_one(x)

    @property
    def classes_(self) -> tuple:
        """Every label learned, sorted when the labels sort, else in order of first arrival:
        the columns of :meth:`predict_proba_many` (:mod:`onlinebma.labels`)."""
        return self._state.classes_

    def predict_proba_many(self, X):
        """Class probabilities of a DataFrame's rows (one batched computation per member)."""
        return self._state.predict_proba_many(X)

    def joint_log_likelihood(self, x: dict) -> dict:
        """``log P(y | x)`` of every label seen, averaged over the members (``{}`` before
        learning): a joint log likelihood up to the constant ``log P(x)``."""
        return self._state.joint_log_likelihood(x)

    def fix_numeric(self, readings: dict) -> None:
        """Fix numeric features' cut points now (:meth:`RecordCoding.fix_numeric
        <onlinebma.tan.coding.RecordCoding.fix_numeric>`): the records kept for them are
        replayed."""
        self._state.fix_numeric(readings)

    @property
    def numeric_readings(self) -> dict:
        """``{feature: Grids}``: the cut points of every numeric feature that has them; with
        several interval representations, ``{feature: (Grids, ...)}``, one per grid
        (:attr:`GridStack.numeric_readings
        <onlinebma.tan.grid_stack.GridStack.numeric_readings>`), which :meth:`fix_numeric`
        takes back."""
        return self._state.numeric_readings

    def _merge_from(self, other) -> None:
        """Add ``other``'s records (:class:`~onlinebma.tan.merging.Merging`)."""
        self._state.merge(other.state)

    # ------------------------------------------------------------------ reading

    @property
    def state(self) -> TreeMemberStack | GridStack:
        """The members as one :class:`~onlinebma.tan.members.TreeMemberStack`, or a
        :class:`~onlinebma.tan.grid_stack.GridStack` for several interval representations
        (the learner's whole state: what the plans of :mod:`onlinebma.tan.merging` drive)."""
        return self._state

    @property
    def counts(self):
        """The counts of every member (class docstring, *Attributes*; read only)."""
        return self._state.counts

    @property
    def edge_log_weights(self) -> np.ndarray:
        """``l_uv`` of every count row (one per rate) and pair of features learned,
        ``(R, pairs)`` by rate (the order of :meth:`decay_posterior`) and pair id
        (:func:`~onlinebma.stats.pairs.pair_id`), a copy: ``log W_uv`` from the counts for
        a member that forgets nothing, the prequential recursion for one that does."""
        return self._state.edge_log_weights

    def edge_posteriors(self) -> dict:
        """``{(u, v): P(edge u–v | data)}`` for every pair of features learned (in the order
        first seen): the exact posterior probability that the structure joins ``u`` and
        ``v`` (either direction), from the current ``l`` of each rate, averaged with the
        weights of the interval members (the structure posterior given the interval
        representation of the numbers; a Gaussian member has no numeric edges)."""
        return self._state.edge_posteriors()

    def draw(self, threshold: float = 0.0):
        """The posterior dependency graph as a graphviz graph
        (:func:`onlinebma.drawing.dependency_graph`): the class points to every feature and
        each pair of features is joined by an edge as wide as :meth:`edge_posteriors` says.

        Parameters
        ----------
        threshold : float, default 0.0
            Edges of posterior probability at most this are left out.

        Returns
        -------
        graphviz.Graph
            Needs the optional ``graphviz`` package (``pip install "onlinebma[draw]"``).

        Examples
        --------
        >>> model = ModelAveragedTAN()
        >>> for x, y in [({"a": "p", "b": "p"}, 0), ({"a": "q", "b": "q"}, 1)] * 20:
        ...     model.learn_one(x, y)
        >>> graph = model.draw()
        >>> [line.strip() for line in graph.body if "f0 -- f1" in line]  # a joined to b
        ['f0 -- f1 [label=0.98 penwidth=3.93]']

        Render it with ``graph.render("dependencies", format="png")`` (Graphviz's ``dot``).
        """
        from ..drawing import dependency_graph

        edges = self.edge_posteriors()
        features = list(dict.fromkeys([*self.counts.features_, *(f for e in edges for f in e)]))
        return dependency_graph(features, edges, threshold=threshold)

    def decay_posterior(self) -> dict:
        """``{decay rate: posterior probability}`` of the members, summed over the numeric
        representations: the current weights of the grid's rates with ``decay="auto"`` (how
        fast the stream seems to change), ``{decay: 1.0}`` for a fixed one."""
        return self._state.posterior()

    def beta_posterior(self) -> dict:
        """``{β: posterior probability}`` over
        :data:`~onlinebma.forgetting.AUTO_FORGETTINGS`, the forgettings of the members'
        weights (how fast the weights of the rates and representations move; see
        :mod:`onlinebma.forgetting`), or ``{}`` for a learner of one member, which weighs
        none."""
        return self._state.beta_posterior() if self.weighs_members else {}

    def representation_posterior(self) -> dict:
        """``{representation: weight}`` of the members' numeric representations (summed over
        the rates): with ``numeric="auto"``, how much the numbers are read as intervals and
        how much as a Gaussian per class; ``{numeric: 1.0}`` for one named representation.

        The weights are those of the dynamic-model-averaging recursion over the records
        learned one by one, or, after :meth:`learn_many` of a learner that forgets nothing,
        the table's stacking weights (continued by the recursion for the records learned
        after): weights that maximise a cross-validated log score, not posterior
        probabilities.

        Examples
        --------
        Two numeric features that separate the classes linearly, fewer records than the
        intervals' sample: the Gaussian members predict with the numbers at once and take
        most of the weight (the recursion forgets, so the others keep a little).

        >>> import random
        >>> rng = random.Random(0)
        >>> model = ModelAveragedTAN()
        >>> for _ in range(100):
        ...     y = rng.random() < 0.5
        ...     model.learn_one({"a": rng.gauss(2 * y, 1), "b": rng.gauss(-2 * y, 1)}, y)
        >>> {r: round(p, 3) for r, p in model.representation_posterior().items()}
        {'MDL': 0.022, '16 intervals': 0.022, 'Gaussian': 0.956}
        """
        return self._state.representation_posterior()

    def predictive_posterior(self) -> dict:
        """``{predictive: weight}`` of the members' ways of predicting from their counts,
        summed over the rates and representations: ``"structures"`` (the exact average over
        every structure) and, with ``aode=True``, ``"AODE"``; weights as in
        :meth:`representation_posterior`.

        Examples
        --------
        >>> from onlinebma.tan import ModelAveragedTAN
        >>> model = ModelAveragedTAN(aode=True, decay="auto")
        >>> for a, b, y in [("p", "p", 1), ("q", "q", 1), ("p", "q", 0), ("q", "p", 0)] * 10:
        ...     model.learn_one({"a": a, "b": b}, y)
        >>> weights = model.predictive_posterior()
        >>> list(weights), round(sum(weights.values()), 12)
        (['structures', 'AODE'], 1.0)
        """
        return self._state.predictive_posterior()
