"""The run's last line: what happened to each case, in words that say whose
problem it is, and the exit code that goes with it.

    >>> from tracegrade.core.results import CaseResult, CheckResult
    >>> from tracegrade.stats.tally import RunTally
    >>> bad = CheckResult("toolArgument", False, "wrong_argument", "expected ORD-1")
    >>> tally = RunTally()
    >>> for r in [CaseResult(case_id="a", status="pass", question="q"),
    ...           CaseResult(case_id="b", status="fail", question="q", checks=(bad,)),
    ...           CaseResult(case_id="c", status="unscored", question="q")]:
    ...     tally.add(r)
    >>> print(closing("r1", tally)[0])
    run r1 finished: 1 of 3 cases passed; 1 failed by the checks, 1 unscored (not a verdict on the agent: see each case's reason); exit 1: the agent's verdict, not a broken run (make reports it as 'Error 1')

Exit codes: 0 every case passed; 1 a case failed (by the checks or the judge)
or the agent crashed or timed out: the agent's verdict; 2 nothing failed but
some cases could not be scored: the judge could not score them, or their call
checks had no trace to judge (nothing recorded, a cut trace, calls of several
cases mixed): not the agent's verdict; each case's reason names the fix.
"""

from __future__ import annotations

from tracegrade.stats.tally import RunTally

EXIT_NOT_SCORED = 2


def closing(run_id: str, tally: RunTally) -> tuple[str, int]:
    """(the closing line, the exit code) for a finished run, from its tally (WHY
    not the results: the run's one read of them already fed the tally)."""
    statuses = tally.statuses
    kinds = {"pass": statuses["pass"], "checks": tally.failed_by_checks,
             "judge": statuses["fail"] - tally.failed_by_checks, "error": statuses["error"],
             "unscored": statuses["unscored"]}
    total = sum(statuses.values())
    parts = [f"{kinds[k]} {words}" for k, words in _WORDS if kinds[k]]
    line = f"run {run_id} finished: {kinds['pass']} of {total} cases passed" + (f"; {', '.join(parts)}" if parts else "")
    if kinds["checks"] or kinds["judge"] or kinds["error"]:
        return line + "; exit 1: the agent's verdict, not a broken run (make reports it as 'Error 1')", 1
    if kinds["unscored"]:
        return line + f"; exit {EXIT_NOT_SCORED}: no case failed, but some were left unscored (see each case's reason)", EXIT_NOT_SCORED
    return line, 0


_WORDS = (("checks", "failed by the checks"), ("judge", "failed by the judge"),
          ("error", "agent errors (it crashed or timed out: see each case's error)"),
          ("unscored", "unscored (not a verdict on the agent: see each case's reason)"))

