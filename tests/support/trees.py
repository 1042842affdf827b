"""Labelled spanning trees by Prüfer sequences: the independent enumeration the spanning-tree
sums and the tree-averaged learners are checked against."""

from __future__ import annotations

import itertools


def prufer_trees(n: int):
    """Every labelled spanning tree of ``n`` nodes, as a list of ``(u, v)`` edges."""
    if n == 1:
        yield []
        return
    for seq in itertools.product(range(n), repeat=n - 2):
        degree = [1] * n
        for x in seq:
            degree[x] += 1
        edges = []
        for x in seq:
            leaf = min(i for i in range(n) if degree[i] == 1)
            edges.append((leaf, x))
            degree[leaf] -= 1
            degree[x] -= 1
        u, v = (i for i in range(n) if degree[i] == 1)
        edges.append((u, v))
        yield edges
