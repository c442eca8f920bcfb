"""The pass rule: every check passes AND every gating metric reaches its own threshold."""

from __future__ import annotations

import pytest

from tracegrade.core.results import CheckResult, MetricScore, Scores, Unscored
from tracegrade.core.verdict import case_status, failing_metrics

PASSING = (CheckResult("answerPresent", True), CheckResult("toolChoice", True))
FAILING = (CheckResult("answerPresent", True), CheckResult("toolArgument", False, "wrong_argument", "ORD-102"))


def yes_no(name: str, value: float | None, threshold: float = 0.5, **rest) -> MetricScore:
    return MetricScore(name, value, threshold, "probability", **rest)


def scale(name: str, value: float | None, threshold: float = 4.0) -> MetricScore:
    return MetricScore(name, value, threshold, "json", low=1.0, high=5.0)


def scores(*metrics: MetricScore) -> Scores:
    return Scores(metrics)


GOOD = (yes_no("relevance", 0.9), yes_no("correctness", 0.8), MetricScore("faithfulness", 1.0, 1.0, "code"),
        scale("tone", 4.0))


def test_every_metric_at_or_above_its_threshold_passes():
    assert case_status(PASSING, scores(*GOOD)) == "pass"


@pytest.mark.parametrize("low", [yes_no("correctness", 0.49), MetricScore("faithfulness", 0.0, 1.0, "code"),
                                 scale("tone", 3.9)])
def test_any_metric_below_its_own_threshold_fails(low):
    metrics = tuple(low if m.name == low.name else m for m in GOOD)
    assert case_status(PASSING, scores(*metrics)) == "fail"
    assert [m.name for m in failing_metrics(metrics)] == [low.name]


def test_a_value_equal_to_the_threshold_passes():
    assert case_status(PASSING, scores(yes_no("correctness", 0.5))) == "pass"


def test_a_metric_that_may_not_gate_is_shown_but_decides_nothing():
    informational = yes_no("relevance", 0.1, gates=False)
    assert case_status(PASSING, scores(informational, yes_no("correctness", 0.9))) == "pass"
    assert failing_metrics((informational,)) == []


def test_pass_score_replaces_only_the_threshold_of_1_to_5_scale_metrics():
    metrics = (scale("tone", 3.0), yes_no("correctness", 0.6))
    assert case_status(PASSING, scores(*metrics)) == "fail"
    assert case_status(PASSING, scores(*metrics), pass_score=3) == "pass"
    assert case_status(PASSING, scores(scale("tone", 4.0), yes_no("correctness", 0.6)), pass_score=5) == "fail"
    assert case_status(PASSING, scores(yes_no("correctness", 0.6)), pass_score=5) == "pass"  # not a scale


def test_a_not_scored_metric_is_skipped_by_default_and_the_rest_decides():
    missing = yes_no("correctness", None, detail="not scored: the case has no reference answer")
    assert case_status(PASSING, scores(missing, yes_no("relevance", 0.9))) == "pass"
    assert case_status(PASSING, scores(missing, yes_no("relevance", 0.1))) == "fail"


@pytest.mark.parametrize("rule, status", [("fail", "fail"), ("unscored", "unscored"), ("skip", "pass")])
def test_a_not_scored_metric_follows_its_rule(rule, status):
    missing = yes_no("correctness", None, if_not_scored=rule)
    assert case_status(PASSING, scores(missing, yes_no("relevance", 0.9))) == status


def test_a_low_metric_outranks_a_not_scored_one_marked_unscored():
    missing = yes_no("correctness", None, if_not_scored="unscored")
    assert case_status(PASSING, scores(missing, yes_no("relevance", 0.1))) == "fail"


def test_nothing_scored_at_all_is_unscored_never_a_pass():
    assert case_status(PASSING, scores(yes_no("correctness", None), yes_no("relevance", None))) == "unscored"
    assert case_status(PASSING, Unscored("judge reply unusable: not JSON")) == "unscored"


def test_a_failed_check_fails_even_with_perfect_scores_and_outranks_unscored():
    assert case_status(FAILING, scores(*GOOD)) == "fail"
    # The checks already prove the case wrong; the judge's silence changes nothing.
    assert case_status(FAILING, Unscored("judge reply unusable")) == "fail"


def test_checks_only_run_passes_on_checks_alone():
    assert case_status(PASSING, None) == "pass"
    assert case_status(FAILING, None) == "fail"
    assert case_status((), None) == "pass"
