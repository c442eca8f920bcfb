"""The agent's own run-to-run noise: which case verdicts change between runs of
one unchanged setup, so a comparison can say which of its changes are noise.

    >>> from tracegrade.core.results import CaseResult, Manifest, Run
    >>> m = Manifest("r", "d.json", "v1", 2, "t", "m", None, None)
    >>> runs = [Run(m, (CaseResult("a", "pass"), CaseResult("b", "fail"))),
    ...         Run(m, (CaseResult("a", "fail"), CaseResult("b", "fail")))]
    >>> sorted(unstable_cases(runs))
    ['a']
"""

from __future__ import annotations

from typing import Sequence

from tracegrade.core.results import Manifest, Run

# What makes two runs the same experiment: same cases, same agent, same judge.
SETUP = ("dataset", "dataset_version", "target", "agent_model", "prompt_version", "judge_model", "rubric_hash")


def same_setup(a: Manifest, b: Manifest) -> bool:
    return all(getattr(a, field) == getattr(b, field) for field in SETUP)


def unstable_cases(runs: Sequence[Run]) -> set[str]:
    """Case ids whose pass/fail differs between ``runs`` (all of one setup)."""
    seen: dict[str, set[bool]] = {}
    for run in runs:
        for result in run.results:
            seen.setdefault(result.case_id, set()).add(result.passed)
    return {case_id for case_id, outcomes in seen.items() if len(outcomes) > 1}


def noise_note(changed: Sequence[str], unstable: set[str], runs: int) -> str | None:
    """A note naming the changed cases that also changed between ``runs`` runs of one setup."""
    noisy = sorted(set(changed) & unstable)
    if not noisy:
        return None
    return (f"within the agent's own noise: {', '.join(noisy)} also changed verdict between {runs} runs "
            "of the baseline's unchanged setup; treat these changes as noise, not as the candidate's effect")
