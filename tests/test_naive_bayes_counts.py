"""The count event model (``absent="zero"``): bags of words, absent keys are zero counts.

Issue 17: on sparse bag-of-words records the naive Bayes family read an absent word as
missing and was at chance. The brute forces below enumerate every structure from raw records
with their own counting and lgamma formulas (nothing from onlinebma.stats).
"""

import itertools
import math
import pickle

import numpy as np
import pytest
from river import naive_bayes as river_nb
from scipy.special import logsumexp

from onlinebma.naive_bayes import BMANB, COUNTS, ModelAveragedNB, NaiveBayes


def bag_stream(n, vocabulary, words=20, n_classes=2, seed=0):
    """Records of ``words`` tokens drawn from a class-dependent multinomial over the
    vocabulary (a Zipf base, every class boosting its own tenth of the words)."""
    g = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, vocabulary + 1)
    theta = []
    for _ in range(n_classes):
        boost = np.ones(vocabulary)
        boost[g.permutation(vocabulary)[: vocabulary // 10]] = 4.0
        p = base * boost
        theta.append(p / p.sum())
    rows = []
    for _ in range(n):
        y = int(g.integers(n_classes))
        tokens = g.choice(vocabulary, size=words, p=theta[y])
        x = {}
        for w in tokens.tolist():
            x[f"w{w}"] = x.get(f"w{w}", 0) + 1
        rows.append((x, y))
    return rows


def progressive_accuracy(model, rows):
    hits = 0
    for x, y in rows:
        hits += model.predict_one(x) == y
        model.learn_one(x, y)
    return hits / len(rows)


def test_sparse_text_is_learned_like_river_multinomial_nb():
    """The bug: with absent keys read as missing every learner was at chance here."""
    rows = bag_stream(1500, vocabulary=2000, seed=1)
    river = progressive_accuracy(river_nb.MultinomialNB(), rows)
    assert river > 0.8
    for model in (NaiveBayes(absent="zero"), BMANB(absent="zero")):
        assert progressive_accuracy(model, rows) >= river - 0.01, type(model).__name__
    # ModelAveragedNB's one arc for the whole vocabulary must beat the Occam penalty of a
    # class-dependent multinomial: with alpha = 1 per word over 2,000 words it does so only
    # after ~1,300 of these records (docs/naive_bayes.md); with alpha = 0.1 at once.
    river = progressive_accuracy(river_nb.MultinomialNB(alpha=0.1), rows)
    assert progressive_accuracy(ModelAveragedNB(absent="zero", alpha=0.1), rows) >= river - 0.01


def test_naive_bayes_counts_equal_river_multinomial_nb():
    """Same multinomial, same smoothing: the joint log likelihoods differ only by the class
    prior (River's is unsmoothed) when every word of the record was seen in training."""
    rows = bag_stream(300, vocabulary=50, words=8, n_classes=3, seed=2)
    rows = [({f: c * 0.5 if i % 3 == 0 else c for f, c in x.items()}, y)
            for i, (x, y) in enumerate(rows)]  # real-valued counts too
    ours, river = NaiveBayes(absent="zero", alpha=0.7), river_nb.MultinomialNB(alpha=0.7)
    for x, y in rows:
        ours.learn_one(x, y)
        river.learn_one(x, y)
    vocab = set(river.feature_counts)
    for x, _ in bag_stream(20, vocabulary=50, words=8, seed=3):
        x = {f: c for f, c in x.items() if f in vocab}
        a, b = ours.joint_log_likelihood(x), river.joint_log_likelihood(x)
        # no public view of the class prior: joint_log_likelihood includes it
        prior = ours._log_prior()
        for y in b:
            assert a[y] - prior[y] == pytest.approx(b[y] - math.log(river.p_class(y)), abs=1e-9)


# --------------------------------------------------------------------- brute force

def count_rows(n, vocabulary=4, n_nominal=1, n_classes=3, seed=0):
    """Small records: a few words with integer and real counts, nominal features, missing."""
    g = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        y = int(g.integers(n_classes))
        x = {}
        for w in range(vocabulary):
            if g.random() < 0.4:
                x[f"w{w}"] = [1, 2, 0.5, 3][(w + y + int(g.integers(2))) % 4]
        for j in range(n_nominal):
            r = g.random()
            if r < 0.1:
                continue  # missing
            x[f"c{j}"] = "ab"[y % 2] if r < 0.6 else "abc"[int(g.integers(3))]
        rows.append((x, f"k{y}"))
    return rows


def _dm(counts: dict, domain, a):
    """log Dirichlet-multinomial probability of a token sequence with these counts."""
    total = sum(counts.get(v, 0) for v in domain)
    out = math.lgamma(len(domain) * a) - math.lgamma(len(domain) * a + total)
    return out + sum(math.lgamma(a + counts.get(v, 0)) - math.lgamma(a) for v in domain)


def _feature_blocks(rows):
    """Per class, the token counts and each nominal feature's value counts, from scratch."""
    classes = list(dict.fromkeys(y for _, y in rows))
    nominal = list(dict.fromkeys(f for x, _ in rows for f, v in x.items() if isinstance(v, str)))
    words = list(dict.fromkeys(f for x, _ in rows for f, v in x.items()
                               if not isinstance(v, str) and v > 0))
    return classes, nominal, words


def _counts(rows, f, cls=None):
    """``{value: count}`` of feature ``f`` (``None``: the tokens) in rows of class ``cls``."""
    out: dict = {}
    for x, y in rows:
        if cls is not None and y != cls:
            continue
        for g, v in x.items():
            if f is None and not isinstance(v, str):
                out[g] = out.get(g, 0) + v
            elif g == f:
                out[v] = out.get(v, 0) + 1
    return out


def brute_force(rows, x, alpha=1.0, pi=0.5):
    """P(y | x, D) and P(arc | D) enumerating all 2^(1 + nominal) structures, each scored by
    its marginal likelihood of D and of D plus (x, y)."""
    classes, nominal, words = _feature_blocks(rows)
    feats = [None, *nominal]  # None: the multinomial over words
    domain = {None: words}
    for f in nominal:
        domain[f] = list(dict.fromkeys(v for r, _ in rows for g, v in r.items() if g == f))
    test = {None: {w: c for w, c in x.items() if w in words and not isinstance(c, str)}}
    for f in nominal:
        if x.get(f) in domain[f]:
            test[f] = {x[f]: 1}

    def ml(f, arc, extra_y=None):
        """log ML of feature f's data (plus the test record as class extra_y)."""
        def plus(counts, add):
            out = dict(counts)
            for v, c in add.items():
                out[v] = out.get(v, 0) + c
            return out
        add = test.get(f, {}) if extra_y is not None else {}
        if not arc:
            return _dm(plus(_counts(rows, f), add), domain[f], alpha)
        return sum(_dm(plus(_counts(rows, f, c), add if c == extra_y else {}), domain[f], alpha)
                   for c in classes)

    n = len(rows)
    log_prior_y = {c: math.log((sum(1 for _, y in rows if y == c) + alpha)
                               / (n + alpha * len(classes))) for c in classes}
    scores = {}
    for c in classes:
        terms = []
        for s in itertools.product([False, True], repeat=len(feats)):
            terms.append(sum(math.log(pi if a else 1 - pi) + ml(f, a, c) for f, a in zip(feats, s)))
        scores[c] = log_prior_y[c] + logsumexp(terms)
    norm = logsumexp(list(scores.values()))
    proba = {c: math.exp(s - norm) for c, s in scores.items()}
    incl = {}
    for f in feats:
        d = math.log(pi / (1 - pi)) + ml(f, True) - ml(f, False)
        incl[COUNTS if f is None else f] = 1 / (1 + math.exp(-d))
    return proba, incl


TESTS = [
    {"w0": 1, "w1": 2, "c0": "a"},
    {"w2": 0.5, "w3": 3, "w9": 4, "c0": "zzz"},  # a word and a value never seen: skipped
    {"w0": 0, "c0": None},  # an explicit zero is an absent word
    {},
]


@pytest.mark.parametrize("seed,n_nominal,alpha,pi", [
    (0, 1, 1.0, 0.5), (1, 2, 0.5, 0.3), (2, 0, 2.0, 0.7), (3, 1, 1.0, 0.5)])
def test_model_averaged_counts_equal_enumeration_of_all_structures(seed, n_nominal, alpha, pi):
    rows = count_rows(25, n_nominal=n_nominal, seed=seed)
    model = ModelAveragedNB(absent="zero", alpha=alpha, inclusion_prior=pi)
    for x, y in rows:
        model.learn_one(x, y)
    for x in TESTS:
        proba, incl = brute_force(rows, x, alpha=alpha, pi=pi)
        got = model.predict_proba_one(x)
        assert got.keys() == proba.keys()
        for c in proba:
            assert got[c] == pytest.approx(proba[c], abs=1e-9)
    got = model.feature_posteriors()
    assert got.keys() == incl.keys()
    for f in incl:
        assert got[f] == pytest.approx(incl[f], abs=1e-9)


def brute_force_bmanb(rows, x, gamma=1.0, alpha=1.0):
    """Eq. 11 of Wu et al. over all subsets of {multinomial over words} ∪ nominal features,
    plug-in likelihoods, β = Γ^(observations + 1); a bag's plug-in likelihood is the product
    of its tokens' (the multinomial coefficient is common to every subset)."""
    classes, nominal, words = _feature_blocks(rows)
    feats = [None, *nominal]
    n = len(rows)
    log_prior_y = [math.log((sum(1 for _, y in rows if y == c) + alpha)
                            / (n + alpha * len(classes))) for c in classes]
    blocks = []
    for f in feats:
        dom = words if f is None else list(dict.fromkeys(
            v for r, _ in rows for g, v in r.items() if g == f))
        m = len(dom)
        tot = _counts(rows, f)
        by = {c: _counts(rows, f, c) for c in classes}
        n_f = sum(tot.values())
        n_fy = {c: sum(by[c].values()) for c in classes}

        def p0(v, tot=tot, n_f=n_f, m=m):
            return math.log((tot.get(v, 0) + alpha) / (n_f + alpha * m))

        def p1(v, c, by=by, n_fy=n_fy, m=m):
            return math.log((by[c].get(v, 0) + alpha) / (n_fy[c] + alpha * m))

        def bag(r, f=f):
            if f is None:
                return {w: v for w, v in r.items()
                        if isinstance(v, (int, float)) and v > 0}
            return {r[f]: 1} if isinstance(r.get(f), str) else {}

        l0 = sum(k * p0(v) for r, _ in rows for v, k in bag(r).items())
        l1 = sum(k * p1(v, y) for r, y in rows for v, k in bag(r).items())
        xt = {v: k for v, k in bag(x).items() if v in dom}
        t0 = [sum(k * p0(v) for v, k in xt.items())] * len(classes)
        t1 = [sum(k * p1(v, c) for v, k in xt.items()) for c in classes]
        blocks.append((l0, l1, t0, t1, (n_f + 1) * math.log(gamma)))
    terms = []
    for used in itertools.product([False, True], repeat=len(feats)):
        terms.append([log_prior_y[k] + sum((b[1] + b[3][k] - b[4]) if u else (b[0] + b[2][k])
                                           for b, u in zip(blocks, used))
                      for k in range(len(classes))])
    scores = logsumexp(np.array(terms), axis=0)
    return dict(zip(classes, np.exp(scores - logsumexp(scores))))


@pytest.mark.parametrize("seed,gamma,alpha", [(0, 1.0, 1.0), (1, 1.05, 0.5), (2, 0.9, 2.0)])
def test_bmanb_counts_equal_enumeration_of_eq_11(seed, gamma, alpha):
    rows = count_rows(25, n_nominal=1, seed=seed)
    model = BMANB(absent="zero", gamma=gamma, alpha=alpha)
    for x, y in rows:
        model.learn_one(x, y)
    for x in TESTS:
        proba = brute_force_bmanb(rows, x, gamma=gamma, alpha=alpha)
        got = model.predict_proba_one(x)
        assert got.keys() == proba.keys()
        for c in proba:
            assert got[c] == pytest.approx(proba[c], abs=1e-9)


# ------------------------------------------------------------------- streams, batches

@pytest.mark.parametrize("make", [NaiveBayes, ModelAveragedNB, BMANB])
def test_learn_many_and_merge_equal_learn_one(make):
    import pandas as pd

    rows = count_rows(40, n_nominal=1, seed=4)
    one = make(absent="zero")
    for x, y in rows:
        one.learn_one(x, y)
    many = make(absent="zero")
    many.learn_many(pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows]))
    left, right = make(absent="zero"), make(absent="zero")
    for x, y in rows[:15]:
        left.learn_one(x, y)
    for x, y in rows[15:]:
        right.learn_one(x, y)
    merged = left.merge(right)
    frame = pd.DataFrame(list(TESTS))
    expected = one.predict_proba_many(frame)
    for other in (many, merged):
        for x in TESTS:
            a, b = one.predict_proba_one(x), other.predict_proba_one(x)
            for c in a:
                assert b[c] == pytest.approx(a[c], abs=1e-9)
        got = other.predict_proba_many(frame)
        got = got.reindex(columns=expected.columns)
        assert np.allclose(got.to_numpy(), expected.to_numpy(), atol=1e-9)
    for i, x in enumerate(TESTS):
        p = one.predict_proba_one(x)
        for c in p:
            assert expected.loc[i, c] == pytest.approx(p[c], abs=1e-12)


