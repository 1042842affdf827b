"""Cut points of numeric features: point masses, equal-frequency grids, MDL, one-search coding,
the ``(a, b]`` convention and the measures for densities (issue 38 item 3, issue 39 item 7)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from onlinebma.numeric.cuts import (
    class_cuts,
    distinct_counts,
    equal_frequency_cuts,
    extent,
    log_measures,
    mass_cuts,
    point_masses,
)
from onlinebma.numeric.grids import Grids
from onlinebma.preprocessing import mdl_cut_points
from onlinebma.table import interval_index


def adult_like_gain(n: int, seed: int) -> np.ndarray:
    """Like adult's capital-gain: 0 in about 92 % of records, spread positive values else."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.92, 0.0, np.round(rng.lognormal(8, 1, n)))


def test_a_point_mass_gets_its_own_interval_and_the_rest_real_intervals():
    sample = adult_like_gain(2000, seed=0)
    values, counts = distinct_counts(sample)
    masses = point_masses(values, counts, share=1 / 5)
    assert masses.tolist() == [0.0]
    cuts = equal_frequency_cuts(values, counts, 5, masses)
    bins = interval_index(sample, cuts)
    # {0} alone, nothing below it, and the positive values in 4 groups of nearly equal counts
    assert np.array_equal(bins == 1, sample == 0.0)
    assert not (bins == 0).any()
    positive = np.bincount(bins[sample > 0], minlength=cuts.size + 1)[2:]
    assert positive.size == 4
    assert positive.max() - positive.min() <= 0.1 * positive.mean() + 3
    # plain equal-frequency quantiles collapse: every cut is 0
    assert np.unique(np.quantile(sample, [0.2, 0.4, 0.6, 0.8])).tolist() == [0.0]


def test_point_mass_interval_holds_the_value_alone():
    cuts = mass_cuts(np.array([0.0, 3.0]))
    below = np.nextafter(0.0, -np.inf)
    got = interval_index(np.array([below, 0.0, 1e-300, np.nextafter(3.0, 0.0), 3.0]), cuts)
    assert got.tolist() == [0, 1, 2, 2, 3]


def test_interior_point_mass_splits_the_free_values_around_it():
    sample = np.concatenate([np.linspace(-5, -1, 30), np.full(40, 2.0), np.linspace(3, 7, 30)])
    values, counts = distinct_counts(sample)
    masses = point_masses(values, counts, share=1 / 8)
    cuts = equal_frequency_cuts(values, counts, 3, masses)
    # 2 groups of the 60 free values: the boundary nearest 30 lies across the mass, so no cut
    # is added there; the mass's cuts separate the groups
    assert cuts.tolist() == [np.nextafter(2.0, -np.inf), 2.0]


@pytest.mark.parametrize("n_intervals", [2, 3, 5, 8, 16, 32])
def test_equal_frequency_without_masses_is_near_equal(n_intervals):
    sample = np.random.default_rng(1).normal(size=1000)
    values, counts = distinct_counts(sample)
    cuts = equal_frequency_cuts(values, counts, n_intervals, np.array([]))
    assert cuts.size == n_intervals - 1
    sizes = np.bincount(interval_index(sample, cuts))
    assert sizes.max() - sizes.min() <= 1
    # each cut lies strictly between two sample values, at their midpoint
    assert not np.isin(cuts, sample).any()


def test_duplicates_move_a_cut_to_the_nearest_boundary():
    values, counts = np.array([1.0, 2.0, 3.0]), np.array([2, 5, 3])
    # target 5 of 10 records: boundaries after 2 and after 7 records; 7 is nearer than 2
    assert equal_frequency_cuts(values, counts, 2, np.array([])).tolist() == [2.5]


def test_fewer_distinct_values_than_intervals_gives_fewer_intervals():
    values, counts = np.array([1.0, 2.0]), np.array([1, 1])
    assert equal_frequency_cuts(values, counts, 8, np.array([])).tolist() == [1.5]
    assert equal_frequency_cuts(np.array([4.0]), np.array([1]), 8, np.array([])).size == 0


