"""The local model through tracegrade: speed against the runtime, latency, prompt caching.

    python bench/model/local_model.py [--questions 6] [--pin-slots] [--out bench/results/local-model.json]
    python bench/model/local_model.py --tokens-only --questions 12   # only the tokens/s comparison

CPU-heavy (minutes on 2 cores): run it once, on a quiet machine. It loads the
embedded Qwen GGUF with xllamacpp and the real ShopNest agent (MiniLM retrieval),
then, for two server layouts,

- ``one slot``   (``n_parallel=1``, LocalModel before this benchmark): agent and
  judge prompts share one KV cache, so each judge call evicts the agent's
  system prompt and back;
- ``two slots``  (``n_parallel=2``, LocalModel now): llama.cpp gives a request the slot whose
  cached prompt it most resembles, so agent prompts (same rules) and judge
  prompts (same rubric) each keep their fixed prefix warm; ``--pin-slots``
  pins them instead (agent slot 0, judge slot 1, with ``id_slot``),

runs the first N golden cases through ``evaluate_case`` (agent, checks, judge)
and records every model call's llama.cpp timings: prompt tokens evaluated,
prompt tokens taken from the cache (``cache_n``), generated tokens and times.
It reports agent seconds per question and judge seconds per call (p50/p95), and
what the cache saved. Last, on the two-slot server, it replays the judge
requests once straight into ``server.handle_chat_completions`` and once through
``LocalModel.complete``, alternating, each after the same warm-up, and compares
generated tokens per second.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ask_questions import cpu_model, load_average, percentile, source_state
from tracegrade.case.dataset import load_dataset
from tracegrade.judge import json_scores
from tracegrade.judge.prompt import evidence_text, section_texts
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models import ChatOptions, Message
from tracegrade.models.local import LocalModel
from tracegrade.models.weights import MODEL_ID, default_model_path
from tracegrade.run.runner import RunSettings, evaluate_case

ROOT = Path(__file__).resolve().parents[2]


def start_server(slots: int) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(default_model_path())
    params.n_ctx = 4096 * slots  # each slot keeps the 4096 tokens the shipped server has
    params.n_batch = 512
    params.n_parallel = slots
    threads = int(os.environ.get("TRACEGRADE_THREADS", os.cpu_count() or 2))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.warmup = False
    params.verbosity = -1
    return xllamacpp.Server(params)


class Recorder:
    """Stands between LocalModel and the runtime: routes a request to its role's
    slot (two-slot layout) and keeps each call's llama.cpp timings."""

    def __init__(self, server: Any, rubric: str, pin: bool) -> None:
        self.server, self.rubric, self.pin = server, rubric, pin
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def role(self, request: dict[str, Any]) -> str:
        return "judge" if request["messages"][0]["content"] == self.rubric else "agent"

    def handle_chat_completions(self, request: dict[str, Any]) -> dict[str, Any]:
        role = self.role(request)
        if self.pin:
            request = {**request, "id_slot": 1 if role == "judge" else 0}
        started = time.perf_counter()
        raw = self.server.handle_chat_completions(request)
        raw = json.loads(raw) if isinstance(raw, str) else raw
        timings = raw.get("timings", {})
        with self._lock:
            self.calls.append({"role": role, "seconds": time.perf_counter() - started, **timings})
        return raw


def json_judge_messages(rubric, case, reply) -> list[Message]:
    """The strict-JSON judge call for one answer (the path of a provider without token
    probabilities): a long generated reply, the right load for a tokens/s comparison."""
    asked = [m for m in rubric.metrics if m.kind != "code"]
    user = f"{evidence_text(rubric.headings, section_texts(case, reply), list(rubric.headings))}\n\n" \
           f"{json_scores.instructions(asked)}"
    return [Message("system", rubric.instructions), Message("user", user)]


async def run_questions(cases, agent_model: LocalModel, judge: Judge, knowledge) -> list[dict]:
    from shopnest.agent import ShopNestAgent

    agent = ShopNestAgent(agent_model, knowledge)
    rows = []
    for case in cases:
        started = time.perf_counter()
        seconds: dict[str, float] = {}

        async def target(c, _started=started):
            reply = await agent.chat(c.question, c.customer_id or "C-100")
            seconds["agent"] = time.perf_counter() - _started
            return reply

        result = await evaluate_case(case, target, judge, RunSettings(timeout_s=900))
        rows.append({"case": case.id, "status": result.status, "agent_s": seconds.get("agent"),
                     "case_s": time.perf_counter() - started, "error": result.error,
                     "judge_messages": json_judge_messages(judge.rubric, case, result.reply)
                     if result.reply is not None else None})
        print(f"  {case.id:<24} {result.status:<8} agent {seconds.get('agent', 0):5.1f} s  "
              f"case {rows[-1]['case_s']:5.1f} s", file=sys.stderr, flush=True)
    return rows


