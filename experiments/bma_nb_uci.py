"""Wu, Sanner & Oliveira (2015) Table 2: BMA-NB vs NB vs logistic regression and linear SVM.

Every Table 2 dataset bundled with onlinebma (``catalog()[name]["used_in"]`` mentions BMA-NB)
is evaluated by nested cross-validation: an outer stratified k-fold gives the test predictions;
inside each outer training part an inner stratified k-fold picks the hyperparameters by error:

- ``BMANB``: Γ in {0.5, 0.6, ..., 1.5} (the paper's grid; β = Γ^(N+1), eq. 13), alpha = 1;
- ``NaiveBayes``: alpha = 1, nothing to tune (the paper's NB);
- ``ModelAveragedNB`` (Dash & Cooper's exact averaging, an extra column): alpha = 1, K2,
  inclusion prior 0.5, nothing tuned;
- scikit-learn's liblinear ``LogisticRegression`` and ``LinearSVC``: C and B
  (``intercept_scaling``) over the paper's 6 × 6 grid {0.01, 0.1, 1, 10, 20, 100} (eq. 17-18),
  on one-hot nominal features (missing: a category of its own) and numeric ones (missing: the
  training mean).

Numeric features are standardised with each training part's mean and standard deviation for
every method.

Error is the rate over all out-of-fold predictions with its 95% (Wald) interval, as in the
paper's "error ± 95% confidence interval"; training time is one fit with the chosen
hyperparameters on an outer training part (mean over outer folds, ms; tuning excluded).
"""

from __future__ import annotations

import pathlib
import warnings

import numpy as np

from experiments import _report
from onlinebma.progress import progress

NAME = "bma-nb-uci"

GAMMAS = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
CB_GRID = [0.01, 0.1, 1, 10, 20, 100]

#: The paper's Table 2 (Wu et al. 2015), typed from the paper: error % ± 95% and training ms,
#: as (BMA, NB, LR, SVM). Keys are the paper's names; ALIASES maps them to our datasets.
PAPER_TABLE2 = {
    "anneal": ((7.87, 2.00), (7.87, 2.00), (6.74, 1.86), (17.98, 2.86), (526, 147, 618, 2070)),
    "autos": ((30.00, 7.13), (40.00, 7.62), (25.00, 6.74), (55.00, 7.74), (81, 40, 183, 1278)),
    "vote": ((4.65, 2.25), (11.63, 3.42), (4.65, 2.25), (4.65, 2.25), (10, 6, 22, 33)),
    "sick": ((6.37, 0.89), (7.69, 0.97), (2.65, 0.58), (4.51, 0.75), (202, 79, 434, 2475)),
    "crx": ((23.19, 3.58), (23.19, 3.58), (18.84, 3.32), (21.74, 3.50), (36, 9, 61, 540)),
    "mushroom": ((1.35, 0.29), (3.82, 0.47), (2.96, 0.42), (4.06, 0.49), (248, 98, 1072, 5785)),
    "heart-statlog": ((7.41, 3.55), (7.41, 3.55), (18.52, 5.27), (11.11, 4.26),
                      (18, 5, 22, 213)),
    "segment": ((23.81, 1.97), (23.81, 1.97), (10.82, 1.44), (14.72, 1.64),
                (435, 120, 2606, 6637)),
    "labor": ((0.00, 0.00), (0.00, 0.00), (0.00, 0.00), (0.00, 0.00), (3, 3, 6, 27)),
    "vowel": ((33.33, 3.34), (42.42, 3.50), (44.44, 3.52), (47.47, 3.54), (105, 35, 557, 5266)),
    "audiology": ((22.73, 6.21), (27.27, 6.60), (9.09, 4.26), (13.64, 5.09), (81, 14, 172, 260)),
    "iris": ((6.67, 4.54), (13.33, 6.18), (6.67, 4.54), (6.67, 4.54), (4, 2, 10, 102)),
    "zoo": ((0.00, 0.00), (0.00, 0.00), (0.00, 0.00), (0.00, 0.00), (6, 3, 31, 222)),
    "lymph": ((7.14, 4.72), (7.14, 4.72), (14.29, 6.41), (14.29, 6.41), (7, 3, 22, 175)),
    "soybean": ((11.76, 2.75), (11.76, 2.75), (10.29, 2.59), (11.76, 2.75), (99, 18, 559, 818)),
    "balance-scale": ((9.68, 2.63), (9.68, 2.63), (16.13, 3.28), (12.90, 2.99),
                      (15, 5, 40, 542)),
    "glass": ((52.38, 7.61), (52.38, 7.61), (33.33, 7.18), (47.62, 7.61), (14, 5, 50, 621)),
    "hepatitis": ((26.67, 7.91), (26.67, 7.91), (33.00, 8.77), (46.67, 8.93), (7, 3, 16, 120)),
    "haberman": ((33.33, 6.00), (33.33, 6.00), (36.67, 6.14), (33.33, 6.00), (4, 2, 11, 157)),
}
ALIASES = {"vote": "house-votes-84", "lymph": "lymphography"}
METHODS = ["BMANB", "NaiveBayes", "ModelAveragedNB", "LogisticRegression", "LinearSVC"]
#: Our method -> (the paper's column name, its index in a PAPER_TABLE2 row)
PAPER_COLUMN = {"BMANB": ("BMA", 0), "NaiveBayes": ("NB", 1), "LogisticRegression": ("LR", 2),
                "LinearSVC": ("SVM", 3)}

