"""The run's last line: what happened to each case, in words that say whose
problem it is, and the exit code that goes with it.

    >>> from tracegrade.core.results import CaseResult, CheckResult
    >>> bad = CheckResult("toolArgument", False, "wrong_argument", "expected ORD-1")
    >>> results = [CaseResult(case_id="a", status="pass", question="q"),
    ...            CaseResult(case_id="b", status="fail", question="q", checks=(bad,)),
    ...            CaseResult(case_id="c", status="unscored", question="q")]
    >>> print(closing("r1", results)[0])
    run r1 finished: 1 of 3 cases passed; 1 failed by the checks, 1 unscored (the judge could not score it: not a verdict on the agent); exit 1: the agent's verdict, not a broken run (make reports it as 'Error 1')

Exit codes: 0 every case passed; 1 a case failed (by the checks or the judge)
or the agent crashed or timed out: the agent's verdict; 2 nothing failed but
some cases could not be scored (the judge's problem, not the agent's: fix the
judge and resume).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from tracegrade.core.results import CaseResult

EXIT_NOT_SCORED = 2


def closing(run_id: str, results: Iterable[CaseResult]) -> tuple[str, int]:
    """(the closing line, the exit code) for a finished run's results."""
    kinds = Counter(_kind(r) for r in results)
    total = sum(kinds.values())
    parts = [f"{kinds[k]} {words}" for k, words in _WORDS if kinds[k]]
    line = f"run {run_id} finished: {kinds['pass']} of {total} cases passed" + (f"; {', '.join(parts)}" if parts else "")
    if kinds["checks"] or kinds["judge"] or kinds["error"]:
        return line + "; exit 1: the agent's verdict, not a broken run (make reports it as 'Error 1')", 1
    if kinds["unscored"]:
        return line + f"; exit {EXIT_NOT_SCORED}: no case failed, but the judge left some unscored", EXIT_NOT_SCORED
    return line, 0


_WORDS = (("checks", "failed by the checks"), ("judge", "failed by the judge"),
          ("error", "agent errors (it crashed or timed out: see each case's error)"),
          ("unscored", "unscored (the judge could not score it: not a verdict on the agent)"))


def _kind(result: CaseResult) -> str:
    if result.status == "fail":
        return "checks" if result.failed_checks() else "judge"
    return result.status
