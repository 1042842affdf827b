"""Shared helpers for the experiments: confidence intervals, paired tests, markdown and figures.

Every experiment module uses these so that all results files look alike and every number in
them is computed here, by code (nothing typed in by hand except a paper's own numbers, which
the experiments label as such).

Seeds: an experiment asks :func:`rng` for a generator keyed by its own name and any integers it
likes (trial number, setting); the same keys give the same stream on every machine, and
different experiments never share a stream.

>>> m, h = mean_ci([1.0, 2.0, 3.0], level=0.95)
>>> m, round(h, 4)
(2.0, 2.4841)
>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"a": [1, 2], "b": [0.5, float("nan")]})))
| a | b |
|---:|---:|
| 1 | 0.500 |
| 2 |  |
>>> float(rng("demo", 1).random()) == float(rng("demo", 1).random())
True
"""

from __future__ import annotations

import math
import pathlib
import time
import zlib

import numpy as np

__all__ = [
    "SEED",
    "Timer",
    "format_ci",
    "load_note",
    "markdown_table",
    "mcnemar",
    "mean_ci",
    "paired_t_test",
    "proportion_ci",
    "rng",
    "roc_auc",
    "save_figure",
    "pyplot",
    "write_results",
]

#: Base seed of every experiment (the year of Dash & Cooper's paper).
SEED = 2002


def rng(name: str, *keys: int) -> np.random.Generator:
    """A numpy generator seeded by ``(SEED, crc32(name), *keys)``: reproducible and distinct."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode()), *(int(k) for k in keys)])


def mean_ci(values, level: float = 0.99, dist: str = "t") -> tuple[float, float]:
    """Mean of ``values`` and the half-width of its ``level`` confidence interval.

    ``dist="t"`` uses Student's t with n-1 degrees of freedom, ``dist="normal"`` the normal
    approximation. NaNs are dropped; with fewer than two values the half-width is NaN.

    >>> mean_ci([0.0, 1.0], dist="normal", level=0.95)[1]  # 1.96 * sd / sqrt(2)
    0.9799819922700...
    """
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return math.nan, math.nan
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan
    se = float(x.std(ddof=1)) / math.sqrt(n)
    q = 0.5 + level / 2.0
    if dist == "t":
        crit = float(stats.t.ppf(q, n - 1))
    elif dist == "normal":
        crit = float(stats.norm.ppf(q))
    else:
        raise ValueError(f"dist must be 't' or 'normal', got {dist!r}")
    return mean, crit * se


def proportion_ci(errors: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Rate ``errors / n`` and the normal-approximation half-width of its interval.

    This is the "error ± 95% interval" of a test-set error rate (Wald interval).

    >>> r, h = proportion_ci(10, 100)
    >>> r, round(h, 4)
    (0.1, 0.0588)
    """
    from scipy import stats

    if n <= 0:
        return math.nan, math.nan
    p = errors / n
    crit = float(stats.norm.ppf(0.5 + level / 2.0))
    return p, crit * math.sqrt(p * (1.0 - p) / n)