def test_midpoint_of_adjacent_floats_keeps_them_apart():
    lo = 1.0
    hi = np.nextafter(1.0, 2.0)
    cuts = equal_frequency_cuts(np.array([lo, hi]), np.array([1, 1]), 2, np.array([]))
    assert interval_index(np.array([lo, hi]), cuts).tolist() == [0, 1]


def test_values_equal_to_a_cut_fall_in_the_lower_interval():
    values, counts = distinct_counts(np.arange(10.0))
    grids = Grids.from_sample(values, counts[:, None], resolutions=(2, 5), class_aware=False)
    for m, cuts in enumerate(grids.cuts):
        for i, c in enumerate(cuts):
            assert grids.code(float(c))[m] == i  # (a, b]: c is the upper end of interval i
            assert grids.code(float(np.nextafter(c, np.inf)))[m] == i + 1


def test_one_search_codes_like_a_search_per_member():
    rng = np.random.default_rng(2)
    sample = np.concatenate([rng.normal(size=400), np.zeros(100), np.full(30, 1.5)])
    values, counts = distinct_counts(sample)
    labels = (sample > 0.3).astype(int)
    class_counts = np.zeros((values.size, 2), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(values, sample), labels), 1)
    grids = Grids.from_sample(values, class_counts)
    probes = np.concatenate([rng.normal(scale=3, size=500), *grids.cuts,
                             np.nextafter(np.concatenate(grids.cuts), np.inf), [np.nan]])
    got = grids.code_many(probes)
    for m, cuts in enumerate(grids.cuts):
        assert np.array_equal(got[:, m], interval_index(probes, cuts))
        for x, want in zip(probes[:50], got[:50, m]):
            assert grids.code(float(x))[m] == want
    assert grids.members == ("3 intervals", "5 intervals", "8 intervals", "16 intervals",
                             "32 intervals", "MDL")
    assert grids.masses.tolist() == [0.0, 1.5]  # 100 and 30 of 530 records, > 1/32


def test_mdl_member_is_the_mdl_rule_plus_the_shared_masses():
    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    y = (x + rng.normal(scale=0.5, size=300) > 0).astype(int)
    values, counts = distinct_counts(x)
    class_counts = np.zeros((values.size, 2), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(values, x), y), 1)
    mdl = mdl_cut_points(x, y, 2)
    assert mdl.size >= 1
    assert np.array_equal(class_cuts(values, class_counts, np.array([])), mdl)
    both = class_cuts(values, class_counts, np.array([values[0]]))
    assert np.array_equal(both, np.unique(np.concatenate([mdl, mass_cuts(values[:1])])))


def test_mdl_member_on_a_point_mass_feature():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 1000)
    x = np.where(rng.random(1000) < 0.9, 0.0, 100.0 + 50 * y + rng.normal(size=1000))
    values, counts = distinct_counts(x)
    class_counts = np.zeros((values.size, 2), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(values, x), y), 1)
    grids = Grids.from_sample(values, class_counts, resolutions=(4,))
    mdl = grids.cuts[grids.members.index("MDL")]
    codes = grids.code_many(x)[:, 1]
    assert np.array_equal(codes == 1, x == 0.0)  # {0} alone
    # above 0 the MDL cut separates the classes: each positive interval holds one class
    positive = x > 0
    assert mdl.size == 4 and 100 < mdl[-1] < 150  # the masses, 0 | positive, and the classes
    assert {tuple(np.unique(y[positive & (codes == k)])) for k in np.unique(codes[positive])} \
        == {(0,), (1,)}


def test_log_measures_and_extent():
    values = np.array([0.0, 1.0, 2.0, 6.0])
    low, high = extent(values)
    assert (low, high) == (-2.0, 8.0)
    cuts = np.array([np.nextafter(1.0, -np.inf), 1.0, 4.0])
    measures = log_measures(cuts, np.array([1.0]), low, high)
    widths = np.exp(measures)
    assert widths[1] == 1.0  # the point mass: measured by probability
    assert widths[[0, 2, 3]] == pytest.approx([cuts[0] - low, 3.0, 4.0])
    assert extent(np.array([5.0])) == (0.0, 10.0)
    assert extent(np.array([0.0])) == (-1.0, 1.0)