FULL = {"outer": 10, "inner": 3, "gammas": GAMMAS, "cb": CB_GRID}
QUICK = {"outer": 3, "inner": 2, "gammas": [0.5, 1.0, 1.5], "cb": [0.1, 10],
         "datasets": ["iris", "labor"]}


def table2_datasets() -> list[str]:
    """Our names of the Table 2 datasets that are bundled (paper order)."""
    from onlinebma.datasets import catalog

    cat = catalog()
    names = [ALIASES.get(p, p) for p in PAPER_TABLE2]
    return [n for n in names if n in cat and "BMA-NB" in cat[n]["used_in"]]


def _nb(method: str, nominal, gamma=None):
    from onlinebma import naive_bayes

    if method == "BMANB":
        return naive_bayes.BMANB(alpha=1.0, gamma=gamma, nominal_attributes=nominal)
    if method == "ModelAveragedNB":
        return naive_bayes.ModelAveragedNB(alpha=1.0, nominal_attributes=nominal)
    return naive_bayes.NaiveBayes(alpha=1.0, nominal_attributes=nominal)


def _nb_predict(model, X) -> np.ndarray:
    proba = model.predict_proba_many(X)
    return proba.columns.to_numpy()[np.argmax(proba.to_numpy(dtype=float), axis=1)]


def _linear_encoder(nominal, numeric):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder

    parts = []
    if nominal:
        parts.append(("nominal", OneHotEncoder(handle_unknown="ignore"), nominal))
    if numeric:  # already standardised by _Fold
        parts.append(("numeric", SimpleImputer(strategy="mean", keep_empty_features=True),
                      numeric))
    return ColumnTransformer(parts)


def _linear(method: str, C: float, B: float):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    if method == "LogisticRegression":  # one-vs-rest for several classes, as Liblinear does
        return OneVsRestClassifier(
            LogisticRegression(solver="liblinear", C=C, intercept_scaling=B, max_iter=1000)
        )
    return LinearSVC(C=C, intercept_scaling=B, max_iter=5000, dual=True)


class _Fold:
    """One training/test split; numeric features standardised with the training part's mean
    and standard deviation (for every method: ModelAveragedNB's Normal–Gamma prior is in the
    data's units, the Gaussian NB's are unaffected), and the linear models' one-hot encoding
    fitted on the training part."""

    def __init__(self, X, y, train, test, nominal, numeric):
        self.X_tr, self.X_te = X.iloc[train].copy(), X.iloc[test].copy()
        if numeric:
            mean = self.X_tr[numeric].mean()
            sd = self.X_tr[numeric].std(ddof=0)
            sd = sd.where(sd > 0, 1.0).fillna(1.0)
            mean = mean.fillna(0.0)
            self.X_tr[numeric] = (self.X_tr[numeric] - mean) / sd
            self.X_te[numeric] = (self.X_te[numeric] - mean) / sd
        self.y_tr, self.y_te = y.iloc[train], y.iloc[test]
        self.nominal, self.numeric = nominal, numeric
        self._enc = None

    def encoded(self):
        if self._enc is None:
            enc = _linear_encoder(self.nominal, self.numeric)
            Z_tr = enc.fit_transform(_fill(self.X_tr, self.nominal))
            Z_te = enc.transform(_fill(self.X_te, self.nominal))
            self._enc = (Z_tr, Z_te)
        return self._enc

    def error(self, method: str, param, timer=None) -> tuple[float, np.ndarray]:
        """Test error of ``method`` with hyperparameter ``param`` and the per-record correctness."""
        if method in ("LogisticRegression", "LinearSVC"):
            Z_tr, Z_te = self.encoded()
            model = _linear(method, *param)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with timer or _report.Timer():
                    model.fit(Z_tr, self.y_tr.to_numpy())
            pred = model.predict(Z_te)
        else:
            model = _nb(method, self.nominal, param)
            with timer or _report.Timer():
                model.learn_many(self.X_tr, self.y_tr)
            pred = _nb_predict(model, self.X_te)
        correct = pred == self.y_te.to_numpy()
        return 1.0 - float(correct.mean()), correct


