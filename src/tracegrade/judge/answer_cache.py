"""A judge model's answers kept in a file: the same question to the same model is asked once.

    >>> import asyncio, math, tempfile
    >>> from tracegrade.models import ChatOptions, ChatResponse, Message
    >>> from tracegrade.models.scripted import ScriptedModel
    >>> yes = ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.9)), ("No", math.log(0.1))),))
    >>> path = tempfile.mkdtemp() + "/answers.jsonl"
    >>> first = CachedModel(ScriptedModel([yes], token_probabilities=True), path)
    >>> asked = [Message("user", "Is it so?")]
    >>> _ = asyncio.run(first.complete(asked, ChatOptions(max_tokens=1, logprobs=20)))
    >>> again = CachedModel(ScriptedModel([], token_probabilities=True), path)  # no answer left to give
    >>> asyncio.run(again.complete(asked, ChatOptions(max_tokens=1, logprobs=20))).text, again.misses
    ('Yes', 0)

WHY: calibration and the fits behind the shipped weights read the same
labelled answers many times (another rubric, another fit, a cascade's
thresholds); each question costs seconds on the local model, and the answer
to one prompt at temperature 0 does not change. The key is the model id, every
message and the options that shape the answer, so a changed prompt is a new
question. Each answer is one JSON line, appended as it comes: a run stopped
half way keeps what it asked.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from tracegrade.core.errors import ConfigError
from tracegrade.models import ChatModel, ChatOptions, ChatResponse, Message


class CachedModel:
    """``model`` behind a file of its answers (``path``, JSON lines); ``hits`` and ``misses`` count
    the calls answered from the file and by the model, ``evaluated`` the prompt tokens the model
    evaluated for them (not taken from its own prompt cache; a hit counts what it cost when asked)."""

    def __init__(self, model: ChatModel, path: str | Path) -> None:
        self.model = model
        self.model_id = model.model_id
        self.token_probabilities = getattr(model, "token_probabilities", False)
        self.one_call_at_a_time = getattr(model, "one_call_at_a_time", False)
        self.path = Path(path)
        self.hits = self.misses = self.evaluated = 0
        self._lock = threading.Lock()
        self._answers = _read(self.path)

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        key = answer_key(self.model_id, messages, options)
        known = self._answers.get(key)
        if known is not None:
            self.hits += 1
            self.evaluated += known.input_tokens - known.cached_tokens
            return known
        response = await self.model.complete(messages, options)
        self.misses += 1
        self.evaluated += response.input_tokens - response.cached_tokens
        self._keep(key, response)
        return response

    def _keep(self, key: str, response: ChatResponse) -> None:
        if response.tool_calls:  # WHY: only plain answers are kept; a tool call is an agent's turn
            return
        record = {"key": key, **{k: v for k, v in asdict(response).items() if k != "tool_calls"}}
        with self._lock:
            self._answers[key] = response
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def answer_key(model_id: str, messages: Sequence[Message], options: ChatOptions) -> str:
    """What identifies one question: the model, the messages and the options that shape the answer."""
    shaped = {"model": model_id, "messages": [[m.role, m.content] for m in messages],
              "temperature": options.temperature, "maxTokens": options.max_tokens, "seed": options.seed,
              "logprobs": options.logprobs, "schema": options.json_schema, "extra": options.extra,
              "tools": [t.name for t in options.tools]}
    return hashlib.sha256(json.dumps(shaped, sort_keys=True, default=str).encode()).hexdigest()


def _read(path: Path) -> dict[str, ChatResponse]:
    """The answers the file holds; a missing file holds none. WHY a torn last line is skipped:
    a run killed while writing leaves one; every earlier answer is still good."""
    if not path.exists():
        return {}
    answers: dict[str, ChatResponse] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the answer cache: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        try:
            record: dict[str, Any] = json.loads(line)
            key = record.pop("key")
            record["top_logprobs"] = tuple(tuple((str(t), float(p)) for t, p in position)
                                           for position in record.get("top_logprobs", ()))
            answers[key] = ChatResponse(**record)
        except (ValueError, KeyError, TypeError) as exc:
            if number < len(lines):
                raise ConfigError(f"{path}: line {number}: not an answer of the cache ({exc})") from None
    return answers
