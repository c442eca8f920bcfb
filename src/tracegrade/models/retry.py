"""Bounded retries with exponential backoff and full jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        return random.uniform(0, ceiling)


class Retryable(Exception):
    """Raised by a call that may succeed if tried again (429, 5xx, timeout, dropped connection)."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


async def with_retries(
    call: Callable[[], Awaitable[T]], policy: RetryPolicy
) -> tuple[T, int]:
    """(result, retries used). The last Retryable propagates when attempts run out."""
    for attempt in range(policy.attempts):
        try:
            return await call(), attempt
        except Retryable as exc:
            if attempt == policy.attempts - 1:
                raise
            await asyncio.sleep(policy.delay(attempt, exc.retry_after_s))
    raise AssertionError("unreachable")


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
