"""ik_llama.cpp's prompt speed with the weights mapped as stored or repacked at load, by prompt length.

    python bench/model/ik_repack.py [--repack] [--flash-attn] [--repeat 5]

Loads the embedded GGUF with ik_llama.cpp (2 threads, as models/next_token.py does),
then evaluates prompts of 14, 40, 100 and 140 tokens (cut from README.md's tokens, the
cache cleared before each) and prints the median milliseconds and tokens a second of
each length, and the load time. Run it once without and once with ``--repack`` (in
turn, nothing else running) to compare the two loads; ``--flash-attn`` turns on flash
attention. WHY not bench/judge/judge_speed.py alone: this times the kernels without the
judge's prompts, cache and Python around them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from tracegrade.models.weights import default_model_path

LENGTHS = (14, 40, 100, 140)


def load(repack: bool, flash_attn: bool) -> tuple[Any, Any, Any]:
    from ik_llama_cpp import _ctypes_api as api
    from ik_llama_cpp._internals import IkContext, IkModel

    from tracegrade.models.next_token import _silence

    _silence(api._lib)

    class Model(IkModel):  # type: ignore[misc]
        def __init__(self, path: str) -> None:
            api.llama_backend_init()
            params = api.llama_model_default_params()
            params.use_mmap, params.repack_tensors = not repack, repack
            self._model = api.llama_model_load_from_file(path.encode(), params)
            self._vocab = api.llama_model_get_vocab(self._model)
            self.n_vocab = api.llama_vocab_n_tokens(self._vocab)

    model = Model(str(default_model_path()))
    return api, model, IkContext(model, n_ctx=4096, n_threads=2, flash_attn=flash_attn)


def evaluate(api: Any, context: Any, tokens: list[int]) -> float:
    from ik_llama_cpp._internals import make_batch_range

    api.llama_kv_cache_clear(context.ctx)
    batch = make_batch_range(tokens, pos_start=0, logits_last=True)
    start = time.perf_counter()
    context.decode(batch)
    seconds = time.perf_counter() - start
    api.llama_batch_free(batch)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repack", action="store_true")
    parser.add_argument("--flash-attn", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    api, model, context = load(args.repack, args.flash_attn)
    print(f"loaded in {time.perf_counter() - start:.2f} s (repack={args.repack}, flash_attn={args.flash_attn})")
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    tokens = model.tokenize(text)
    evaluate(api, context, tokens[:32])  # warm-up
    for length in LENGTHS:
        seconds = statistics.median(evaluate(api, context, tokens[50 * i:50 * i + length]) for i in range(args.repeat))
        print(f"{length:4d} tokens: {seconds * 1000:6.0f} ms, {length / seconds:5.1f} tokens/s")


if __name__ == "__main__":
    main()
