"""One spelling of the Gaussian representation in the package: ``numeric="Gaussian"`` for the
naive Bayes family as for the tree learners (:data:`onlinebma.tan.gaussian.GAUSSIAN`). The
family's former spelling ``"gaussian"`` is refused, not taken as an alias: the error names the
accepted choices and the new spelling, and a learner asked for it through River's
``clone(new_params)`` or ``mutate`` is left as it was."""

import pickle
import re

import pytest
from river import checks

from onlinebma.naive_bayes import BMANB, ModelAveragedNB, NaiveBayes
from onlinebma.naive_bayes.numbers import NumberReader, check_numeric

CLASSES = [NaiveBayes, ModelAveragedNB, BMANB]

#: The refusal a user of the former spelling reads, written out here (not taken from the code).
REFUSAL = ("numeric must be one of ('Gaussian', '3 intervals', '5 intervals', '8 intervals', "
           "'16 intervals', '32 intervals', 'MDL'), got 'gaussian': the Gaussian is now spelled "
           "'Gaussian', as in ModelAveragedTAN")

#: Records with a numeric feature ``x`` (its class mean 0 or 3) and a nominal feature ``c``.
RECORDS = [({"x": float(i % 7) / 2 + 3.0 * (i % 2), "c": "uvw"[i % 3]}, i % 2 == 0)
           for i in range(40)]


def learned(model, records=RECORDS):
    for x, y in records:
        model.learn_one(x, y)
    return model


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


def test_the_family_and_the_tree_learners_spell_the_gaussian_alike():
    from onlinebma.naive_bayes.numbers import GAUSSIAN as FAMILY
    from onlinebma.tan.gaussian import GAUSSIAN as TREES

    assert FAMILY == TREES == "Gaussian"


@pytest.mark.parametrize("cls", CLASSES)
def test_numeric_gaussian_reads_numbers_by_their_moments(cls):
    """``cls(numeric="Gaussian")`` is accepted, as ``ModelAveragedTAN(numeric="Gaussian")``,
    and reads numbers by their moments: no cut points after many more values than
    ``sample_size``, where ``"8 intervals"`` has fixed them."""
    gaussian = learned(cls(numeric="Gaussian", sample_size=5))
    intervals = learned(cls(numeric="8 intervals", sample_size=5))
    assert gaussian.numeric == "Gaussian"
    assert gaussian.cut_points() == {} and gaussian.numeric_readings == {}
    assert list(intervals.cut_points()) == ["x"]
    low, high = (gaussian.predict_proba_one({"x": v})[True] for v in (0.0, 3.0))
    assert low > 0.5 > high  # class True's values are near 0, class False's near 3


@pytest.mark.parametrize("params", [{}, {"decay": 0.9}, {"decay": "auto"}], ids=repr)
@pytest.mark.parametrize("cls", CLASSES)
def test_the_former_spelling_is_refused_naming_the_choices_and_the_new_one(cls, params):
    with pytest.raises(ValueError, match=exactly(REFUSAL)):
        cls(numeric="gaussian", **params)


def test_the_number_reader_refuses_the_former_spelling_alike():
    with pytest.raises(ValueError, match=exactly(REFUSAL)):
        NumberReader("gaussian")
    with pytest.raises(ValueError, match=exactly(REFUSAL)):
        check_numeric("gaussian")
    with pytest.raises(ValueError, match="^numeric='Gaussian' reads the moments: it needs no "
                                         "reader$"):
        NumberReader("Gaussian")


@pytest.mark.parametrize("wrong", ["GAUSSIAN", "gauss", "Gaussian ", "7 intervals"])
def test_other_wrong_values_are_refused_without_the_hint(wrong):
    """The hint is for the former spelling alone; no other casing is taken either."""
    plain = ("numeric must be one of ('Gaussian', '3 intervals', '5 intervals', '8 intervals', "
             f"'16 intervals', '32 intervals', 'MDL'), got {wrong!r}")
    with pytest.raises(ValueError, match=exactly(plain)):
        NaiveBayes(numeric=wrong)


def test_a_value_that_is_not_a_string_is_refused_as_before():
    with pytest.raises(ValueError, match=r"^numeric must be one of .*, got \['gaussian'\]$"):
        NaiveBayes(numeric=["gaussian"])


@pytest.mark.parametrize("numeric", ["Gaussian", "8 intervals"])
@pytest.mark.parametrize("cls", CLASSES)
def test_a_refused_clone_or_mutate_leaves_the_learner_as_it_was(cls, numeric):
    """River builds ``clone(new_params)`` through the constructor, which refuses before
    anything is made; ``mutate`` refuses ``numeric`` (not a mutable attribute). The learner
    then goes on exactly as a twin that was never asked."""
    model, twin = learned(cls(numeric=numeric)), learned(cls(numeric=numeric))
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=exactly(REFUSAL)):
        model.clone({"numeric": "gaussian"})
    with pytest.raises(ValueError, match="'numeric' is not a mutable attribute"):
        model.mutate({"numeric": "gaussian"})
    assert pickle.dumps(model) == before
    assert model.numeric == numeric and model._get_params() == twin._get_params()
    more = [({"x": 1.5 * i, "c": "uv"[i % 2]}, i % 3 == 0) for i in range(10)]
    for x, y in more:
        assert model.predict_proba_one(x) == twin.predict_proba_one(x)
        model.learn_one(x, y)
        twin.learn_one(x, y)


@pytest.mark.parametrize("params", [{"numeric": "Gaussian"}, {"numeric": "Gaussian", "decay": 0.9},
                                    {"numeric": "Gaussian", "decay": "auto"}, {}], ids=repr)
@pytest.mark.parametrize("cls", CLASSES)
def test_clone_and_get_params_round_trip_the_spelling(cls, params):
    model = learned(cls(**params))
    copy = model.clone()
    assert copy._get_params() == model._get_params()
    assert copy._get_params()["numeric"] == params.get("numeric", "8 intervals")
    rebuilt = cls(**model._get_params())
    assert learned(copy).predict_proba_one({"x": 2.0, "c": "u"}) == \
        model.predict_proba_one({"x": 2.0, "c": "u"}) == \
        learned(rebuilt).predict_proba_one({"x": 2.0, "c": "u"})


@pytest.mark.slow
@pytest.mark.parametrize("params", [{}, {"decay": 0.9}, {"decay": "auto"}], ids=repr)
@pytest.mark.parametrize("cls", CLASSES)
def test_river_checks_pass_with_the_gaussian(cls, params):
    """River's estimator checks on ``numeric="Gaussian"`` (the registry's parameter sets read
    numbers by the default, 8 intervals)."""
    checks.check_estimator(cls(numeric="Gaussian", **params))
