"""Items that arrive out of order, released in the order of their positions, with a bound on
how many may wait.

    >>> released = []
    >>> line = InOrder(released.append, waiting=2)
    >>> line.put(1, "b"); line.put(0, "a"); released
    ['a', 'b']
    >>> line.put(4, "e"); line.put(3, "d"); list(line.rest()), line.overflowed
    (['d', 'e'], False)
    >>> for position in (9, 8, 7): line.put(position, "late")
    >>> line.overflowed, list(line.rest())
    (True, [])

The contract: ``put(position, item)`` hands every item whose turn has come to ``release``, in
position order (0, 1, 2, ...); ``rest()`` gives those still waiting, in order. Past ``waiting``
items held back (an early position that never arrives: a slow or hung job), ``overflowed`` is
set and nothing more is held: the caller reads the whole some other way, so memory stays
bounded whatever arrives.
"""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class InOrder(Generic[T]):
    def __init__(self, release: Callable[[T], None], waiting: int) -> None:
        self._release, self._limit = release, waiting
        self._waiting: dict[int, T] = {}
        self._next = 0  # the position released next
        self.overflowed = False

    def put(self, position: int, item: T) -> None:
        if self.overflowed:
            return
        self._waiting[position] = item
        while self._next in self._waiting:
            self._release(self._waiting.pop(self._next))
            self._next += 1
        if len(self._waiting) > self._limit:
            self.overflowed, self._waiting = True, {}

    def rest(self) -> Iterator[T]:
        """The items still waiting, in position order (those after a position that never came)."""
        for position in sorted(self._waiting):
            yield self._waiting.pop(position)
