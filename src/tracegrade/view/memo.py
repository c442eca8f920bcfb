"""Values the view computes once per key, however many requests ask at once.

    >>> calls = []
    >>> squares = Memo(size=2)
    >>> squares.get(3, lambda: calls.append(3) or 9), squares.get(3, lambda: calls.append(3) or 9), calls
    (9, 9, [3])

WHY not ``functools.lru_cache``: it does not hold back a second caller while
the first computes, so four requests for the metrics of a 100,000-case run
each read and scored the whole run at once (206 s each instead of ~50 s, and
1.7 GB). Here the first caller of a key computes it and the others wait for
its value; callers of other keys are not held up.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """Each key's value computed once, the last ``size`` keys kept; safe across threads.
    A compute that raises keeps nothing: the next caller tries again."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[Hashable, V] = OrderedDict()
        self._busy: dict[Hashable, threading.Lock] = {}  # a lock per key being computed
        self._lock = threading.Lock()  # guards the two dicts, never held while computing

    def get(self, key: Hashable, compute: Callable[[], V], fresh: Callable[[V], bool] = lambda _: True) -> V:
        """The value kept for ``key`` while ``fresh(value)``, else ``compute()``'s: one
        caller computes, the others wait for it. ``fresh`` runs outside every lock (it may read files)."""
        found = self._kept_value(key)
        if found and fresh(found[0]):
            return found[0]
        with self._lock:
            flight = self._busy.setdefault(key, threading.Lock())
        with flight:
            found = self._kept_value(key)
            if found and fresh(found[0]):
                return found[0]
            try:
                value = compute()
            except BaseException:
                with self._lock:
                    self._busy.pop(key, None)
                raise
            with self._lock:  # kept and no longer busy in one step: no caller in between computes again
                self._kept[key] = value
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
                self._busy.pop(key, None)
            return value

    def _kept_value(self, key: Hashable) -> list[V]:
        """[the value kept for ``key``], or [] (WHY a list: a kept value may itself be None)."""
        with self._lock:
            if key not in self._kept:
                return []
            self._kept.move_to_end(key)
            return [self._kept[key]]