def test_densities_of_a_member_integrate_to_one_within_the_extent():
    rng = np.random.default_rng(5)
    sample = np.concatenate([rng.exponential(size=300), np.zeros(200)])
    values, counts = distinct_counts(sample)
    grids = Grids.from_sample(values, counts[:, None], resolutions=(3, 8), class_aware=False)
    for m, cuts in enumerate(grids.cuts):
        p = np.full(grids.n_intervals[m], 1 / grids.n_intervals[m])  # any interval probabilities
        density = np.exp(np.log(p) - grids.log_measures[m])
        is_mass = np.isin(np.arange(cuts.size + 1), np.searchsorted(cuts, grids.masses))
        widths = np.diff(np.concatenate([[grids.low], cuts, [grids.high]]))
        total = np.sum(density[~is_mass] * widths[~is_mass]) + np.sum(density[is_mass])
        assert total == pytest.approx(1.0, rel=1e-12)


def test_grids_pickle_and_compare():
    values, counts = distinct_counts(adult_like_gain(500, seed=6))
    grids = Grids.from_sample(values, counts[:, None], class_aware=False)
    copy = pickle.loads(pickle.dumps(grids))
    assert copy == grids
    assert not copy.code(0.0).flags.writeable  # rows of the shared table stay read-only
    probes = np.array([-1.0, 0.0, 5.0, 1e6])
    assert np.array_equal(copy.code_many(probes), grids.code_many(probes))
    other = Grids.from_sample(values[1:], counts[1:, None], class_aware=False)
    assert other != grids


@pytest.mark.parametrize("call, message", [
    (lambda: distinct_counts([1.0, np.inf]), "infinite"),
    (lambda: point_masses(np.array([2.0, 1.0]), np.array([1, 1]), 0.5), "increasing"),
    (lambda: point_masses(np.array([1.0]), np.array([0]), 0.5), "positive"),
    (lambda: point_masses(np.array([1.0]), np.array([1]), 0.0), "share"),
    (lambda: equal_frequency_cuts(np.array([1.0]), np.array([1]), 0, np.array([])),
     "n_intervals"),
    (lambda: equal_frequency_cuts(np.array([1.0]), np.array([1, 2]), 2, np.array([])),
     "one length"),
    (lambda: class_cuts(np.array([1.0]), np.array([1]), np.array([])), "shape"),
    (lambda: class_cuts(np.array([1.0]), np.array([[0.5]]), np.array([])), "integers"),
    (lambda: extent(np.array([])), "empty"),
    (lambda: log_measures(np.array([1.0]), np.array([]), 2.0, 3.0), "extent"),
    (lambda: Grids.from_sample(np.array([1.0]), np.array([[1]]), resolutions=(1,)),
     "resolutions"),
    (lambda: Grids.from_sample(np.array([1.0]), np.array([[1]]), resolutions=[3]),
     "resolutions"),
    (lambda: Grids(("a",), (np.array([2.0, 1.0]),), np.array([]), 0.0, 3.0), "increasing"),
    (lambda: Grids(("a",), (np.array([1.0]),), np.array([1.0]), 0.0, 3.0), "point mass"),
    (lambda: Grids(("a", "b"), (np.array([1.0]),), np.array([]), 0.0, 3.0), "one name"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_value_seen_once_is_no_point_mass():
    """In a sample of 4 distinct values each holds 1/4 > 1/32, yet none is a mass."""
    values, counts = distinct_counts([0.0, 1.5, 3.3, 4.2])
    assert point_masses(values, counts, share=1 / 32).size == 0
    values, counts = distinct_counts([0.0, 0.0, 1.5, 3.3, 4.2])
    assert point_masses(values, counts, share=1 / 32).tolist() == [0.0]
