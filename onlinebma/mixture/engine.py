"""The engine interface: what EM and the choice of K ask of the training records.

The fit of every number of components (:class:`~onlinebma.mixture.base.MixtureClassifier`),
EM itself (:func:`~onlinebma.mixture.em.run_em_many`), the criteria
(:func:`~onlinebma.mixture.criteria.scores_many`) and the random starts
(:func:`~onlinebma.mixture.starts.seeded_params`) reach the records only through the methods
of :class:`Engine`. Two engines implement it:

- :class:`~onlinebma.mixture.em.EMEngine`: the records in this process;
- :class:`~onlinebma.mixture.distributed_em.PartitionedEngine`: the records in the partitions of a
  Dask frame, each method one round of per-partition work summed in a tree.

Besides these methods an engine has the constants of EM, which need no records: ``d`` (the
design; an engine over partitions holds one without rows), ``n_total``, ``class_parent``,
``alpha``, ``centred``, ``block_totals`` and the rest of what
:meth:`~onlinebma.mixture.em.EMEngine.without_records` keeps.
"""

from __future__ import annotations

from .arrays import Params

__all__ = ["Engine"]


class Engine:
    """The records-touching half of an EM engine (module docstring)."""

    def e_step(self, p: Params, hard: bool) -> tuple:
        """``(objective at p, responsibilities)`` (eq. 8, or eq. 9 when ``hard``)."""
        raise NotImplementedError

    def e_steps(self, params: list, hard: bool) -> list:
        """:meth:`e_step` of several runs (one pass over the records for all of them)."""
        raise NotImplementedError

    def m_step(self, start, floor, fallback) -> Params:
        """The M step from responsibilities or their expected statistics."""
        raise NotImplementedError

    def m_steps(self, starts: list, floor, fallback) -> list:
        """:meth:`m_step` of several runs."""
        raise NotImplementedError

    def sums_for_scores(self, params: list) -> list:
        """:meth:`~onlinebma.mixture.em.EMEngine.score_sums` of each parameter set."""
        raise NotImplementedError

    def all_in_one(self):
        """The start of the one-component model: every record in component 1."""
        raise NotImplementedError

    def records(self, index) -> tuple:
        """``(onehot, x, obs)`` of the training records ``index``, dense."""
        raise NotImplementedError

    def split_start(self, smaller: Params, hard: bool):
        """The start that splits the heaviest component of a ``K - 1`` fit
        (:func:`~onlinebma.mixture.starts.split_start`)."""
        raise NotImplementedError

    def without_records(self):
        """A local engine with the constants and no records (for prediction)."""
        raise NotImplementedError
