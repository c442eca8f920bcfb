"""Paired statistics against scipy on fixed data: ties, zero differences, every
Wilcoxon regime (exact, exact sign flips, normal approximation)."""

from __future__ import annotations

import functools
import math
import types

import numpy as np
import pytest

from tracegrade.stats import paired as pairstats

# Judge-like 1..5 scores: many ties and several zero differences.
BASE_SCORES = [5, 4, 4, 3, 5, 2, 4, 5, 3, 4, 4, 5]
CAND_SCORES = [5, 5, 3, 4, 5, 4, 4, 4, 5, 5, 4, 5]

PAIRS = {
    "ties and zeros, n=12 (sign flips)": (BASE_SCORES, CAND_SCORES),
    "no ties no zeros, n=9 (exact)": ([1, 2, 3, 4, 5, 6, 7, 8, 9],
                                      [1.1, 1.8, 3.35, 4.45, 4.45, 6.65, 7.75, 7.15, 9.95]),
    "ties and zeros, n=20 (normal)": (BASE_SCORES + [3, 4, 2, 5, 1, 3, 4, 4],
                                      CAND_SCORES + [4, 4, 3, 3, 2, 5, 4, 5]),
    "no ties, n=60 (normal)": ([i * 0.37 % 5 for i in range(60)], [(i * 0.37 % 5) + math.sin(i) + 0.2 for i in range(60)]),
    "one pair differs": ([3, 3, 3, 3, 3], [3, 3, 3, 3, 4]),
}


@pytest.mark.parametrize("name", PAIRS)
def test_wilcoxon_matches_scipy(name, scipy_stats):
    base, cand = PAIRS[name]
    ours, theirs = pairstats.wilcoxon_signed_rank(base, cand), scipy_stats.wilcoxon(cand, base)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-12)
    assert ours.statistic == pytest.approx(theirs.statistic)


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("name", PAIRS)
def test_one_sided_wilcoxon_matches_scipy(name, alternative, scipy_stats):
    base, cand = PAIRS[name]
    ours = pairstats.wilcoxon_signed_rank(base, cand, alternative)
    theirs = scipy_stats.wilcoxon(cand, base, alternative=alternative)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-12)
    assert ours.statistic == pytest.approx(theirs.statistic)


def test_wilcoxon_regimes_are_the_ones_scipy_uses():
    methods = {name: pairstats.wilcoxon_signed_rank(*PAIRS[name]).method for name in PAIRS}
    assert methods["ties and zeros, n=12 (sign flips)"] == "exact sign flips"
    assert methods["no ties no zeros, n=9 (exact)"] == "exact"
    assert methods["ties and zeros, n=20 (normal)"] == "normal approximation"


@pytest.mark.parametrize("name", PAIRS)
def test_paired_t_matches_scipy(name, scipy_stats):
    base, cand = PAIRS[name]
    ours, theirs = pairstats.paired_t_test(base, cand), scipy_stats.ttest_rel(cand, base)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-14)


def test_no_difference_at_all_is_p_one_not_nan():
    same = [4, 5, 3, 4]
    assert pairstats.wilcoxon_signed_rank(same, same).p_value == 1.0
    assert pairstats.paired_t_test(same, same).p_value == 1.0
    assert pairstats.paired_t_test(same, [s + 1 for s in same]).p_value == 0.0  # every case up by one


@pytest.mark.parametrize("only_base, only_cand", [(0, 6), (3, 3), (1, 9), (10, 2), (0, 1), (25, 40)])
def test_mcnemar_is_the_exact_binomial_test_on_discordant_pairs(only_base, only_cand, scipy_stats):
    ours = pairstats.mcnemar_exact(only_base, only_cand)
    theirs = scipy_stats.binomtest(min(only_base, only_cand), only_base + only_cand, 0.5)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)


def test_mcnemar_without_discordant_pairs():
    assert pairstats.mcnemar_exact(0, 0).p_value == 1.0


def test_bootstrap_interval_is_seeded_and_agrees_with_scipy(scipy_stats):
    diffs = pairstats.differences(BASE_SCORES * 3, CAND_SCORES * 3)
    ours = pairstats.bootstrap_mean_ci(diffs, seed=7)
    assert ours == pairstats.bootstrap_mean_ci(diffs, seed=7)
    continuous = [d + i / 100 for i, d in enumerate(diffs)]
    assert pairstats.bootstrap_mean_ci(continuous, seed=7) != pairstats.bootstrap_mean_ci(continuous, seed=8)
    theirs = scipy_stats.bootstrap((np.array(diffs),), np.mean, method="percentile", n_resamples=10_000,
                                   random_state=0).confidence_interval
    # Different random streams: the two intervals agree to Monte Carlo error.
    assert ours.low == pytest.approx(theirs.low, abs=0.03)
    assert ours.high == pytest.approx(theirs.high, abs=0.03)
    assert ours.contains(float(np.mean(diffs)))


