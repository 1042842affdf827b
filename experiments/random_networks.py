"""Random binary Bayesian networks with lazily generated CPTs (Dash & Cooper 2002, Procedure 1).

A helper of :mod:`~experiments.dash_cooper_random`, not an experiment itself.

Procedure 1: nodes ``X_1 .. X_{N+1}``; node ``i`` (1-based) draws ``N_pa`` uniformly from
``[0, min(i-1, N_k)]`` and then ``N_pa`` distinct parents uniformly from ``X_1 .. X_{i-1}``.
Every CPT column ``theta_ij`` is drawn from the uniform distribution over parameters (for a
binary node, ``P(X_i = 1 | j) ~ U(0, 1)``), but only when a record first needs it: with
in-degrees up to 200 a full CPT would have 2^200 columns. Sampling is ancestral and vectorised
over records: per node, one ``np.unique`` over the parents' packed bits finds the columns the
batch needs, new ones are drawn, and all records of the node are sampled at once.

>>> import numpy as np
>>> g = np.random.default_rng(0)
>>> net = RandomNetwork(n_features=6, max_parents=2, rng=g)
>>> len(net.parents), max(len(p) for p in net.parents) <= 2
(7, True)
>>> all(set(p) <= set(range(i)) for i, p in enumerate(net.parents))
True
>>> data = net.sample(500, g)
>>> data.shape, data.dtype, set(np.unique(data)) <= {0, 1}
((500, 7), dtype('uint8'), True)
>>> again = net.sample(500, g)   # the columns drawn so far are reused, not redrawn
>>> sum(len(c) for c in net.cpts) <= sum(2 ** len(p) for p in net.parents)
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["RandomNetwork"]


class RandomNetwork:
    """A random DAG over ``n_features + 1`` binary nodes (Procedure 1) with lazy CPTs.

    Parameters
    ----------
    n_features
        ``N``: the network has ``N + 1`` nodes (one of them will be the class).
    max_parents
        ``N_k``: the maximum in-degree.
    rng
        A numpy ``Generator`` used for the structure (and, later, for each lazily drawn column).

    Attributes
    ----------
    parents
        ``parents[i]`` is the sorted int array of node ``i``'s parents (0-based, all ``< i``).
    cpts
        ``cpts[i]`` maps a parent configuration (packed bits, ``bytes``) to ``P(X_i = 1 | j)``;
        it only holds the columns some sampled record has needed.
    """

    def __init__(self, n_features: int, max_parents: int, rng: np.random.Generator):
        if n_features < 1 or max_parents < 0:
            raise ValueError(
                f"need n_features >= 1 and max_parents >= 0, got {n_features}, {max_parents}"
            )
        self.n_nodes = n_features + 1
        self.parents = []
        for i in range(self.n_nodes):  # node i here is X_{i+1} of the paper
            n_pmax = min(i, max_parents)  # step 2(a)
            n_pa = int(rng.integers(0, n_pmax + 1))  # step 2(b)
            self.parents.append(np.sort(rng.choice(i, size=n_pa, replace=False)))  # step 2(c)
        self.cpts: list[dict] = [{} for _ in range(self.n_nodes)]
        self._rng = rng

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` records by ancestral sampling, an ``(n, N + 1)`` array of 0/1 (``uint8``).

        New CPT columns are drawn from the network's own generator (so a network's parameters
        do not depend on how its records were batched); record noise comes from ``rng``.
        """
        data = np.zeros((n, self.n_nodes), dtype=np.uint8)
        for i, pa in enumerate(self.parents):
            cpt = self.cpts[i]
            if len(pa) == 0:
                keys, inverse = [b""], np.zeros(n, dtype=np.intp)
            else:
                packed = np.packbits(data[:, pa], axis=1)
                rows = np.ascontiguousarray(packed).view(
                    np.dtype((np.void, packed.shape[1]))
                ).ravel()
                uniq, inverse = np.unique(rows, return_inverse=True)
                keys = [u.tobytes() for u in uniq]
            p1 = np.empty(len(keys))
            for j, key in enumerate(keys):
                p = cpt.get(key)
                if p is None:  # lazy: draw theta_ij the first time a record needs it
                    p = cpt[key] = float(self._rng.random())
                p1[j] = p
            data[:, i] = rng.random(n) < p1[inverse.ravel()]
        return data
