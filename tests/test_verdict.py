"""The pass rule: every check passes AND every score reaches the pass score."""

from __future__ import annotations

import pytest

from tracegrade.core.results import CheckResult
from tracegrade.core.results import Scores, Unscored
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.eval.verdict import DEFAULT_PASS_SCORE, case_status

PASSING = (CheckResult("answerPresent", True), CheckResult("toolChoice", True))
FAILING = (CheckResult("answerPresent", True), CheckResult("toolArgument", False, "wrong_argument", "ORD-102"))


def scores(**changes: int) -> Scores:
    return Scores({**{m: 5 for m in METRICS}, **changes})


def test_the_default_pass_score_is_4():
    assert DEFAULT_PASS_SCORE == 4


def test_all_checks_and_all_scores_good_pass():
    assert case_status(PASSING, scores()) == "pass"


def test_a_score_equal_to_the_pass_score_passes_one_below_fails():
    assert case_status(PASSING, scores(helpfulness=4)) == "pass"
    assert case_status(PASSING, scores(helpfulness=3)) == "fail"


@pytest.mark.parametrize("metric", METRICS)
def test_any_single_low_metric_fails(metric):
    assert case_status(PASSING, scores(**{metric: 3})) == "fail"


def test_the_pass_score_is_configurable():
    assert case_status(PASSING, scores(correctness=3), pass_score=3) == "pass"
    assert case_status(PASSING, scores(correctness=4), pass_score=5) == "fail"


def test_a_failed_check_fails_even_with_perfect_scores():
    assert case_status(FAILING, scores()) == "fail"


def test_unscored_never_passes():
    assert case_status(PASSING, Unscored("judge reply unusable: not JSON")) == "unscored"


def test_a_failed_check_outranks_unscored():
    # The checks already prove the case wrong; the judge's silence changes nothing.
    assert case_status(FAILING, Unscored("judge reply unusable")) == "fail"


def test_checks_only_run_passes_on_checks_alone():
    assert case_status(PASSING, None) == "pass"
    assert case_status(FAILING, None) == "fail"
    assert case_status((), None) == "pass"
