"""``python -m experiments numbers --quick``: the numbers benchmark runs end to end, writes its
page and figure, and measures every target of the numbers work with finite numbers."""

import numpy as np
import pytest

from experiments import numbers


@pytest.mark.slow
@pytest.mark.experiments
def test_quick_numbers_run(tmp_path):
    result = numbers.run(quick=True, out=tmp_path, show=False)
    text = (tmp_path / "results" / "numbers.md").read_text()
    assert text.startswith("# numbers") and "Quick smoke-test run" in text
    (figure,) = result["figures"]
    assert figure.exists() and figure.name in text
    assert figure.stem == "numbers-rolling"  # not the last learner's name (a shadowed name)
    tables = result["tables"]
    assert len(tables["targets"]) == 12
    scores = tables["tables log loss"].iloc[:, 4:].to_numpy(dtype=float)  # learners' columns
    assert scores.shape == (3, 9 + len(numbers.CANDIDATES)) and np.isfinite(scores).all()
    for name in ("adult", "speed", "numeric speed"):
        values = tables[name].select_dtypes(include=[np.number]).to_numpy(dtype=float)
        assert values.size and np.isfinite(values).all(), name
    # every learner scored on every stream, each against ARF's records/s
    speed = tables["speed"]
    assert set(speed["model"]) == {"river ARF", "ModelAveragedTAN auto",
                                   "ModelAveragedTAN auto, aode=False",
                                   "ModelAveragedTAN λ=0.99"}
    assert (speed[speed["model"] == "river ARF"]["× ARF"] == 1.0).all()


@pytest.mark.slow
@pytest.mark.experiments
def test_quick_numbers_speed_run_times_what_the_numbers_run_times(tmp_path):
    """``python -m experiments numbers-speed --quick``: the numbers run's speed part alone, on
    the same streams, with its three targets."""
    from experiments import numbers_speed

    result = numbers_speed.run(quick=True, out=tmp_path, show=False)
    text = (tmp_path / "results" / "numbers-speed.md").read_text()
    assert text.startswith("# numbers-speed") and "Quick smoke-test run" in text
    tables = result["tables"]
    assert [t.split(":")[0] for t in tables["targets"]["target"]] == ["speed"] * 3
    speed = tables["speed"]
    assert set(speed["stream"]) == set(numbers.speed_data(quick=True))
    assert (speed[speed["model"] == "river ARF"]["× ARF"] == 1.0).all()
    values = speed[["records/s alone", "× ARF"]].to_numpy(dtype=float)
    assert np.isfinite(values).all() and (values > 0).all()
