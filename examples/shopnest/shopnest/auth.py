"""Who is asking: every ``/chat`` request speaks for exactly one customer.

    >>> tokens = CustomerTokens.of({"tok-ann-0123456789": "C-100"})
    >>> tokens.customer_for("tok-ann-0123456789"), tokens.customer_for("guess")
    ('C-100', None)

The model (docs/reliability.md, "Authentication"):

- **Customer mode**, the default and what a deployment runs. Each customer has
  a bearer token of their own. The server keeps only each token's SHA-256, in
  a tokens file (``SHOPNEST_TOKENS_FILE``: one ``CUSTOMER_ID SHA256_HEX`` per
  line; ``shopnest token C-100`` adds one and prints the token once). Every
  request must carry ``Authorization: Bearer TOKEN``, checked before the body
  is read; the customer is the token's. The body cannot name a customer
  (``customerId`` is refused) and cannot inject tool faults (``faults`` is refused).
- **Test mode** (``shopnest serve --test-mode``), for the eval harness only:
  the body names the customer a golden case plays and may inject tool faults.
  It binds loopback only, and with ``SHOPNEST_API_TOKEN`` set every request
  must carry that one shared token.

WHY a digest, not the token: a leaked tokens file must not let anyone in.
WHY a dict lookup by digest is not a timing leak: an attacker who learns how
much of a SHA-256 matched learns nothing about a token that would match.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from tracegrade.core.errors import ConfigError

_LINE = re.compile(r"^(\S{1,64})\s+([0-9a-f]{64})$")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh customer token: 256 random bits, URL-safe."""
    return "snc_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class CustomerTokens:
    """Customer mode: bearer token (by its SHA-256) -> the one customer it speaks for."""

    by_digest: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tokens: Mapping[str, str]) -> CustomerTokens:
        """From plain ``token -> customer id`` (tests, or tokens held in a secret manager)."""
        return cls({digest(token): customer for token, customer in tokens.items()})

    @classmethod
    def from_file(cls, path: str | Path) -> CustomerTokens:
        """Read a tokens file; ConfigError naming the file and line for a bad one."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read the tokens file: {exc}") from None
        by_digest: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            match = _LINE.match(line)
            if not match:
                raise ConfigError(f"{path}: line {number}: expected 'CUSTOMER_ID SHA256_HEX' "
                                  f"(make one with `shopnest token CUSTOMER_ID`)")
            by_digest[match.group(2)] = match.group(1)
        if not by_digest:
            raise ConfigError(f"{path}: no tokens (add one with `shopnest token CUSTOMER_ID`)")
        return cls(by_digest)

    def customer_for(self, token: str) -> str | None:
        return self.by_digest.get(digest(token)) if token else None


@dataclass(frozen=True)
class TestMode:
    """Test mode, for the eval harness: the body names the customer and may inject
    faults. ``token``: one shared bearer token every request must carry, if set."""

    __test__ = False  # not a pytest test class, whatever its name
    token: str | None = None

    def accepts(self, token: str) -> bool:
        # Bytes, because compare_digest rejects non-ASCII str.
        return self.token is None or hmac.compare_digest(token.encode(), self.token.encode())


Auth = CustomerTokens | TestMode


def bearer(authorization: str) -> str:
    """The token in an ``Authorization: Bearer TOKEN`` header, else ''."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def add_token(path: str | Path, customer_id: str) -> str:
    """Mint a token for ``customer_id``, append its digest to the tokens file, return the token."""
    if not re.fullmatch(r"\S{1,64}", customer_id):
        raise ConfigError(f"customer id {customer_id!r}: 1 to 64 characters, no spaces")
    token = new_token()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(f"{customer_id} {digest(token)}\n")
    path.chmod(0o600)
    return token
