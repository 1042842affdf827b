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
    interval_widths,
    mass_cuts,
    point_masses,
    within_shares,
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


def test_class_cuts_are_the_mdl_rule_plus_given_masses():
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


def test_mdl_member_on_a_point_mass_feature_is_weka_s_rule():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 1000)
    x = np.where(rng.random(1000) < 0.9, 0.0, 100.0 + 50 * y + rng.normal(size=1000))
    values, counts = distinct_counts(x)
    class_counts = np.zeros((values.size, 2), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(values, x), y), 1)
    grids = Grids.from_sample(values, class_counts, resolutions=(4,))
    m = grids.members.index("MDL")
    assert np.array_equal(grids.cuts[m], mdl_cut_points(x, y, 2))
    codes = grids.code_many(x)[:, m]
    # 0 | positive, then the class split: each positive interval holds one class
    assert grids.cuts[m].size == 2 and np.array_equal(codes == 0, x == 0.0)
    positive = x > 0
    assert {tuple(np.unique(y[positive & (codes == k)])) for k in (1, 2)} == {(0,), (1,)}
    # 0 is alone in its MDL interval but no (a-, a] interval: it takes its sample share
    zeros = int((x == 0).sum())
    assert np.exp(grids.log_within(0.0)[m]) == pytest.approx(zeros / (zeros + 1))


def test_a_coarse_grid_keeps_few_intervals_beside_many_moderate_masses():
    """Like adult's hours-per-week: several values each hold 5-40 % of the records. A grid of
    3 gives its own interval only to those above 1/3; a grid of 32 to all of them."""
    rng = np.random.default_rng(7)
    common = rng.choice([20.0, 30.0, 35.0, 40.0, 45.0, 50.0], size=800,
                        p=[0.1, 0.1, 0.1, 0.45, 0.1, 0.15])
    sample = np.concatenate([common, rng.integers(1, 99, 200).astype(float)])
    values, counts = distinct_counts(sample)
    grids = Grids.from_sample(values, counts[:, None], resolutions=(3, 32), class_aware=False)
    assert grids.masses.tolist() == [20.0, 30.0, 35.0, 40.0, 45.0, 50.0]
    assert grids.n_intervals[0] <= 5  # 40 alone, and 2 groups of the rest
    own = [np.isin(mass_cuts(grids.masses[i:i + 1]), c).all() for c in grids.cuts
           for i in range(6)]
    assert own[:6] == [False, False, False, True, False, False] and all(own[6:])
    # in the grid of 3, 30.0 is measured by its share of its interval's probability
    within = np.exp(grids.log_within(30.0))
    assert 0 < within[0] < 1 and within[1] == 1.0


def test_within_shares_and_widths():
    values, counts = np.array([0.0, 1.0, 2.0, 6.0]), np.array([1, 5, 2, 1])
    low, high = extent(values)
    assert (low, high) == (-2.0, 8.0)
    cuts = np.array([np.nextafter(1.0, -np.inf), 1.0, 4.0])
    shares, free = within_shares(cuts, values, counts, np.array([1.0]))
    assert shares.tolist() == [1.0] and free[1] == 0.0  # 1.0 alone in (1-, 1]
    assert free[[0, 2, 3]].tolist() == [1.0, 1.0, 1.0]
    shares, free = within_shares(np.array([4.0]), values, counts, np.array([1.0, 2.0]))
    assert shares.tolist() == [5 / 9, 2 / 9] and free.tolist() == [2 / 9, 1.0]  # 0.0 is free
    assert interval_widths(cuts, low, high) == pytest.approx([cuts[0] + 2.0, 1.0 - cuts[0],
                                                              3.0, 4.0])
    assert extent(np.array([5.0])) == (0.0, 10.0)
    assert extent(np.array([0.0])) == (-1.0, 1.0)


@pytest.mark.parametrize("resolutions", [(3,), (3, 8), (2, 5, 32)])
def test_every_member_is_a_distribution_over_the_extent(resolutions):
    """Whatever a member's interval probabilities, its point masses' probabilities plus its
    density integrated over the extent sum to 1: members' predictives share one measure."""
    rng = np.random.default_rng(5)
    sample = np.concatenate([rng.exponential(size=300), np.zeros(200), np.full(40, 1.0),
                             np.full(25, 2.0)])
    labels = (sample > 0.7).astype(int)
    values, counts = distinct_counts(sample)
    class_counts = np.zeros((values.size, 2), dtype=np.int64)
    np.add.at(class_counts, (np.searchsorted(values, sample), labels), 1)
    grids = Grids.from_sample(values, class_counts, resolutions=resolutions)
    assert grids.masses.size == (3 if 32 in resolutions else 1)
    bounds = np.concatenate([[grids.low], grids._union_array, [grids.high]])
    cell_widths = np.diff(bounds)
    mass_cell = np.isin(np.arange(grids.n_cells), np.searchsorted(grids._union_array,
                                                                  grids.masses))
    for m in range(len(grids.members)):
        p = rng.dirichlet(np.ones(grids.n_intervals[m]))
        interval = grids.intervals_of_cells()[:, m]
        weight = p[interval] * np.exp(grids.log_within_of_cells()[:, m])
        total = weight[mass_cell].sum() + (weight * cell_widths)[~mass_cell].sum()
        assert total == pytest.approx(1.0, rel=1e-12)


def test_grids_pickle_and_compare():
    values, counts = distinct_counts(adult_like_gain(500, seed=6))
    grids = Grids.from_sample(values, counts[:, None], class_aware=False)
    copy = pickle.loads(pickle.dumps(grids))
    assert copy == grids
    assert not copy.code(0.0).flags.writeable  # rows of the shared tables stay read-only
    assert not copy.log_within(0.0).flags.writeable
    probes = np.array([-1.0, 0.0, 5.0, 1e6])
    assert np.array_equal(copy.code_many(probes), grids.code_many(probes))
    other = Grids.from_sample(values[1:], counts[1:, None], class_aware=False)
    assert other != grids


SAMPLE = (np.array([0.0, 2.0]), np.array([1, 1]))


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
    (lambda: interval_widths(np.array([1.0]), 2.0, 3.0), "extent"),
    (lambda: within_shares(np.array([1.0]), np.array([1.0]), np.array([1]), np.array([2.0])),
     "one of the sample's values"),
    (lambda: Grids.from_sample(np.array([1.0]), np.array([[1]]), resolutions=(1,)),
     "resolutions"),
    (lambda: Grids.from_sample(np.array([1.0]), np.array([[1]]), resolutions=[3]),
     "resolutions"),
    (lambda: Grids(("a",), (np.array([2.0, 1.0]),), *SAMPLE, np.array([])), "increasing"),
    (lambda: Grids(("a",), (np.array([1.0]),), *SAMPLE, np.array([5.0])), "sample's values"),
    (lambda: Grids(("a", "b"), (np.array([1.0]),), *SAMPLE, np.array([])), "one name"),
    (lambda: Grids(("a",), (np.array([1.0]),), np.array([2.0, 0.0]), np.array([1, 1]),
                   np.array([])), "increasing"),
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
