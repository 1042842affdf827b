"""The wide experiment's quick mode runs and fills every table (issue 17)."""

import pytest


@pytest.mark.slow
@pytest.mark.experiments
def test_wide_quick_run(tmp_path):
    from experiments import wide

    tables = wide.run(quick=True, out=tmp_path, string_rows=2_000)["tables"]
    assert set(tables) == {"nominal", "numeric", "crossover", "bags", "strings"}
    for df in tables.values():
        assert len(df) and df.notna().all().all()
    bags = tables["bags"]
    assert set(bags["words V"]) == {100, 10_000}
    assert ((bags["accuracy"] > 0.5) & (bags["accuracy"] <= bags["Bayes-optimal"] + 0.05)).all()
    text = (tmp_path / "results" / "wide.md").read_text()
    assert "load average" in text and "Bags of words" in text and "Crossover" in text
    assert (tmp_path / "figures" / "wide-speedup.png").exists()


def test_bag_stream_follows_its_generating_model():
    from experiments.wide import bag_stream

    records, labels, optimal = bag_stream(400, 1_000)
    assert all(sum(x.values()) == 20 for x in records)
    assert set(labels) == {0, 1}
    assert 0.8 < optimal <= 1.0