def paired_t_test(a, b) -> tuple[float, float]:
    """Two-sided paired t-test of ``mean(a - b) == 0``: ``(t statistic, p-value)``.

    Pairs with a NaN on either side are dropped; all-equal differences give ``(0.0, 1.0)``.

    >>> t, p = paired_t_test([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0])
    >>> (t, p)
    (0.0, 1.0)
    """
    from scipy import stats

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples need the same shape, got {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    d = a[keep] - b[keep]
    if d.size < 2:
        return math.nan, math.nan
    if np.all(d == d[0]):
        return (0.0, 1.0) if d[0] == 0 else (math.copysign(math.inf, d[0]), 0.0)
    res = stats.ttest_1samp(d, 0.0)
    return float(res.statistic), float(res.pvalue)


def mcnemar(correct_a, correct_b, exact: bool = True) -> tuple[int, int, float]:
    """McNemar's test on paired per-record correctness of two classifiers.

    Returns ``(b, c, p)`` where ``b`` counts records only A got right, ``c`` those only B got
    right, and ``p`` the two-sided p-value (exact binomial, or chi-square with continuity
    correction when ``exact=False``).

    >>> mcnemar([1, 1, 1, 0], [1, 0, 0, 0])
    (2, 0, 0.5)
    """
    from scipy import stats

    a = np.asarray(correct_a, dtype=bool)
    b_ = np.asarray(correct_b, dtype=bool)
    if a.shape != b_.shape:
        raise ValueError(f"paired samples need the same shape, got {a.shape} and {b_.shape}")
    b = int(np.sum(a & ~b_))
    c = int(np.sum(~a & b_))
    if b + c == 0:
        return b, c, 1.0
    if exact:
        p = float(stats.binomtest(b, b + c, 0.5).pvalue)
    else:
        chi2 = (abs(b - c) - 1.0) ** 2 / (b + c)
        p = float(stats.chi2.sf(chi2, 1))
    return b, c, min(p, 1.0)


def roc_auc(y_true, scores) -> float:
    """Area under the ROC curve of ``scores`` for the positive records ``y_true`` (bools).

    The Mann–Whitney form with average ranks for ties; NaN when only one class is present.

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([0, 1], [0.5, 0.5])
    0.5
    """
    from scipy import stats

    y = np.asarray(y_true, dtype=bool)
    n1 = int(y.sum())
    n0 = y.size - n1
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = stats.rankdata(np.asarray(scores, dtype=float))
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def format_ci(mean: float, half: float, digits: int = 2, scale: float = 1.0) -> str:
    """``"mean ± half"`` with ``digits`` decimals after multiplying by ``scale``.

    >>> format_ci(0.1234, 0.01, scale=100)
    '12.34 ± 1.00'
    """
    if not math.isfinite(mean):
        return "n/a"
    if not math.isfinite(half):
        return f"{mean * scale:.{digits}f}"
    return f"{mean * scale:.{digits}f} ± {half * scale:.{digits}f}"


def _cell(v, floatfmt: str) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        return format(float(v), floatfmt)
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v).replace("|", "\\|").replace("\n", " ")


def load_note(loads, cores: int) -> str:
    """How to read absolute times, given the load averages seen during a run on ``cores`` cores.

    >>> load_note([0.0, 1.2], 2)
    'at most the number of cores: no other job competed for them'
    >>> load_note([0.5, 4.8], 2)
    'above the number of cores: other jobs shared them and absolute times are noisy'
    """
    if max(loads) > cores:
        return "above the number of cores: other jobs shared them and absolute times are noisy"
    return "at most the number of cores: no other job competed for them"


def markdown_table(df, floatfmt: str = ".3f", index: bool = False) -> str:
    """A GitHub-flavoured markdown table of a pandas DataFrame (no ``tabulate`` needed).

    Numeric columns are right-aligned; floats use ``floatfmt``; NaN prints as an empty cell.
    """
    import pandas as pd

    if index:
        df = df.reset_index()
    cols = [str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |"]
    lines.append("|" + "|".join("---:" if num else ":---" for num in numeric) + "|")
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, floatfmt) for v in row) + " |")
    return "\n".join(lines)


def write_results(name: str, out, text: str, reading: str = "", notes: str = "") -> pathlib.Path:
    """Write ``text`` to ``out/results/{name}.md`` (directories created) and return the path.

    ``reading`` (statements computed from the results) and ``notes`` (qualitative remarks
    written after a full run) become the closing sections "Reading" and "Notes".
    """
    if reading:
        text = f"{text.rstrip()}\n\n## Reading (computed from the tables above)\n\n{reading}"
    if notes:
        text = f"{text.rstrip()}\n\n## Notes\n\n{notes}"
    path = pathlib.Path(out) / "results" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n")
    return path


def pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (matplotlib is an optional extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, name: str, out, suffix: str) -> pathlib.Path:
    """Save ``fig`` as ``out/figures/{name}-{suffix}.png``, close it and return the path."""
    path = pathlib.Path(out) / "figures" / f"{name}-{suffix}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=160, bbox_inches="tight")
    pyplot().close(fig)
    return path


class Timer:
    """Accumulating wall-clock timer: ``with t: ...`` adds to ``t.seconds``."""

    def __init__(self):
        self.seconds = 0.0

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds += time.perf_counter() - self._start
        return False
