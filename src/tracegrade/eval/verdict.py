"""The pass rule: every check passes AND every judge score reaches the pass score.

    >>> from tracegrade.core.results import CaseStatus, CheckResult
    >>> from tracegrade.core.results import Scores
    >>> scores = Scores({"relevance": 5, "correctness": 3})
    >>> case_status((CheckResult("source", True),), scores, pass_score=4)
    'fail'
"""

from __future__ import annotations

from typing import Sequence

from tracegrade.core.results import CaseStatus, CheckResult, JudgeOutcome, Scores, Unscored

Status = CaseStatus  # the name the pass rule has always used
DEFAULT_PASS_SCORE = 4


def case_status(checks: Sequence[CheckResult], outcome: JudgeOutcome | None, pass_score: int = DEFAULT_PASS_SCORE) -> Status:
    """``outcome`` None means the judge was skipped on purpose (checks-only run)."""
    if not all(check.passed for check in checks):
        return "fail"
    if isinstance(outcome, Unscored):
        return "unscored"  # never a pass: no evidence the answer is any good
    if isinstance(outcome, Scores) and outcome.lowest() < pass_score:
        return "fail"
    return "pass"
