"""The growth policy of the batch learners: what is fitted on the stored records (an eager
model, cut points, candidate parents) is fitted again once the records have grown by
:data:`GROWTH` since the last fit — O(log n) refits over a stream of n records.
:mod:`onlinebma.coding` re-exports it.
"""

from __future__ import annotations

import math

__all__ = ["GROWTH", "growth_due", "growth_threshold"]

#: What is fitted on the records is fitted again once they have grown by this share.
GROWTH = 0.1


def growth_threshold(size: int) -> int:
    """How many new records call for a new fit after a fit on ``size`` records (the growth
    policy: at least one record, and at least :data:`GROWTH` of ``size``).

    >>> growth_threshold(0), growth_threshold(100), growth_threshold(101)
    (1, 10, 11)
    """
    return max(1, math.ceil(GROWTH * size))


def growth_due(new: int, size: int) -> bool:
    """Whether ``new`` records since a fit on ``size`` records call for a new fit
    (:func:`growth_threshold`).

    >>> growth_due(9, 100), growth_due(10, 100)
    (False, True)
    """
    return new >= growth_threshold(size)
