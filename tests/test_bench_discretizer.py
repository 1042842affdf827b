"""The MDLDiscretizer benchmark's quick run (python -m experiments bench-hardening --quick)."""

import math

import pytest

from experiments import bench_hardening


@pytest.mark.slow
@pytest.mark.experiments
def test_quick_run_writes_finite_tables(tmp_path):
    tables = bench_hardening.run(quick=True, out=tmp_path)["tables"]
    stream, pipe = tables["streaming"], tables["pipeline"]
    assert (tmp_path / "results" / "bench-hardening.md").is_file()
    assert stream["records"].tolist() == [500, 1000]
    for _, row in stream.iterrows():
        assert math.isfinite(row["before / after"]) and row["before / after"] > 0
        # The policy fits each feature's cut points O(log n) times, not once per record.
        assert row["after: cut-point fits"] < row["before: cut-point fits"] / 5
    assert pipe["test accuracy"].iloc[0] == pipe["test accuracy"].iloc[1] > 0.85
