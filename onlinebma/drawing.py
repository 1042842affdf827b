"""Pictures of what a learner has learned, as graphviz graphs (as River's trees draw themselves).

:func:`dependency_graph` draws the class and the features with the posterior probability of
each dependency as the width and label of its edge:

- the tree-augmented learners (``ModelAveragedTAN.draw()``, ``TAN.draw()``): the class
  points to every feature, and an undirected edge joins two features with the posterior
  probability that the structure joins them (``edge_posteriors()``; for ``TAN`` its one tree,
  every edge at 1);
- the naive Bayes learners that average over which features matter
  (``ModelAveragedNB.draw()``, ``BMANB.draw()``): an edge from the class to each feature
  with the posterior probability that the feature depends on the class
  (``feature_posteriors()``).

Requires the optional ``graphviz`` package (``pip install "onlinebma[draw]"``); rendering to
an image also needs Graphviz's ``dot`` program.

>>> graph = dependency_graph(["sky", "wind"], {("sky", "wind"): 0.75})
>>> print(graph.source.strip())  # doctest: +NORMALIZE_WHITESPACE
graph dependencies {
    graph [rankdir=TB]
    node [fontname=Helvetica shape=ellipse]
    edge [fontname=Helvetica fontsize=10]
    class [label=class shape=box style=bold]
    f0 [label=sky]
    f1 [label=wind]
    class -- f0 [dir=forward]
    class -- f1 [dir=forward]
    f0 -- f1 [label=0.75 penwidth=3.25]
}
"""

from __future__ import annotations

__all__ = ["dependency_graph"]

#: Width of an edge of posterior probability 1 (points); an edge of probability p is
#: ``MIN_WIDTH + p (MAX_WIDTH - MIN_WIDTH)`` wide.
MAX_WIDTH = 4.0
MIN_WIDTH = 1.0


def _width(p: float) -> str:
    return f"{MIN_WIDTH + p * (MAX_WIDTH - MIN_WIDTH):.3g}"


def dependency_graph(features, feature_edges: dict | None = None,
                     class_edges: dict | None = None, class_name: str = "class",
                     threshold: float = 0.0):
    """A graphviz graph of the class, the features and posterior dependencies.

    Parameters
    ----------
    features : list
        The features, in the order they are drawn.
    feature_edges : dict or None, default None
        ``{(u, v): probability}`` of feature–feature dependencies, drawn undirected (the
        structure joins ``u`` and ``v`` in either direction).
    class_edges : dict or None, default None
        ``{feature: probability}`` that the feature depends on the class, drawn from the class
        to the feature; ``None``: the class is a parent of every feature (an edge of
        probability 1, drawn thin and without a label).
    class_name : str, default "class"
        The label of the class node.
    threshold : float, default 0.0
        Edges of probability at most this are left out (``0.0`` keeps every edge with a
        positive probability).

    Returns
    -------
    graphviz.Graph
        Render it with ``.render()``, or show it in a notebook.
    """
    import graphviz

    graph = graphviz.Graph("dependencies", graph_attr={"rankdir": "TB"},
                           node_attr={"shape": "ellipse", "fontname": "Helvetica"},
                           edge_attr={"fontname": "Helvetica", "fontsize": "10"})
    graph.node("class", label=str(class_name), shape="box", style="bold")
    node = {f: f"f{i}" for i, f in enumerate(features)}
    for f, name in node.items():
        graph.node(name, label=str(f))
    for f, name in node.items():
        if class_edges is None:
            graph.edge("class", name, dir="forward")
        elif class_edges.get(f, 0.0) > threshold:
            p = class_edges[f]
            graph.edge("class", name, dir="forward", label=f"{p:.2f}", penwidth=_width(p))
    for (u, v), p in (feature_edges or {}).items():
        if p > threshold:
            graph.edge(node[u], node[v], label=f"{p:.2f}", penwidth=_width(p))
    return graph