def test_bootstrap_of_a_constant_is_that_constant():
    assert pairstats.bootstrap_mean_ci([0.5] * 10) == pairstats.Interval(0.5, 0.5)


def test_pairs_must_be_aligned():
    with pytest.raises(ValueError, match="differ in length"):
        pairstats.paired_t_test([1, 2], [1])


def _distinct(n: int, zeros: int = 0, ties: bool = False) -> tuple[list[float], list[float]]:
    """n pairs whose differences have both signs; distinct sizes unless ``ties``
    (pairs of equal size), and ``zeros`` of them zero."""
    base = [float(i % 7) for i in range(n)]
    sizes = [((i // 2 if ties else i) + 1) * 0.25 for i in range(n)]
    signs = [1 if (i * 7) % 3 else -1 for i in range(n)]
    cand = [b + (0.0 if i < zeros else s * size) for i, (b, s, size) in enumerate(zip(base, signs, sizes))]
    return base, cand


# (pairs, the regime scipy's "auto" uses): both sides of every boundary.
EDGES = {
    "distinct, n=20": (_distinct(20), "exact"),
    "distinct, n=30": (_distinct(30), "exact"),
    "distinct, n=50": (_distinct(50), "exact"),
    "distinct, n=51": (_distinct(51), "normal approximation"),
    "ties, n=13": (_distinct(13, ties=True), "exact sign flips"),
    "ties, n=14": (_distinct(14, ties=True), "normal approximation"),
    "a zero, n=13": (_distinct(13, zeros=1), "exact sign flips"),
    "a zero, n=14": (_distinct(14, zeros=1), "normal approximation"),
    "zeros and ties, n=30": (_distinct(30, zeros=3, ties=True), "normal approximation"),
}


# scipy 1.17.1's answers where it flips signs (n=13 with ties or a zero): (statistic, p-value).
# WHY written down, not asked: each call took ~2 s of CPU (13 s for the six, a sixth of a worker's
# share of the suite); they are exact (multiples of 1/2^n), so they cannot drift with the machine.
SCIPY_SIGN_FLIPS = {
    ("ties, n=13", "two-sided"): (35.0, 0.48974609375),
    ("ties, n=13", "greater"): (56.0, 0.244873046875),
    ("ties, n=13", "less"): (56.0, 0.7734375),
    ("a zero, n=13", "two-sided"): (30.0, 0.5185546875),
    ("a zero, n=13", "greater"): (48.0, 0.25927734375),
    ("a zero, n=13", "less"): (48.0, 0.76513671875),
}


@functools.cache
def scipy_wilcoxon_at_edge(name: str, alternative: str):
    """scipy's answer on an edge, asked once (or written down, for its slow sign flips)."""
    if (name, alternative) in SCIPY_SIGN_FLIPS:
        statistic, pvalue = SCIPY_SIGN_FLIPS[name, alternative]
        return types.SimpleNamespace(statistic=statistic, pvalue=pvalue)
    from scipy import stats  # WHY here: conftest's scipy_stats

    (base, cand), _ = EDGES[name]
    return stats.wilcoxon(cand, base, alternative=alternative)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("name", EDGES)
def test_wilcoxon_at_the_regime_edges_matches_scipy(name, alternative):
    (base, cand), regime = EDGES[name]
    ours = pairstats.wilcoxon_signed_rank(base, cand, alternative)
    theirs = scipy_wilcoxon_at_edge(name, alternative)
    assert ours.method == regime
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-12)
    assert ours.statistic == pytest.approx(theirs.statistic)


def test_the_edge_data_is_what_its_name_says():
    for name, ((base, cand), _) in EDGES.items():
        d = [c - b for b, c in zip(base, cand)]
        sizes = [abs(x) for x in d if x]
        assert (len(set(sizes)) < len(sizes)) == ("ties" in name), name
        assert (0.0 in d) == ("zero" in name), name
        assert 0.01 < scipy_wilcoxon_at_edge(name, "two-sided").pvalue < 0.99, name  # not a trivial tail


def test_exact_and_normal_differ_at_30_pairs_so_the_edge_is_tested(scipy_stats):
    base, cand = _distinct(30)
    exact = scipy_stats.wilcoxon(cand, base, method="exact").pvalue
    normal = scipy_stats.wilcoxon(cand, base, method="approx").pvalue
    assert abs(exact - normal) > 1e-4
