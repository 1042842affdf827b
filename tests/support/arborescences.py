"""Every parent assignment of a few nodes that is a DAG with at most one parent per node:
the independent enumeration the directed forest sums and the mixed forest average are checked
against (no matrix-tree theorem)."""

from __future__ import annotations

import itertools

ROOT = -1


def is_acyclic(parents) -> bool:
    """Whether following parents from every node reaches a root (no cycle)."""
    n = len(parents)
    for start in range(n):
        v, steps = start, 0
        while parents[v] != ROOT:
            v = parents[v]
            steps += 1
            if steps > n:
                return False
    return True


def forests(n: int):
    """Every rooted spanning forest of ``n`` nodes as a tuple of parents (``ROOT`` for a
    root): ``(n + 1)^(n - 1)`` of them (Cayley)."""
    for parents in itertools.product([ROOT, *range(n)], repeat=n):
        if all(p != v for v, p in enumerate(parents)) and is_acyclic(parents):
            yield parents


def trees(n: int):
    """The forests of :func:`forests` with exactly one root: ``n^(n - 1)`` of them."""
    for parents in forests(n):
        if sum(p == ROOT for p in parents) == 1:
            yield parents
