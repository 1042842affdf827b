"""Progress display: one line per long loop at most, nothing for the short refits of a stream."""

import sys

from onlinebma.mixture import FiniteMixture
from onlinebma.progress import progress


def _quiet_stream(capsys):
    from river import datasets

    model = FiniteMixture(max_components=2, n_init=1, progress=True)
    for x, y in datasets.Phishing().take(150):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return capsys.readouterr().err


def test_short_loops_print_nothing_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # "import tqdm.auto" now fails
    assert list(progress(range(5), desc="fit")) == list(range(5))
    assert capsys.readouterr().err == ""
    assert _quiet_stream(capsys) == ""  # a stream's many short refits: not a line each


def test_short_loops_print_nothing_with_tqdm(capsys):
    assert list(progress(range(5), desc="fit")) == list(range(5))
    assert capsys.readouterr().err == ""
    assert _quiet_stream(capsys) == ""


def test_a_long_loop_without_tqdm_ends_with_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    clock = iter(range(0, 100, 2))  # every step "takes" two seconds
    monkeypatch.setattr("onlinebma.progress.time.monotonic", lambda: next(clock))
    list(progress(range(3), desc="fit"))
    err = capsys.readouterr().err
    assert err.count("done in") == 1 and err.endswith("\n")
