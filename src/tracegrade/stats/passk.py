"""pass^k: the chance that k trials of a task all pass (tau-bench's reliability number).

    >>> pass_hat_k(passed=2, trials=4, k=2)  # C(2, 2) / C(4, 2)
    0.16666666666666666
    >>> pass_hat({"a": (4, 4), "b": (2, 4)})
    {1: 0.75, 2: 0.5833333333333334, 3: 0.5, 4: 0.5}

With c passes in n trials of a task, C(c, k) / C(n, k) is the unbiased estimate
of the chance that k trials drawn from them all pass (pass^1 is the pass rate);
the run's pass^k is its mean over tasks. A trial left unscored (the judge could
not score it, the simulated user failed) is a trial that did not pass: it counts
in n, not in c, as tau-bench counts a trial that ended in an error, so a task
with an unscored trial never reports pass^k = 1. The reports show how many
trials were unscored beside pass^k (report/repeats.py, ``passHatK.unscored``),
so a reader can tell a user model's failures from the agent's.
"""

from __future__ import annotations

from math import comb
from statistics import fmean
from typing import Mapping


def pass_hat_k(passed: int, trials: int, k: int) -> float:
    """C(passed, k) / C(trials, k), for 1 <= k <= trials."""
    return comb(passed, k) / comb(trials, k)


def case_pass_hat(passed: int, trials: int) -> dict[int, float]:
    """pass^1..pass^trials of one task."""
    return {k: pass_hat_k(passed, trials, k) for k in range(1, trials + 1)}


def pass_hat(counts: Mapping[str, tuple[int, int]]) -> dict[int, float]:
    """pass^1..pass^K over tasks of (passes, trials), K the fewest trials of a task.

    WHY the fewest: a mean over the same tasks for every k; a task with no trial says nothing."""
    tried = [(c, n) for c, n in counts.values() if n > 0]
    if not tried:
        return {}
    most = min(n for _, n in tried)
    return {k: fmean(pass_hat_k(c, n, k) for c, n in tried) for k in range(1, most + 1)}
