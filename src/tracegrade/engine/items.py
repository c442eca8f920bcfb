"""One keyed item as bytes: a flag, an optional SHA-256 digest, a key, then a pickled payload.

    >>> item = pack_item("case-1", None, {"question": "Why?"}, marked=True)
    >>> item_key(item), unpack_item(item)
    ('case-1', (None, True, {'question': 'Why?'}))

The contract: ``pack_item`` makes an item, ``item_key`` reads its key alone, ``unpack_item``
reads the rest. What the payload is, and what the mark means, is the caller's (``case.held``).

WHY the key and digest as plain bytes, not pickled: unpickling them too cost a third of the
read of a case when its job starts, and the key is read alone to find a case.
"""

from __future__ import annotations

import pickle
from typing import Any

_DIGEST_KNOWN, _MARKED = 1, 2  # the flags of an item's first byte


def pack_item(key: str, digest: bytes | None, payload: Any, marked: bool = False) -> bytes:
    """1 byte of flags (digest known, marked), the digest (32 bytes, when known), the key's length
    in bytes (4), the key (UTF-8), then ``payload`` pickled."""
    flags = (0 if digest is None else _DIGEST_KNOWN) | (_MARKED if marked else 0)
    encoded = key.encode()
    return b"".join((flags.to_bytes(1, "little"), digest or b"", len(encoded).to_bytes(4, "little"), encoded,
                     pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)))


def _key_place(item: bytes) -> tuple[int, int]:
    """Where the key of an item starts and ends (the payload follows it)."""
    start = 37 if item[0] & _DIGEST_KNOWN else 5
    return start, start + int.from_bytes(item[start - 4:start], "little")


def item_key(item: bytes) -> str:
    start, end = _key_place(item)
    return item[start:end].decode()


def unpack_item(item: bytes) -> tuple[bytes | None, bool, Any]:
    """The digest (None when not known), whether the item is marked, and the payload."""
    _, end = _key_place(item)
    flags = item[0]
    digest = item[1:33] if flags & _DIGEST_KNOWN else None
    return digest, bool(flags & _MARKED), pickle.loads(memoryview(item)[end:])
