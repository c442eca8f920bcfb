"""The hand-written statistics against scipy / scikit-learn, on data with ties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracegrade.judge.agreement import (
    average_ranks, cohen_kappa, confusion_matrix, exact_agreement, mae, sample_variance, sign_test_p, spearman,
)

LABELS = [1, 2, 3, 4, 5]
# Heavy ties, as judge scores have: most answers get 4 or 5.
HUMAN = [5, 5, 5, 4, 4, 3, 1, 2, 5, 4, 3, 3, 1, 5, 2, 4, 5, 5, 1, 3]
JUDGE = [5, 4, 5, 4, 5, 3, 2, 2, 5, 3, 4, 3, 1, 5, 1, 4, 4, 5, 3, 3]
# A judge that never uses 1 or 2: labels absent from one side must still count.
NARROW = [5, 5, 5, 4, 4, 4, 3, 3, 5, 4, 3, 3, 3, 5, 3, 4, 5, 5, 3, 4]
PAIRS = [(HUMAN, JUDGE), (HUMAN, NARROW), (JUDGE, NARROW)]


@pytest.fixture(scope="module")
def metrics():
    """scikit-learn's metrics, imported by the tests that compare with them (as scipy: conftest's scipy_stats)."""
    from sklearn import metrics

    return metrics


def test_average_ranks_match_scipy_on_ties(scipy_stats):
    np.testing.assert_allclose(average_ranks(HUMAN)[0], scipy_stats.rankdata(HUMAN))
    assert average_ranks([2, 2, 1])[0] == [2.5, 2.5, 1.0]


@pytest.mark.parametrize("x, y", PAIRS)
def test_spearman_matches_scipy(x, y, scipy_stats):
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_of_a_constant_list_is_nan_not_a_number_that_passes():
    assert math.isnan(spearman([5, 5, 5], [1, 2, 3]))
    assert math.isnan(spearman([5], [5]))


@pytest.mark.parametrize("x, y", PAIRS)
def test_mae_and_exact_agreement(x, y, metrics):
    assert mae(x, y) == pytest.approx(metrics.mean_absolute_error(x, y))
    assert exact_agreement(x, y) == pytest.approx(np.mean(np.array(x) == np.array(y)))


@pytest.mark.parametrize("x, y", PAIRS)
@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_kappa_matches_sklearn(x, y, weights, metrics):
    expected = metrics.cohen_kappa_score(x, y, labels=LABELS, weights=weights)
    assert cohen_kappa(x, y, LABELS, weights) == pytest.approx(expected, abs=1e-12)


def test_kappa_of_perfect_agreement_is_one_and_of_one_category_is_nan():
    assert cohen_kappa(HUMAN, HUMAN, LABELS) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([5, 5], [5, 5], LABELS))


@pytest.mark.parametrize("x, y", PAIRS)
def test_confusion_matrix_matches_sklearn(x, y, metrics):
    assert confusion_matrix(x, y, LABELS) == metrics.confusion_matrix(x, y, labels=LABELS).tolist()


@pytest.mark.parametrize("wins, losses", [(0, 0), (1, 0), (7, 2), (2, 7), (5, 5), (12, 3), (0, 9), (30, 18)])
def test_sign_test_matches_scipy_binomtest(wins, losses, scipy_stats):
    expected = scipy_stats.binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    assert sign_test_p(wins, losses) == pytest.approx(expected, abs=1e-12)


def test_sample_variance():
    assert sample_variance([4, 4, 5]) == pytest.approx(np.var([4, 4, 5], ddof=1))
    assert sample_variance([3]) == 0.0


def test_lists_of_different_length_are_an_error():
    with pytest.raises(ValueError, match="differ in length"):
        mae([1, 2], [1])


def test_auc_matches_sklearn_and_a_fitted_threshold_respects_the_false_fail_limit(metrics):
    from tracegrade.judge.agreement import auc, balanced_accuracy, best_threshold

    good, bad = [0.9, 0.8, 0.8, 0.45, 0.4, 0.7], [0.1, 0.5, 0.3, 0.42, 0.2]
    assert auc(good, bad) == pytest.approx(metrics.roc_auc_score([1] * len(good) + [0] * len(bad), good + bad))
    free = best_threshold(good, bad)
    assert balanced_accuracy(good, bad, free) == max(balanced_accuracy(good, bad, c) for c in good + bad + [0.0, 1.0])
    limited = best_threshold(good, bad, max_false_fail=0.0)  # may fail no good item
    # The best of the cuts below the lowest good item (0.4): 0.35 passes every good item and fails 3 of 5 bad.
    assert limited == pytest.approx(0.35) and balanced_accuracy(good, bad, limited) == pytest.approx(0.8)
    assert math.isnan(auc([], [0.1]))
