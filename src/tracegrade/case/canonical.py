"""The bytes a case's content hash and a dataset's version are taken of: they must never change.

    >>> canonical_text({"b": 1, "a": "x"})
    b'{"a": "x", "b": 1}'
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Callable


def content_digest(data: Any) -> str:
    """The SHA-256 of ``data``'s canonical text, in hex."""
    return hashlib.sha256(canonical_text(data)).hexdigest()


def canonical_text(data: Any) -> bytes:
    """``json.dumps(data, sort_keys=True, ensure_ascii=False)`` in UTF-8: the bytes every
    version and content hash is taken of, so they must never change."""
    return _CANONICAL_ENCODER(data)


def _canonical_encoder() -> Callable[[Any], bytes]:
    """What ``canonical_text`` calls: ``json.dumps``'s own C encoder with ``json.dumps``'s
    settings, made once.

    WHY made once: ``json.dumps`` with ``sort_keys`` makes a new encoder (a Python object and
    a C one) at every call, half of the ~5 us a case's text took to write at each load.
    WHY no markers (the check for a value holding itself): what is hashed is a model's dump
    or a list of them, a tree; ``json.dumps`` checks it at every container."""
    settings = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
    if c_make_encoder is None:  # an interpreter without json's C part
        return lambda data: settings.encode(data).encode()
    encode = c_make_encoder(None, settings.default, encode_basestring, settings.indent, settings.key_separator,
                            settings.item_separator, settings.sort_keys, settings.skipkeys, settings.allow_nan)
    return lambda data: "".join(encode(data, 0)).encode()


_CANONICAL_ENCODER = _canonical_encoder()
