"""Token probabilities from an OpenAI-style chat completion, for the providers that return them.

    >>> raw = {"choices": [{"logprobs": {"content": [
    ...     {"token": "Yes", "logprob": -0.1, "top_logprobs": [{"token": "Yes", "logprob": -0.1},
    ...                                                        {"token": "No", "logprob": -2.4}]}]}}]}
    >>> top_logprobs(raw)
    ((('Yes', -0.1), ('No', -2.4)),)

llama.cpp's server (the local runtime), OpenAI, vLLM and others answer a request
with ``"logprobs": true, "top_logprobs": N`` in this one shape.
"""

from __future__ import annotations

from typing import Any

from tracegrade.models.base import TokenAlternatives


def top_logprobs(raw: Any) -> tuple[TokenAlternatives, ...]:
    """Per output token, its (token, logprob) alternatives, from an OpenAI-style
    chat completion (a dict or an SDK object); () when the reply carries none."""
    choice = _get(_get(raw, "choices") or [{}], 0)
    content = _get(_get(choice, "logprobs"), "content") or ()
    return tuple(
        tuple((str(_get(alt, "token")), float(_get(alt, "logprob"))) for alt in (_get(position, "top_logprobs") or ()))
        for position in content
    )


def _get(value: Any, key: str | int) -> Any:
    if value is None:
        return None
    if isinstance(key, int):
        return value[key] if len(value) > key else None
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)


