"""The judge on the local model: seconds per answer, prompt tokens evaluated, and what the cache saved.

    python bench/judge/judge_speed.py [--limit N] [--rubric FILE] [--no-cache] [--runtime auto|ik|xllamacpp]
                                [--concurrency N] [--out FILE]

Loads the embedded Qwen GGUF with xllamacpp (one slot, as a judge-only process
would use it) and scores every answer of the shipped human labels with the
judge a run uses (``Judge(model, load_rubric())``), one answer after the other.
Between the judge and the runtime sits a recorder that keeps each call's
llama.cpp timings: prompt tokens evaluated (``prompt_n``), prompt tokens taken
from the KV cache (``cache_n``), generated tokens, and milliseconds.
``--no-cache`` sends ``cache_prompt: false`` with every request, so every
prompt is evaluated in full: the same judge without prefix sharing (xllamacpp
only). ``--runtime`` says where the one-token questions run: ``auto`` (default)
as a run does, on the faster of ik_llama.cpp and xllamacpp here (a short probe,
cached per machine: models/runtime_choice.py), or forced to one of them.
``--concurrency N`` judges N answers at once, as ``tracegrade run`` and
``grade`` do (default 4 there): each call is counted to the answer that made it
(a context variable the model's worker thread inherits); seconds per answer are
then each answer's wait as well, and the wall time over the answers is the
speed to compare.

It reports seconds per answer (p50/p95), also over the answers that were asked
every question (a run leaves out the questions code already decided, which
makes some wrong answers cheaper), and prompt tokens evaluated per answer,
and writes every call. It runs against whatever ``tracegrade`` is on
PYTHONPATH: point it at an older checkout's ``src`` to measure the judge before
a change (only the timings are read, so any judge version works).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tracegrade.judge.labels import load_labels
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models.local import LocalModel
from tracegrade.models.weights import MODEL_ID, default_model_path

ANSWER: contextvars.ContextVar[str] = contextvars.ContextVar("answer", default="")


def start_server() -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(default_model_path())
    params.n_ctx = 4096
    params.n_batch = 512
    params.n_parallel = 1
    threads = int(os.environ.get("TRACEGRADE_THREADS", os.cpu_count() or 2))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.warmup = False
    params.verbosity = -1
    return xllamacpp.Server(params)


class Recorder:
    """Passes requests to the runtime and keeps each call's llama.cpp timings."""

    def __init__(self, server: Any, cache: bool) -> None:
        self.server, self.cache = server, cache
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def handle_chat_completions(self, request: dict[str, Any]) -> Any:
        if not self.cache:
            request = {**request, "cache_prompt": False}
        started = time.perf_counter()
        raw = self.server.handle_chat_completions(request)
        seconds = time.perf_counter() - started
        data = json.loads(raw) if isinstance(raw, str) else raw
        timings = data.get("timings") or {}
        with self._lock:
            self.calls.append({"answer": ANSWER.get(), "seconds": seconds, "promptEvaluated": timings.get("prompt_n"),
                               "promptCached": timings.get("cache_n"), "generated": timings.get("predicted_n"),
                               "promptMs": timings.get("prompt_ms"), "generatedMs": timings.get("predicted_ms"),
                               "promptTokens": (data.get("usage") or {}).get("prompt_tokens")})
        return raw


