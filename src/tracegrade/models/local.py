"""The embedded default: a GGUF model run in-process on the CPU with xllamacpp.

One model instance per process and weights file; requests are serialised with
a lock because a single llama.cpp context must never interleave two requests.
A one-token question asked for its token probabilities (every judge question)
may go to ik_llama.cpp instead (models/next_token.py): the same weights and chat
template, its prompt evaluation 1.5x as fast on one AVX2 machine and no faster
on an AVX-512 one. So by default the faster of the two here is used: a short
probe at load, cached per machine (models/runtime_choice.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from tracegrade.core.errors import ModelError, WeightsError
from tracegrade.models import decisions, next_token, runtime_choice
from tracegrade.models.base import ChatOptions, ChatResponse, Message, ModelToolCall
from tracegrade.models.logprobs import top_logprobs
from tracegrade.models.next_token import NextTokenScorer
from tracegrade.models.weights import MODEL_ID, cache_dir, default_model_path

NextToken = bool | Literal["auto"]  # ik_llama.cpp (True), xllamacpp (False), or the faster here
_INSTANCES: dict[Path, "LocalModel"] = {}
_INSTANCES_LOCK = threading.Lock()


def local_model(path: str | None = None) -> "LocalModel":
    """The process-wide model for ``path`` (default: the embedded Qwen weights)."""
    resolved = Path(path).expanduser().resolve() if path else default_model_path()
    if not resolved.is_file():
        raise WeightsError(f"model file not found: {resolved}")
    with _INSTANCES_LOCK:
        if resolved not in _INSTANCES:
            model_id = MODEL_ID if path is None else resolved.stem.lower()
            _INSTANCES[resolved] = LocalModel(resolved, model_id, next_token=next_token_runtime())
        return _INSTANCES[resolved]


def next_token_runtime() -> NextToken:
    """Where one-token questions go: TRACEGRADE_NEXT_TOKEN=ik (True) or xllamacpp (False) forces
    one; unset (or auto), the faster of the two on this machine (``"auto"``, models/runtime_choice.py)."""
    setting = os.environ.get("TRACEGRADE_NEXT_TOKEN", "auto").strip().lower()
    forced: dict[str, NextToken] = {runtime_choice.IK: True, runtime_choice.XLLAMACPP: False}
    return forced.get(setting, "auto")


class LocalModel:
    """llama.cpp behind the ChatModel protocol; tools via constrained JSON decisions."""

    token_probabilities = True  # llama.cpp returns the top tokens of every output position
    # WHY: calls run one at a time (the lock) and each runtime's cache keeps one judge prompt, so the
    # judge asks one answer's questions in a row (models/base.py answer_turn) and each finds its evidence cached.
    one_call_at_a_time = True

    def __init__(self, path: Path, model_id: str, n_ctx: int = 4096, server: Any = None,
                 next_token: NextToken = False) -> None:
        """``server``: an already started ``xllamacpp.Server``, or anything with its
        ``handle_chat_completions(request)`` (a stand-in in tests); default: started on first use.
        ``next_token``: one-token probability questions go to ik_llama.cpp where it loads (True),
        or to whichever of the two evaluates a short prompt faster here (``"auto"``)."""
        self.model_id = model_id
        self.path = path
        self._n_ctx = n_ctx
        self._server: Any = server
        self._lock = threading.Lock()
        self._next_token = bool(next_token)
        self._pick = next_token == "auto"
        self._scorer: NextTokenScorer | None = None

    async def complete(
        self, messages: Sequence[Message], options: ChatOptions = ChatOptions()
    ) -> ChatResponse:
        if self._next_token and _one_token_question(options):
            scorer = await asyncio.to_thread(self._ensure_scorer)
            if scorer is not None:
                return await asyncio.to_thread(self._score_next_token, scorer, messages, options)
        request = self._request(messages, options)
        started = time.perf_counter()
        raw = await asyncio.to_thread(self._call, request)
        latency = time.perf_counter() - started
        text = raw["choices"][0]["message"].get("content") or ""
        usage = raw.get("usage", {})
        tool_calls: tuple[ModelToolCall, ...] = ()
        if options.tools:
            text, tool_calls = decisions.parse_decision(
                text, [t.name for t in options.tools],
                {t.name: list(t.parameters.get("properties", {})) for t in options.tools})
        return ChatResponse(
            text=text.strip(),
            tool_calls=tool_calls,
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=latency,
            model=self.model_id,
            top_logprobs=top_logprobs(raw),
            cached_tokens=int((raw.get("timings") or {}).get("cache_n", 0)),
        )

    def _score_next_token(self, scorer: "NextTokenScorer", messages: Sequence[Message],
                          options: ChatOptions) -> ChatResponse:
        started = time.perf_counter()
        # WHY the model's one lock, not only the scorer's: the agent's turns and the judge's
        # questions share two cores; two runtimes at once would each spin their threads on them.
        chat = [_flattened(message) for message in messages]  # as xllamacpp is sent them
        with self._lock:
            alternatives, evaluated, cached = scorer.top_tokens(chat, options.logprobs)
        return ChatResponse(
            text=alternatives[0][0].strip() if alternatives else "",
            input_tokens=evaluated + cached, output_tokens=1, latency_s=time.perf_counter() - started,
            model=self.model_id, top_logprobs=(alternatives,), cached_tokens=cached,
        )

    def _ensure_scorer(self) -> "NextTokenScorer | None":
        """The ik_llama.cpp runtime, loaded on first use; None (and xllamacpp from then on) where it
        is not installed, the CPU lacks AVX2 (its wheel's build) or the model's template is unknown to it."""
        # WHY the flag stays up while it loads: a question that waits on the lock meanwhile
        # must get the scorer too, not xllamacpp's slightly different probabilities.
        with self._lock:
            if self._scorer is None and self._next_token:
                try:
                    self._scorer = NextTokenScorer(self.path, self._n_ctx, _threads()) if next_token.available() else None
                except (ModelError, OSError, RuntimeError) as exc:
                    warnings.warn(f"ik_llama.cpp did not load {self.path.name} ({exc}); "
                                  "the judge's questions go to xllamacpp", stacklevel=2)
                if self._scorer is not None and self._pick:
                    self._scorer = self._picked(self._scorer)
                self._next_token = self._scorer is not None  # one attempt: a failure falls back for good
            return self._scorer

    def _picked(self, scorer: NextTokenScorer) -> NextTokenScorer | None:
        """``scorer`` when ik_llama.cpp is the faster runtime here, else None (closed); says which
        on stderr. Called with the lock held, once per process; measured once per machine."""
        cache = cache_dir() / runtime_choice.CACHE_FILE
        choice = runtime_choice.choose(lambda: self._probe(scorer), cache, runtime_choice.machine_key())
        print(choice.said(cache), file=sys.stderr)
        if choice.runtime == runtime_choice.IK:
            return scorer
        scorer.close()
        return None

    def _probe(self, scorer: NextTokenScorer) -> dict[str, float]:
        """The best of ``PROBE_ROUNDS`` seconds each runtime takes to evaluate the same short prompt
        in full, after a warm-up each. WHY a system message in both: Qwen's Jinja template adds a default system prompt to
        a chat without one (ik's built-in ChatML does not); xllamacpp is told not to cache."""
        server = self._ensure_server()  # the lock is held: the server is called directly

        def on_ik(chat: list[Message]) -> object:
            return scorer.top_tokens(chat, PROBE_OPTIONS.logprobs)

        def on_xllamacpp(chat: list[Message]) -> object:
            return server.handle_chat_completions({**self._request(chat, PROBE_OPTIONS), "cache_prompt": False})

        runtimes = {runtime_choice.IK: on_ik, runtime_choice.XLLAMACPP: on_xllamacpp}
        for ask in runtimes.values():
            ask(WARM_UP)  # a runtime's first call pays for buffers and threads, not for its speed
        best = dict.fromkeys(runtimes, float("inf"))
        # WHY rounds in turn and the best of each: on a shared machine a burst of other work
        # slows one call, not one runtime (single calls flipped the choice here: issue 35).
        for round_ in range(PROBE_ROUNDS):
            for name, ask in runtimes.items():
                best[name] = min(best[name], _timed(ask, probe_prompt(round_)))
        return best

    def _request(self, messages: Sequence[Message], options: ChatOptions) -> dict[str, Any]:
        schema = options.json_schema
        chat = [_flatten(message) for message in messages]
        if options.tools:
            schema = decisions.decision_schema(options.tools)
            chat = _with_tool_instructions(chat, decisions.decision_instructions(options.tools))
        request: dict[str, Any] = {
            "messages": chat,
            "max_tokens": options.max_tokens,
            "temperature": options.temperature,
            "seed": options.seed,
        }
        if schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            }
        if options.logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = options.logprobs
        return request

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            server = self._ensure_server()
            try:
                raw = server.handle_chat_completions(request)
            except Exception as exc:  # the runtime raises bare RuntimeErrors
                raise ModelError(f"local model call failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(raw, str):
            raw = json.loads(raw)
        if "error" in raw:
            raise ModelError(f"local model call failed: {raw['error']}")
        return dict(raw)

    def _ensure_server(self) -> Any:
        if self._server is None:
            import xllamacpp  # heavy; only when the local model is really used

            params = xllamacpp.CommonParams()
            params.model.path = str(self.path)
            # WHY two slots: llama.cpp gives a request the slot whose cached prompt
            # it most resembles, so the agent's prompts (same rules) and the judge's
            # (same rubric) each keep their prefix warm instead of evicting each other;
            # bench/model/local_model.py measured 15% fewer prompt tokens to evaluate.
            # Requests still run one at a time (the lock); each slot keeps n_ctx.
            params.n_ctx = self._n_ctx * 2
            params.n_batch = 512
            params.n_parallel = 2
            threads = _threads()
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.use_jinja = True
            params.warmup = False
            params.verbosity = -1  # llama.cpp logs every request to stderr otherwise
            # WHY a bound: llama.cpp keeps old prompt states in RAM, up to 8 GiB by
            # default; a 114-case run grew past 4.7 GB RSS. The two slots' own KV
            # caches still reuse the fixed system prompt and rubric.
            params.cache_ram_mib = 256
            self._server = xllamacpp.Server(params)
        return self._server


PROBE_OPTIONS = ChatOptions(max_tokens=1, logprobs=20)
# WHY this size: ~60 prompt tokens, what one judge question adds after the cached evidence
# (40-110), so the probe times the kernels a question uses, in ~0.3-0.6 s a call on a quiet
# 2-core machine where a token took 7-11 ms.
PROBE_ROUNDS = 3
PROBE_QUESTION = Message("user", "QUESTION:\nWhen does the museum open?\n\nANSWER TO JUDGE:\nAt nine, except on "
                         "holidays.\n\nCONTEXT:\nOpen Monday to Friday, 9 am to 6 pm; closed on public holidays.\n\n"
                         "Is the answer supported by the context?")
WARM_UP = [Message("system", "Warm-up."), Message("user", "Ready?")]


def probe_prompt(round_: int) -> list[Message]:
    """The probe's prompt, opening differently each round: ik would take a repeated one from its cache."""
    return [Message("system", f"Check {round_ + 1}. You check one answer of an assistant. Answer with Yes or No."),
            PROBE_QUESTION]


def _timed(ask: Callable[[list[Message]], object], chat: list[Message]) -> float:
    started = time.perf_counter()
    ask(chat)
    return time.perf_counter() - started


def _threads() -> int:
    return int(os.environ.get("TRACEGRADE_THREADS", os.cpu_count() or 2))


def _one_token_question(options: ChatOptions) -> bool:
    """A question answered by the first token's probabilities alone: no tools, no schema, no text."""
    return options.max_tokens == 1 and bool(options.logprobs) and not options.tools and options.json_schema is None


def _flattened(message: Message) -> Message:
    flat = _flatten(message)
    return Message("user" if flat["role"] == "user" else message.role, flat["content"])


def _flatten(message: Message) -> dict[str, str]:
    """Tool traffic as plain text: the model never sees template tool tags."""
    if message.role == "assistant" and message.tool_calls:
        call = message.tool_calls[0]
        return {"role": "assistant", "content": json.dumps({"tool": call.name, "arguments": call.arguments})}
    if message.role == "tool":
        return {"role": "user", "content": _utf8(f"TOOL RESULT ({message.name}): {message.content}")}
    return {"role": message.role, "content": _utf8(message.content)}


def _utf8(text: str) -> str:
    """``text`` as valid UTF-8 and as text only. A reply's lone surrogate becomes "?" instead of
    failing the call (llama.cpp takes UTF-8 only; a case whose judge call fails goes unscored).
    "<|" gets a word joiner: xllamacpp reads "<|im_end|>" in a message as the control token, so
    a reply could end the judge's question and write its answer."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("<|", "<\u2060|")


def _with_tool_instructions(chat: list[dict[str, str]], instructions: str) -> list[dict[str, str]]:
    if chat and chat[0]["role"] == "system":
        return [{"role": "system", "content": chat[0]["content"] + "\n\n" + instructions}, *chat[1:]]
    return [{"role": "system", "content": instructions}, *chat]
