"""Reproductions of the papers behind onlinebma, runnable from the command line.

``python -m experiments NAME [--quick] [--out DIR]`` runs the module
``experiments.<NAME with '-' replaced by '_'>``; each defines
``run(quick=False, out=pathlib.Path("docs")) -> dict`` which writes ``out/results/NAME.md``
(markdown tables, the paper's own numbers beside ours, clearly labelled) and figures
``out/figures/NAME-*.png``, and returns ``{"tables": {name: DataFrame}, ...}``.
``python -m experiments --list`` lists every experiment found in this package.

Naive Bayes reproductions:

- ``dash-cooper-random`` — Dash & Cooper (2002) §4.1–4.2: model-averaged vs MAP naive Bayes on
  random networks (Procedures 1 and 2): the nodes, training-records and density tests, ΔROC and
  δROC with 99% confidence intervals (their Figure 2).
- ``dash-cooper-networks`` — Dash & Cooper (2002) Figures 4–5: ALARM (ANAPHYLAXIS, HYPOVOLEMIA)
  and HEPAR2 (THepatitis, Hyperbilirubinemia) against the number of training records.
- ``bma-nb-uci`` — Wu, Sanner & Oliveira (2015) Table 2: BMA-NB vs naive Bayes vs logistic
  regression and linear SVM (scikit-learn), nested cross-validation, error ± 95% and training
  time, plus ModelAveragedNB.
- ``streams`` — progressive validation against River's learners on River's bundled and
  synthetic streams: accuracy, log loss, records/second, memory, feature posteriors over time.

The ISA, FAN and order-MCMC reproductions add their own modules here (``isa-table1``,
``fan-uci``, ``order-alarm`` and their ``bench-*`` benchmarks); ``--list`` shows them.
Shared helpers for all of them live in :mod:`experiments._report`.
The experiments need the optional extras: ``pip install -e ".[experiments]"`` from a clone.
"""