def record_scorer(model: LocalModel, recorder: Recorder, forced: bool) -> str:
    """Keeps each ik_llama.cpp question's tokens and time in the recorder's calls, as for xllamacpp;
    returns the runtime the questions go to (with --runtime auto, the one the probe picked)."""
    scorer = model._ensure_scorer()
    if scorer is None and forced:
        raise SystemExit("ik_llama.cpp does not load here; run with --runtime xllamacpp")
    if scorer is None:
        return "xllamacpp"
    top_tokens = scorer.top_tokens

    def timed(messages: Any, count: int) -> Any:
        started = time.perf_counter()
        alternatives, evaluated, cached = top_tokens(messages, count)
        seconds = time.perf_counter() - started
        recorder.calls.append({"answer": ANSWER.get(), "seconds": seconds, "promptEvaluated": evaluated,
                               "promptCached": cached,
                               "generated": 1, "promptMs": seconds * 1000, "generatedMs": 0,
                               "promptTokens": evaluated + cached})
        return alternatives, evaluated, cached

    scorer.top_tokens = timed  # type: ignore[method-assign]
    return "ik"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    items, _ = load_labels()
    items = items[: args.limit] if args.limit else items
    recorder = Recorder(start_server(), cache=not args.no_cache)
    setting = {"auto": "auto", "ik": True, "xllamacpp": False}[args.runtime]
    model = LocalModel(default_model_path(), MODEL_ID, server=recorder, next_token=setting)  # type: ignore[arg-type]
    runtime = record_scorer(model, recorder, forced=args.runtime == "ik") if args.runtime != "xllamacpp" else "xllamacpp"
    probe_calls = len(recorder.calls)  # WHY: the probe's xllamacpp calls are no answer's
    judge = Judge(model, load_rubric(args.rubric))
    gate = asyncio.Semaphore(args.concurrency)

    async def judged(item: Any) -> dict[str, Any]:
        async with gate:
            ANSWER.set(item.id)
            started = time.perf_counter()
            outcome = await judge.score(item.case(), item.reply())
            seconds = time.perf_counter() - started
        calls = [c for c in recorder.calls[probe_calls:] if c["answer"] == item.id]
        answer = {"item": item.id, "seconds": seconds, "calls": len(calls),
                  "promptEvaluated": sum(c["promptEvaluated"] or 0 for c in calls),
                  "promptCached": sum(c["promptCached"] or 0 for c in calls),
                  "promptTokens": sum(c["promptTokens"] or 0 for c in calls),
                  "generated": sum(c["generated"] or 0 for c in calls),
                  "scores": dict(getattr(outcome, "values", {}) or {})}
        print(f"  {item.id}: {seconds:.1f} s, {len(calls)} calls, {answer['promptEvaluated']} prompt tokens "
              f"evaluated, {answer['promptCached']} cached", file=sys.stderr, flush=True)
        return answer

    started = time.perf_counter()
    answers = list(await asyncio.gather(*(judged(item) for item in items)))
    wall = time.perf_counter() - started
    # The first answer pays for the system prompt once; the rest show the steady state.
    steady = answers[1:] or answers
    seconds = [a["seconds"] for a in steady]
    evaluated = [a["promptEvaluated"] for a in steady]
    # WHY apart: a run does not ask what code already decided, so a wrong answer may cost
    # fewer calls; the answers asked every question show the cost of a right one.
    most = max(a["calls"] for a in steady)
    full = [a["seconds"] for a in steady if a["calls"] == most]
    print(f"p50 {percentile(seconds, 50):.2f} s per answer, {percentile(evaluated, 50)} prompt tokens evaluated per "
          f"answer (p50; the figure that does not depend on the machine), questions on {runtime}", file=sys.stderr)
    return {
        "answers": len(answers), "cache": not args.no_cache, "runtime": runtime, "setting": args.runtime,
        "concurrency": args.concurrency, "wallSecondsPerAnswer": wall / len(answers),
        "probeCalls": probe_calls,
        "secondsPerAnswer": {"p50": percentile(seconds, 50), "p95": percentile(seconds, 95),
                             "mean": statistics.fmean(seconds)},
        "secondsPerAnswerAskedEverything": {"answers": len(full), "calls": most, "p50": percentile(full, 50),
                                            "p95": percentile(full, 95)},
        "promptEvaluatedPerAnswer": {"p50": percentile(evaluated, 50), "mean": statistics.fmean(evaluated)},
        "promptTokensPerAnswer": statistics.fmean(a["promptTokens"] for a in steady),
        "generatedPerAnswer": statistics.fmean(a["generated"] for a in steady),
        "callsPerAnswer": statistics.fmean(a["calls"] for a in steady),
        "perAnswer": answers, "calls": recorder.calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N labelled answers")
    parser.add_argument("--rubric", type=Path, help="judge rubric (default: the shipped one)")
    parser.add_argument("--no-cache", action="store_true",
                        help="evaluate every prompt in full (cache_prompt false; xllamacpp only)")
    parser.add_argument("--runtime", choices=("auto", "ik", "xllamacpp"), default="auto",
                        help="where the judge's one-token questions run (default auto: the faster here, probed "
                        "once per machine, as a run does)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="answers judged at once (default 1: one after the other; a run judges 4 at once)")
    parser.add_argument("--out", type=Path, help="write the result as JSON")
    args = parser.parse_args()
    load = os.getloadavg()
    result = asyncio.run(run(args))
    result["loadBefore"], result["loadAfter"] = load, os.getloadavg()
    result["command"] = " ".join(["python", *sys.argv])
    summary = {k: v for k, v in result.items() if k not in ("perAnswer", "calls")}
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