def _fill(X, nominal):
    X = X.copy()
    for c in nominal:
        X[c] = X[c].astype(object).where(X[c].notna(), "")  # '' = missing: its own one-hot
    return X


def _splits(y, k: int, seed: int):
    from sklearn.model_selection import StratifiedKFold

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes rarer than k: sklearn warns, still splits
        return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def grid(method: str, cfg: dict):
    if method == "BMANB":
        return list(cfg["gammas"])
    if method in ("LogisticRegression", "LinearSVC"):
        return [(C, B) for C in cfg["cb"] for B in cfg["cb"]]
    return [None]


def evaluate(name: str, cfg: dict, show: bool = True) -> tuple[dict, dict]:
    """Nested CV of every method on one dataset: summary row and per-record correctness."""
    from onlinebma.datasets import UCIDataset

    ds = UCIDataset(name)
    X, y = ds.to_frame()
    nominal = ds.nominal_attributes
    numeric = [c for c in X.columns if c not in nominal]
    seed = int(_report.rng(NAME, len(name)).integers(2**31))
    correct = {m: np.zeros(len(y), dtype=bool) for m in METHODS}
    fit_ms = {m: [] for m in METHODS}
    chosen = {m: [] for m in METHODS}
    outer = _splits(y.to_numpy(), cfg["outer"], seed)
    for train, test in progress(outer, desc=name, enabled=show, leave=False):
        fold = _Fold(X, y, train, test, nominal, numeric)
        inner = [
            _Fold(fold.X_tr, fold.y_tr, tr, te, nominal, numeric)
            for tr, te in _splits(fold.y_tr.to_numpy(), cfg["inner"], seed + 1)
        ]
        for m in METHODS:
            params = grid(m, cfg)
            if len(params) > 1:
                inner_err = [np.mean([f.error(m, p)[0] for f in inner]) for p in params]
                best = params[int(np.argmin(inner_err))]
            else:
                best = params[0]
            timer = _report.Timer()
            _, ok = fold.error(m, best, timer)
            correct[m][test] = ok
            fit_ms[m].append(1000 * timer.seconds)
            chosen[m].append(best)
    row = {"dataset": name, "rows": len(y), "features": X.shape[1],
           "classes": int(y.nunique())}
    for m in METHODS:
        err, half = _report.proportion_ci(int((~correct[m]).sum()), len(y), 0.95)
        row[f"{m} err"] = err
        row[f"{m} ci95"] = half
        row[f"{m} ms"] = float(np.mean(fit_ms[m]))
    b, c, p = _report.mcnemar(correct["BMANB"], correct["NaiveBayes"])
    row["BMA-only right"], row["NB-only right"], row["McNemar p (BMA vs NB)"] = b, c, p
    b, c, p = _report.mcnemar(correct["ModelAveragedNB"], correct["NaiveBayes"])
    row["McNemar p (MA vs NB)"] = p
    row["Γ chosen"] = ", ".join(f"{g:g}" for g in sorted(set(chosen["BMANB"])))
    return row, correct


def paper_table():
    """Wu et al.'s Table 2 with our dataset names (the paper's numbers, not ours)."""
    import pandas as pd

    rows = []
    for paper_name, (bma, nb, lr, svm, ms) in PAPER_TABLE2.items():
        rows.append({"paper dataset": paper_name,
                     "our dataset": ALIASES.get(paper_name, paper_name),
                     "BMA": f"{bma[0]:.2f} ± {bma[1]:.2f}", "NB": f"{nb[0]:.2f} ± {nb[1]:.2f}",
                     "LR": f"{lr[0]:.2f} ± {lr[1]:.2f}", "SVM": f"{svm[0]:.2f} ± {svm[1]:.2f}",
                     "BMA ms": ms[0], "NB ms": ms[1], "LR ms": ms[2], "SVM ms": ms[3]})
    return pd.DataFrame(rows)


