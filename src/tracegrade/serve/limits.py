"""How long and how much one connection to a tracegrade server may take."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-connection limits; every default is in docs/reliability.md."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    max_connections: int = 1000
    max_header_bytes: int = 16 * 1024  # the request line and headers together

    def __post_init__(self) -> None:
        for name in ("header_timeout_s", "body_timeout_s", "keep_alive_s", "max_connections", "max_header_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be more than 0")
