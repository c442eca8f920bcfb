"""A fill log written before bench/judge/judge_fill_cache.py logged parts, with each answer's P(yes) added.

    python bench/judge/fill_log_parts.py /tmp/tg48-faithdial-fill.log /tmp/tg48-judge-answers.jsonl > /tmp/tg48-faithdial-parts.log

The answer cache holds the model's answers in the order they were asked; the log's lines
with ``asked=1`` (and the first run's, which a repeated run found in the cache) are in the
same order. Each pair is checked by its prompt tokens (the log's ``tokens=`` against the
cache line's evaluated tokens) before the P(yes) is added as ``faithfulness.model=``.
"""

from __future__ import annotations

import json
import sys

from tracegrade.judge.probability import p_yes


def main(log_path: str, cache_path: str, first_run: int = 3) -> None:
    lines = [line.rstrip("\n") for line in open(log_path, encoding="utf-8") if not line.startswith("#")]
    cache = [json.loads(line) for line in open(cache_path, encoding="utf-8")]
    asked = lines[:first_run] + [line for line in lines[first_run:] if " asked=1 " in line]
    found = {}
    for line, answer in zip(asked, cache):
        tokens = int(line.split()[3].removeprefix("tokens="))
        if tokens != answer["input_tokens"] - answer["cached_tokens"]:
            raise SystemExit(f"{log_path}: {line.split()[1]}: {tokens} tokens, the cache's answer "
                             f"{answer['input_tokens'] - answer['cached_tokens']}: not in the same order")
        found[line.split()[1]] = p_yes(tuple((t, p) for t, p in answer["top_logprobs"][0]))
    for line in lines:
        item = line.split()[1]
        print(f"{line} faithfulness.model={found[item]!r}" if item in found else line)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