#: Qualitative notes on the full run (written after reading its tables).
NOTES = """\
- *BMA never underperforms NB* holds on our runs in the statistical sense: BMANB is never
  significantly worse than NB, and its significant gains are on data sets with redundant or
  uninformative features (anneal, house-votes-84, mushroom), as in the paper (vote, mushroom).
- Our logistic regression and linear SVM are much stronger than the paper's on several data
  sets (anneal, mushroom, segment, balance-scale). We one-hot encode nominal features and
  standardise numeric ones; the paper does not say how it encoded them. So its observation
  that BMA is sometimes competitive with LR/SVM holds on fewer data sets here.
- Our copies of several data sets differ from the paper's (rows and classes in the table:
  anneal, mushroom, segment, audiology), so absolute errors are not comparable. NB's error on
  anneal is far above the paper's, and ModelAveragedNB's far below NB's there. The cause is
  anneal's three numeric features (thick, width, len): per-class plug-in Gaussians, some
  classes with very few records, dominate NB's and BMANB's predictions; in a side check (one
  split, not part of this run) NB on the nominal features alone was close to the paper's NB.
- ModelAveragedNB, untuned, is close to tuned BMANB on most data sets: the exact marginal
  likelihood does what tuning Γ does for the plug-in BMA. It is significantly worse than NB
  on audiology (24 classes, 226 records), where the marginal likelihood of a feature's arc,
  spread over many sparse classes, can favour dropping features that NB keeps.
- Training time: BMANB costs about what NB costs here (one vectorised pass computes the
  statistics of both structures), not the up to 4× the paper reports. The naive Bayes fits
  are faster than LR and SVM on most data sets, but not on mushroom, where liblinear on the
  one-hot matrix is faster than our `learn_many` on 22 string columns.\
"""


def _reading(df) -> str:
    worse = df[df["BMANB err"] > df["NaiveBayes err"]]
    worse_sig = worse[worse["McNemar p (BMA vs NB)"] < 0.05]
    better = df[df["BMANB err"] < df["NaiveBayes err"]]
    better_sig = better[better["McNemar p (BMA vs NB)"] < 0.05]
    ma_worse = df[df["ModelAveragedNB err"] > df["NaiveBayes err"]]
    ma_worse_sig = ma_worse[ma_worse["McNemar p (MA vs NB)"] < 0.05]
    ma_vs_bma = int((df["ModelAveragedNB err"] < df["BMANB err"]).sum())
    others = df[["BMANB err", "LinearSVC err"]].min(axis=1)
    best_lr = int((df["LogisticRegression err"] <= others).sum())
    bma_vs_lr = int((df["BMANB err"] < df["LogisticRegression err"]).sum())
    bma_vs_svm = int((df["BMANB err"] < df["LinearSVC err"]).sum())
    faster_lr = int((df["BMANB ms"] < df["LogisticRegression ms"]).sum())
    faster_svm = int((df["BMANB ms"] < df["LinearSVC ms"]).sum())
    ratio = (df["BMANB ms"] / df["NaiveBayes ms"]).median()
    names = lambda d: ", ".join(d["dataset"]) or "none"  # noqa: E731
    n = len(df)
    return "\n".join([
        f"- *BMA never underperforms NB* (paper): on our runs BMANB's error is higher than NB's on "
        f"{len(worse)} of {n} datasets ({names(worse)}), significantly (McNemar p < 0.05) on "
        f"{len(worse_sig)} ({names(worse_sig)}); lower on {len(better)} ({names(better)}), "
        f"significantly on {len(better_sig)} ({names(better_sig)}).",
        f"- ModelAveragedNB (untuned, uniform structure prior) is worse than NB on {len(ma_worse)} "
        f"datasets, significantly on {len(ma_worse_sig)} ({names(ma_worse_sig)}); it beats tuned "
        f"BMANB on {ma_vs_bma} of {n}.",
        f"- Logistic regression has the lowest error of BMANB/LR/SVM on {best_lr} of {n}; BMANB "
        f"beats LR on {bma_vs_lr} and LinearSVC on {bma_vs_svm}.",
        f"- Training time (one fit, learn_many): BMANB faster than LR on {faster_lr} of {n} and "
        f"than LinearSVC on {faster_svm} of {n}; median BMANB/NB time ratio {ratio:.2f} "
        f"(the paper reports BMA up to 4× slower than NB).",
    ])


