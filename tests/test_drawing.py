"""onlinebma.drawing: the dependency graph says what the posteriors say."""

from onlinebma.drawing import dependency_graph


def _edges(graph):
    return [line.strip() for line in graph.body if "--" in line]


def test_class_edges_carry_their_posterior_and_the_threshold_drops_weak_ones():
    graph = dependency_graph(["a", "b", "c"], class_edges={"a": 0.9, "b": 0.05, "c": 1.0},
                             threshold=0.1)
    edges = _edges(graph)
    assert edges == ["class -- f0 [label=0.90 dir=forward penwidth=3.7]",
                     "class -- f2 [label=1.00 dir=forward penwidth=4]"]


def test_feature_edges_wider_with_posterior_and_names_quoted():
    graph = dependency_graph(['say "hi"', "x:y"], {('say "hi"', "x:y"): 0.2},
                             class_name="label")
    assert 'label="say \\"hi\\""' in graph.source
    assert '"x:y"' in graph.source
    assert _edges(graph)[-1] == "f0 -- f1 [label=0.20 penwidth=1.6]"
    assert "class [label=label" in graph.source