def summarise(layout: str, rows: list[dict], calls: list[dict]) -> dict:
    judge_s = [c["seconds"] for c in calls if c["role"] == "judge"]
    agent_s = [r["agent_s"] for r in rows if r["agent_s"] is not None]
    evaluated = sum(c.get("prompt_n", 0) for c in calls)
    cached = sum(c.get("cache_n", 0) for c in calls)
    prompt_ms = sum(c.get("prompt_ms", 0.0) for c in calls)
    return {
        "layout": layout, "questions": len(rows), "model_calls": len(calls),
        "agent_s_p50": percentile(agent_s, 50), "agent_s_p95": percentile(agent_s, 95),
        "judge_calls": len(judge_s), "judge_s_p50": percentile(judge_s, 50), "judge_s_p95": percentile(judge_s, 95),
        "prompt_tokens_evaluated": evaluated, "prompt_tokens_from_cache": cached,
        "prompt_ms_per_token": prompt_ms / evaluated if evaluated else 0.0,
        "generated_tokens": sum(c.get("predicted_n", 0) for c in calls),
        "model_seconds": sum(c["seconds"] for c in calls), "total_s": sum(r["case_s"] for r in rows),
        "statuses": [r["status"] for r in rows], "errors": [r["error"] for r in rows if r["error"]],
    }


def tokens_per_second(server: Any, model: LocalModel, messages_list: list[list[Message]], pin: bool) -> dict:
    """Generated tokens per second of wall time: the runtime called directly vs through tracegrade."""
    asked = [m for m in load_rubric().metrics if m.kind != "code"]
    options = ChatOptions(json_schema=json_scores.schema(asked), temperature=0.0, max_tokens=200, seed=1)
    direct_tokens = direct_s = via_tokens = via_s = 0.0
    for number, messages in enumerate(messages_list):
        request = model._request(messages, options)  # exactly what LocalModel sends
        if pin:
            request["id_slot"] = 1  # as the recorder pins it
        server.handle_chat_completions(request)  # warm-up: both timed calls then see the same cache

        def direct() -> tuple[int, float]:
            started = time.perf_counter()
            raw = server.handle_chat_completions(request)
            raw = json.loads(raw) if isinstance(raw, str) else raw
            return raw["usage"]["completion_tokens"], time.perf_counter() - started

        def through() -> tuple[int, float]:
            started = time.perf_counter()
            response = asyncio.run(model.complete(messages, options))
            return response.output_tokens, time.perf_counter() - started

        # Alternate which goes first, so neither always follows the other.
        order = (direct, through) if number % 2 == 0 else (through, direct)
        for measure in order:
            tokens, seconds = measure()
            if measure is direct:
                direct_tokens, direct_s = direct_tokens + tokens, direct_s + seconds
            else:
                via_tokens, via_s = via_tokens + tokens, via_s + seconds
    direct_rate, via_rate = direct_tokens / direct_s, via_tokens / via_s
    return {"requests": len(messages_list), "direct_tokens": int(direct_tokens), "direct_s": direct_s,
            "direct_tok_per_s": direct_rate, "tracegrade_tokens": int(via_tokens), "tracegrade_s": via_s,
            "tracegrade_tok_per_s": via_rate, "ratio": via_rate / direct_rate}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6, help="golden cases to run (default 6)")
    parser.add_argument("--dataset", type=Path, default=ROOT / "evals" / "golden-dataset.json")
    parser.add_argument("--tokens-only", action="store_true",
                        help="only compare tokens/s, direct vs through tracegrade, on the first N golden answers")
    parser.add_argument("--pin-slots", action="store_true", help="two slots: pin agent and judge with id_slot")
    parser.add_argument("--out", type=Path, help="write the measurements as JSON here")
    args = parser.parse_args(argv)

    from shopnest.knowledge import KnowledgeBase, load_policies, minilm_embedder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cases = load_dataset(args.dataset).cases[: args.questions]
    rubric = load_rubric()
    knowledge = None if args.tokens_only else KnowledgeBase(load_policies(), minilm_embedder())
    report: dict[str, Any] = {"machine": f"nproc={os.cpu_count()} {cpu_model()}", "source": source_state(),
                              "load_at_start": load_average(), "model": MODEL_ID, "layouts": []}
    if args.tokens_only:
        # Only the speed comparison, on evidence built from each case's golden answer (no agent run).
        from tracegrade.core.trace import Reply

        recorder = Recorder(start_server(2), rubric.instructions, pin=False)
        model = LocalModel(default_model_path(), MODEL_ID, server=recorder)
        messages = [json_judge_messages(rubric, c, Reply(answer=c.golden_answer or "-")) for c in cases]
        report["tokens_per_second"] = tokens_per_second(recorder.server, model, messages, False)
        report["load_at_end"] = load_average()
        print(json.dumps(report, indent=2))
        return 0
    two = "two slots, pinned" if args.pin_slots else "two slots, by similarity"
    for layout, slots in (("one slot", 1), (two, 2)):
        print(f"{layout}:", file=sys.stderr, flush=True)
        recorder = Recorder(start_server(slots), rubric.instructions, pin=args.pin_slots and slots > 1)
        model = LocalModel(default_model_path(), MODEL_ID, server=recorder)
        rows = asyncio.run(run_questions(cases, model, Judge(model, rubric), knowledge))
        report["layouts"].append(summarise(layout, rows, recorder.calls))
        if slots == 2:
            print("tokens/s, direct vs through tracegrade:", file=sys.stderr, flush=True)
            messages = [r["judge_messages"] for r in rows if r["judge_messages"]]
            report["tokens_per_second"] = tokens_per_second(recorder.server, model, messages, recorder.pin)
        del recorder, model
        gc.collect()
    report["load_at_end"] = load_average()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