def run(quick: bool = False, out: pathlib.Path = pathlib.Path("docs"), show: bool = True) -> dict:
    """Nested CV on every bundled Table 2 dataset; writes ``out/results/bma-nb-uci.md``."""
    import pandas as pd

    out = pathlib.Path(out)
    cfg = QUICK if quick else FULL
    names = cfg.get("datasets") or table2_datasets()
    rows = [evaluate(n, cfg, show)[0] for n in progress(names, desc=NAME, enabled=show)]
    df = pd.DataFrame(rows)
    ours = pd.DataFrame({"dataset": df["dataset"], "rows": df["rows"], "classes": df["classes"]})
    paper_of = {ALIASES.get(p, p): v for p, v in PAPER_TABLE2.items()}
    for m in METHODS:
        ours[m] = [_report.format_ci(e, h, 2, 100) for e, h in zip(df[f"{m} err"], df[f"{m} ci95"])]
        if m in PAPER_COLUMN:
            ours[f"paper {PAPER_COLUMN[m][0]}"] = [
                "{:.2f} ± {:.2f}".format(*paper_of[d][PAPER_COLUMN[m][1]]) for d in df["dataset"]
            ]
    ours["McNemar p BMA vs NB"] = df["McNemar p (BMA vs NB)"]
    ours["Γ chosen"] = df["Γ chosen"]
    times = df[["dataset"] + [f"{m} ms" for m in METHODS]]
    fig = _figure(df, out)
    text = [
        f"# {NAME}: BMA-NB, NB, model-averaged NB, LR and linear SVM on UCI data",
        "",
        "Reproduction of Wu, Sanner & Oliveira (2015), Table 2. "
        + ("**Quick smoke-test run (two datasets, small grids), not a result.**" if quick else ""),
        "",
        f"Command: `python -m experiments {NAME}{' --quick' if quick else ''}`. "
        f"Nested stratified CV: {cfg['outer']} outer folds, {cfg['inner']} inner folds; "
        f"Γ grid {cfg['gammas']}; C and B grid {cfg['cb']} (LR/SVM, scikit-learn liblinear).",
        "",
        "## Error % ± 95% interval: ours (all out-of-fold predictions) and, in the `paper …` "
        "columns, Wu et al.'s Table 2 numbers typed from the paper",
        "",
        _report.markdown_table(ours, floatfmt=".3g"),
        "",
        "## Ours: training time (ms, one fit with the chosen hyperparameters, mean over outer "
        "folds)",
        "",
        _report.markdown_table(times, floatfmt=".1f"),
        "",
        f"![error by dataset](../figures/{fig.name})",
        "",
        "## The paper's Table 2 (Wu et al. 2015, numbers typed from the paper — not ours)",
        "",
        "Their protocol (nested random-resampling CV, Liblinear, their data versions and their "
        "timing machine) differs from ours; our copies also differ in size for some datasets "
        "(see `rows` above: for example the paper's mushroom has 8124 rows, ours 5644). sick, "
        "heart-statlog and hepatitis are not bundled and were not run.",
        "",
        _report.markdown_table(paper_table()),
    ]
    _report.write_results(NAME, out, "\n".join(text), _reading(df), NOTES)
    return {"tables": {"errors": df, "paper": paper_table()}, "figures": [fig]}


def _figure(df, out):
    plt = _report.pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(df) + 2), 4), layout="constrained")
    width = 0.8 / len(METHODS)
    x = np.arange(len(df))
    for i, m in enumerate(METHODS):
        ax.bar(x + (i - len(METHODS) / 2 + 0.5) * width, 100 * df[f"{m} err"], width,
               yerr=100 * df[f"{m} ci95"], label=m, capsize=1.5)
    ax.set_xticks(x, df["dataset"], rotation=45, ha="right")
    ax.set_ylabel("error % (95% interval)")
    ax.legend(fontsize=8)
    return _report.save_figure(fig, NAME, out, "errors")
