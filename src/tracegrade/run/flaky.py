"""The flaky-case policy: a failed case is re-run, and counts as failed only
when it fails ``k`` of ``n`` attempts.

    >>> policy = FlakyPolicy(k=2, n=3)
    >>> policy.decide(["fail", "pass"]) is None   # undecided: run once more
    True
    >>> policy.decide(["fail", "pass", "pass"])
    'pass'
    >>> policy.decide(["fail", "fail"])
    'fail'

Attempts stop as soon as the outcome is settled, so a case that fails the
first two of 2-of-3 is not run a third time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from tracegrade.core.errors import ConfigError

# Statuses that send a case to another attempt. Unscored is left alone: it is
# the judge's trouble, reported on its own line, not the agent's flakiness.
RETRIED = frozenset({"fail", "error"})


@dataclass(frozen=True)
class FlakyPolicy:
    k: int = 2
    n: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.n:
            raise ConfigError(f"flaky policy {self.k}/{self.n}: need 1 <= k <= n")

    def decide(self, statuses: Sequence[str]) -> Literal["pass", "fail"] | None:
        """'fail' once k attempts failed, 'pass' once that can no longer happen,
        None while another attempt could change the outcome."""
        failures = sum(s in RETRIED for s in statuses)
        if failures >= self.k:
            return "fail"
        if failures + (self.n - len(statuses)) < self.k:
            return "pass"
        return None

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def parse_policy(text: str) -> FlakyPolicy:
    """``"2/3"`` -> FlakyPolicy(2, 3)."""
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit():
        raise ConfigError(f"flaky policy {text!r}: write K/N, e.g. 2/3")
    return FlakyPolicy(int(k), int(n))
