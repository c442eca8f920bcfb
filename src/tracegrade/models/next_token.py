"""The next token's probabilities of a chat prompt, on ik_llama.cpp: the judge's yes/no questions, faster.

A judge question is one forward pass over the prompt's new tokens and a look at
the last position's distribution; nothing is generated. ik_llama.cpp (a fork of
llama.cpp with its own CPU matrix kernels) evaluated prompt tokens about 1.5x
as fast as the xllamacpp build on one AVX2 CPU (`python bench/judge/judge_speed.py`
with and without `--runtime xllamacpp`) and no faster on an AVX-512 one: which
runtime answers is picked per machine (models/runtime_choice.py).
Only that one-token question runs here: generation, tools and JSON stay on
xllamacpp (models/local.py), which this runtime lacks.

The prompt is the model's own chat template (llama_chat_apply_template) over the
messages, tokenized piece by piece so that a message's text can never become a
control token (a reply holding "<|im_end|>" stays text). The KV cache keeps the
last prompt: the next one evaluates only what follows the prefix they share,
which is how the judge's questions about one answer share its evidence.
"""

from __future__ import annotations

import atexit
import ctypes
import platform
import threading
import weakref
from pathlib import Path
from typing import Any, Sequence

from tracegrade.core.errors import ModelError
from tracegrade.models.base import Message, TokenAlternatives

ROLE_MARK = "\u2063MESSAGE\u2063"  # stands for a message's text while the template is rendered


def available() -> bool:
    """Whether ik_llama.cpp's wheel is installed and can run here: its Linux build needs AVX2,
    and an instruction the CPU lacks would kill the process, not raise."""
    if platform.system() != "Linux" or "avx2" not in _cpu_flags():
        return False
    try:
        import ik_llama_cpp._ctypes_api  # noqa: F401  (loads the shared library)
    except Exception:  # not installed, or its library does not load here
        return False
    return True


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.partition(":")[2].split())


class NextTokenScorer:
    """One model and one context; ``top_tokens`` is serialised by a lock."""

    def __init__(self, path: Path, n_ctx: int = 4096, threads: int = 2) -> None:
        from ik_llama_cpp import _ctypes_api as api
        from ik_llama_cpp._internals import IkContext, IkModel

        self._api = api
        _silence(api._lib)
        self._seq_rm = _bind(api._lib, "llama_kv_cache_seq_rm", [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                                                                 ctypes.c_int32], ctypes.c_bool)
        self._apply = _bind(api._lib, "llama_chat_apply_template",
                            [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_bool, ctypes.c_char_p,
                             ctypes.c_int32], ctypes.c_int32)
        self._model = _repacked_model(IkModel, api, path)
        self._chat_template = _chatml_template(api._lib, self._model.model, path)
        self._context = IkContext(self._model, n_ctx=n_ctx, n_threads=threads, flash_attn=False)
        self._n_ctx, self._n_ubatch = n_ctx, self._context._n_ubatch
        self._n_vocab = int(api.llama_vocab_n_tokens(self._model.vocab))
        self._cached: list[int] = []
        self._lock = threading.Lock()
        _close_at_exit(self)

    def close(self) -> None:
        """Free the context, then the model (idempotent). WHY not left to ``__del__``: at interpreter
        shutdown the library's functions are gone before the objects, and their ``__del__``
        printed "Exception ignored in: IkContext.__del__ ... TypeError" after a run's last line."""
        with self._lock:
            self._context.close()
            self._model.close()
            self._cached = []

    def top_tokens(self, messages: Sequence[Message], count: int) -> tuple[TokenAlternatives, int, int]:
        """The ``count`` likeliest next tokens after the prompt, with their logprobs;
        also the prompt tokens evaluated and those taken from the cache."""
        if not self._context.ctx:  # WHY first: tokenizing with the freed model would crash the process
            raise ModelError("the next-token scorer was closed")
        tokens = self._tokens(messages)
        if not tokens:
            raise ModelError("the prompt is empty")
        if len(tokens) >= self._n_ctx:
            raise ModelError(f"the prompt has {len(tokens)} tokens; the context holds {self._n_ctx}")
        with self._lock:
            kept = self._evaluate(tokens)
            logits = self._context.get_logits(-1)
            return self._best(logits, count), len(tokens) - kept, kept

    def _evaluate(self, tokens: list[int]) -> int:
        """Evaluates what follows the cached prefix; returns how many tokens it kept."""
        from ik_llama_cpp._internals import make_batch_range

        kept = min(_shared_prefix(self._cached, tokens), len(tokens) - 1)
        self._seq_rm(self._context.ctx, 0, kept, -1)
        self._cached = tokens[:kept]
        for start in range(kept, len(tokens), self._n_ubatch):
            chunk = tokens[start:start + self._n_ubatch]
            batch = make_batch_range(chunk, pos_start=start, logits_last=start + len(chunk) == len(tokens))
            status = self._context.decode(batch)
            self._api.llama_batch_free(batch)
            if status != 0:
                self._seq_rm(self._context.ctx, 0, 0, -1)
                self._cached = []
                raise ModelError(f"ik_llama.cpp could not evaluate the prompt (llama_decode returned {status})")
            self._cached = tokens[:start + len(chunk)]
        return kept

    def _best(self, logits: Any, count: int) -> TokenAlternatives:
        import numpy as np

        values = np.ctypeslib.as_array(logits, shape=(self._n_vocab,)).astype(np.float64)
        log_total = values.max() + np.log(np.exp(values - values.max()).sum())
        best = np.argpartition(-values, count)[:count]
        best = best[np.argsort(-values[best])]
        return tuple((self._model.detokenize([int(i)]), float(values[i] - log_total)) for i in best)

    def _tokens(self, messages: Sequence[Message]) -> list[int]:
        """The chat template's control text as control tokens, each message's text as plain text."""
        template = self._template([m.role for m in messages])
        pieces = template.split(ROLE_MARK)
        if len(pieces) != len(messages) + 1:  # a template that drops or repeats a message
            raise ModelError(f"the chat template placed {len(pieces) - 1} of {len(messages)} messages")
        tokens: list[int] = []
        for index, piece in enumerate(pieces):
            tokens += self._model.tokenize(piece, add_bos=False, special=True) if piece else []
            if index < len(messages):
                tokens += self._model.tokenize(messages[index].content, add_bos=False, special=False)
        return tokens

    def _template(self, roles: Sequence[str]) -> str:
        """The model's chat template rendered around a marker for each message's text."""
        class ChatMessage(ctypes.Structure):
            _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]

        chat = (ChatMessage * len(roles))(*[ChatMessage(r.encode(), ROLE_MARK.encode()) for r in roles])
        size = 256 + 64 * len(roles)
        buffer = ctypes.create_string_buffer(size)
        needed = self._apply(self._chat_template, chat, len(roles), True, buffer, size)
        if needed < 0:
            raise ModelError("the model's chat template could not be applied")
        if needed > size:
            buffer = ctypes.create_string_buffer(needed)
            needed = self._apply(self._chat_template, chat, len(roles), True, buffer, needed)
        return buffer.raw[:needed].decode("utf-8", errors="replace")


