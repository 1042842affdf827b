"""onlinebma.drawing: the dependency graph says what the posteriors say."""

import shutil

import pytest

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


def test_learners_draw_what_their_posteriors_say():
    from onlinebma.naive_bayes import ModelAveragedNB
    from onlinebma.tan import TAN, ModelAveragedTAN

    stream = [({"a": "pq"[i % 2], "b": "pq"[i % 2], "c": "xyz"[i % 3]}, i % 2) for i in range(60)]
    tan, matan, nb = TAN(), ModelAveragedTAN(), ModelAveragedNB()
    for x, y in stream:
        for model in (tan, matan, nb):
            model.learn_one(x, y)
    edges = _edges(matan.draw())
    for (u, v), p in matan.edge_posteriors().items():
        assert any(f"label={p:.2f}" in e for e in edges), (u, v)
    tree = tan.tree()
    assert len([e for e in _edges(tan.draw()) if "label=1.00" in e]) == len(tree) - 1
    posteriors = nb.feature_posteriors()
    drawn = _edges(nb.draw(threshold=0.5))
    assert len(drawn) == sum(p > 0.5 for p in posteriors.values())


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="needs Graphviz's dot to render (CI installs it: .ci/run)")
def test_the_dependencies_experiment_renders_its_figure(tmp_path):
    from experiments import dependencies

    result = dependencies.run(quick=True, out=tmp_path, show=False)
    (png,) = result["figures"]
    assert png.read_bytes().startswith(b"\x89PNG") and png.name in (
        tmp_path / "results" / "dependencies.md").read_text()
    assert (result["tables"]["edges"]["posterior"].between(0, 1)).all()
