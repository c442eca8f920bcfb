"""Ask the local judge a labels file's questions once, into an answer cache: later fits replay it.

    python bench/judge/judge_fill_cache.py ../shared/judge-labels/faithdial-audit.jsonl \\
        --metrics faithfulness --cache /tmp/tracegrade-judge-answers.jsonl --log /tmp/faithdial-fill.log

Every labelled answer is judged as `tracegrade calibrate` judges it (``ask_decided``:
the model is asked even where code decided), by the shipped rubric cut to
``--metrics``, through ``judge.answer_cache.CachedModel``: an answer already in the
cache costs nothing, a new one is appended as it comes. The answers go in a seeded
random order, so a run stopped early leaves a random sample of the file, not its
first systems. One line per answer on the log: item, model calls, prompt tokens
evaluated (not taken from the model's prompt cache), seconds, each metric's value and
its parts (``faithfulness.model=`` is P(yes)).
Then `tracegrade calibrate --labels FILE --metrics ... --model-cache CACHE` replays them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from tracegrade.judge.answer_cache import CachedModel
from tracegrade.judge.calibrate import ORIGINAL, judge_input
from tracegrade.judge.labels import load_labels
from tracegrade.judge.rubric import load_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import load_model, model_spec


async def fill(args: argparse.Namespace) -> None:
    items = list(load_labels(args.labels)[0])
    random.Random(args.seed).shuffle(items)
    items = items[: args.limit] if args.limit else items
    model = CachedModel(load_model(model_spec("judge", args.judge_model), role="judge"), args.cache)
    rubric = load_rubric(args.rubric)
    judge = Judge(model, rubric.keep(args.metrics.split(",")) if args.metrics else rubric)
    with open(args.log, "a", encoding="utf-8") as log:
        print(f"# {time.strftime('%H:%M:%S')} {len(items)} answers, cache {args.cache} "
              f"({len(model._answers)} answers in it)", file=log, flush=True)
        for done, item in enumerate(items, 1):
            misses, evaluated, started = model.misses, model.evaluated, time.perf_counter()
            judged = await judge_input(item, ORIGINAL, item.answer, judge, 1)
            seconds = time.perf_counter() - started
            values = " ".join(f"{m.name}={m.value:.3f}" if m.value is not None else f"{m.name}=-" for m in judged.metrics)
            parts = " ".join(f"{m.name}.{n}={v!r}" for m in judged.metrics for n, v in m.parts)
            print(f"{done} {item.id} asked={model.misses - misses} tokens={model.evaluated - evaluated} {seconds:.2f}s "
                  f"{values} {parts}", file=log, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--log", default="/dev/stderr")
    parser.add_argument("--metrics", default="", help="comma-separated: the rubric cut to these")
    parser.add_argument("--rubric", help="default: the shipped rubric")
    parser.add_argument("--judge-model")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--limit", type=int, default=0)
    asyncio.run(fill(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