@pytest.mark.parametrize("make", [NaiveBayes, ModelAveragedNB, BMANB])
def test_forgetting_with_counts_stays_a_distribution(make):
    kwargs = {"decay": 0.9}
    if make is ModelAveragedNB:
        kwargs["structure_decay"] = 0.8
    for model in (make(absent="zero", **kwargs), make(absent="zero", decay="auto")):
        for x, y in count_rows(60, seed=5):
            p = model.predict_proba_one(x)
            assert not p or abs(sum(p.values()) - 1) < 1e-9
            model.learn_one(x, y)


# ------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("make", [NaiveBayes, ModelAveragedNB, BMANB])
def test_negative_count_is_refused_and_changes_nothing(make):
    model = make(absent="zero")
    for x, y in count_rows(10, seed=6):
        model.learn_one(x, y)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="'w1'.*negative"):
        model.learn_one({"w0": 1, "w1": -2}, "k0")
    with pytest.raises(ValueError, match="'w1'.*negative"):
        model.predict_proba_one({"w1": -2})
    assert pickle.dumps(model) == before


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="absent"):
        NaiveBayes(absent="nothing")
    with pytest.raises(ValueError, match="BDeu"):
        ModelAveragedNB(absent="zero", prior="BDeu")
    with pytest.raises(ValueError, match="reserved"):
        NaiveBayes(absent="zero").learn_one({COUNTS: 1}, 0)


def test_default_still_reads_absent_as_missing():
    model = NaiveBayes()
    model.learn_one({"w0": 1.0, "w1": 2.0}, "a")
    model.learn_one({"w0": 3.0}, "b")
    # no public view of the feature kinds or the tables: what this test is about
    assert model._kinds.kind == {"w0": 1, "w1": 1}
    assert COUNTS not in model._tables


@pytest.mark.slow
@pytest.mark.parametrize("make", [NaiveBayes, ModelAveragedNB, BMANB])
def test_river_check_estimator_with_counts(make):
    from river.checks import check_estimator

    check_estimator(make(absent="zero"))