def _repacked_model(model_class: Any, api: Any, path: Path) -> Any:
    """The model with its weights repacked at load into the layout ik_llama.cpp's CPU kernels
    read fastest (its ``-rtr``): the same weights, summed by other kernels in another order
    (P(yes) moved by up to 0.06, so the shipped calibration is measured on this load).

    WHY: on 2 AVX2 cores a question's prompt tokens went from ~50 to ~70 a second (1.4x;
    1.8x on the short follow-up questions), for ~2 s more at load and the model's ~1 GB
    read into memory rather than mapped (repacking rewrites the weights, which a read-only
    mapping cannot hold): `git show 1b5ab6e:bench/README.md`, "Round seven: the weights repacked at load"."""
    class Repacked(model_class):  # type: ignore[misc]
        def __init__(self) -> None:  # WHY not super().__init__: it offers no repack option
            api.llama_backend_init()
            params = api.llama_model_default_params()
            params.use_mmap, params.repack_tensors, params.n_gpu_layers = False, True, 0
            self._model = api.llama_model_load_from_file(str(path).encode("utf-8"), params)
            if not self._model:
                raise ModelError(f"ik_llama.cpp could not load {path.name}")
            self._vocab = api.llama_model_get_vocab(self._model)
            self.n_vocab = api.llama_vocab_n_tokens(self._vocab)

    return Repacked()


_open_scorers: weakref.WeakSet[NextTokenScorer] = weakref.WeakSet()


def _close_at_exit(scorer: NextTokenScorer) -> None:
    """Close ``scorer`` when the interpreter exits, before its modules are torn down
    (atexit runs first). Registered with the first scorer: importing this module does nothing."""
    if not _open_scorers:
        atexit.unregister(close_all)
        atexit.register(close_all)
    _open_scorers.add(scorer)


def close_all() -> None:
    """Close every scorer still open."""
    for scorer in list(_open_scorers):
        scorer.close()


def _chatml_template(lib: Any, model: Any, path: Path) -> bytes:
    """The model's chat template, when it is ChatML (the embedded Qwen's and its family's).

    WHY ChatML only: this runtime renders a template from its own short list and adds no
    BOS token, where xllamacpp runs the template's Jinja; on ChatML (no BOS) the two give
    the same tokens, which tests/models/test_next_token.py checks. Any other model stays on xllamacpp."""
    template = _bind(lib, "llama_model_chat_template", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_char_p)(model, None)
    if not template or b"<|im_start|>" not in template:
        raise ModelError(f"{path.name}'s chat template is not ChatML")
    return bytes(template)


_LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_DISCARD = _LOG_CALLBACK(lambda level, text, data: None)  # kept alive: the library holds it


def _silence(lib: Any) -> None:
    """llama.cpp logs every tensor of the model to stderr unless told otherwise."""
    _bind(lib, "llama_log_set", [_LOG_CALLBACK, ctypes.c_void_p], None)(_DISCARD, None)


def _shared_prefix(before: Sequence[int], after: Sequence[int]) -> int:
    shared = 0
    for old, new in zip(before, after):
        if old != new:
            break
        shared += 1
    return shared


def _bind(lib: Any, name: str, argtypes: list[Any], restype: Any) -> Any:
    function = getattr(lib, name)
    function.argtypes, function.restype = argtypes, restype
    return function
