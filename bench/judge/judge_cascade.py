"""The cascade's figures: how often faithfulness needs the model, its prompt tokens and calls, and its AUC.

    python bench/judge/judge_cascade.py --answers /tmp/tg48-faithdial-parts.log /tmp/tg48-own-fill.log \\
        --before bench/judge/judge-rubric-before-48.md --after src/tracegrade/defaults/judge-rubric.md \\
        faithdial=../shared/judge-labels/faithdial-audit.jsonl:natural \\
        dialogue=evals/judge-labels/dialogue.json:natural \\
        travel=evals/judge-labels/travel.json general=evals/judge-labels/general.json \\
        shopnest=src/tracegrade/defaults/human-labels.json:natural

No model call. Every labelled answer is judged as a run judges it (``Judge.score``, not
calibration's ask-everything), by each rubric, through a stand-in model that answers the
faithfulness question with the P(yes) the local model gave it (the logs of
bench/judge/judge_fill_cache.py) and counts the calls; the prompt tokens of a call are the
ones that question evaluated when the local model was asked it (a cold prompt but for
the system message, one question per answer). Per labelled set and rubric: the share of
answers the model was asked about, model calls and prompt tokens per answer, the AUC
and the AUC on pairs matched on word overlap of the values a run gives. "after, no
cascade" is the after rubric with ``TRACEGRADE_JUDGE_CASCADE=off``.

``--whole LABELS --cache FILE``: every metric of the whole rubric (before, after with and
without the cascade) on those labels, as a run asks them, answered from the answer cache
(a `tracegrade calibrate --model-cache FILE` of those labels filled it): model calls and
prompt tokens evaluated per answer, each call counted at what it cost when it was asked.

``--fit`` fits the after rubric's cascade band on the sets given before ``--held-out``
(``judge.cascade.fit``: the fewest answers asked with every set's AUC within
``--tolerance`` of asking always) and prints the rubric line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from typing import Any, Sequence

from cached_parts import METRIC, SECONDS, Domain, logged, parse_domains

from tracegrade.core.results import Scores
from tracegrade.judge import cascade
from tracegrade.judge.agreement import auc, balanced_accuracy
from tracegrade.judge.rubric import Rubric, load_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatOptions, ChatResponse, Message
from tracegrade.models.scripted import ScriptedModel


def as_run(domain: Domain, rubric: Rubric, use_cascade: bool) -> dict[str, Any]:
    """Each answer judged as a run judges it: its value, whether the model was asked. Prompt tokens
    per answer over the answers whose tokens were measured (> 0). WHY: a set whose P(yes) came from
    an older run has its tokens measured on a random sample (bench/judge/judge_fill_cache.py --limit)."""
    values, asked, tokens, measured = [], 0, 0, 0
    timed = [r for r in domain.rows if r.item.id in SECONDS]
    seconds = 0.0
    for row in domain.rows:
        p = min(max(row.parts["model"], 1e-12), 1 - 1e-12)
        calls: list[int] = []

        def reply(messages: Sequence[Message], options: ChatOptions, p: float = p, calls: list[int] = calls) -> ChatResponse:
            calls.append(1)
            return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))

        judge = Judge(ScriptedModel(reply, token_probabilities=True), rubric.keep([METRIC]), cascade=use_cascade)
        outcome = asyncio.run(judge.score(row.item.case(), row.item.reply()))
        assert isinstance(outcome, Scores) and outcome.metrics[0].value is not None
        values.append((outcome.metrics[0].value, row.good))
        asked += bool(calls)
        if row.tokens > 0:
            measured += 1
            tokens += row.tokens * len(calls)
        if row.item.id in SECONDS:
            seconds += SECONDS[row.item.id] * len(calls)
    n = len(domain.rows)
    by_id = {r.item.id: v for r, (v, _) in zip(domain.rows, values)}
    good, bad = [v for v, g in values if g], [v for v, g in values if not g]
    return {"answers": n, "asked": asked / n, "callsPerAnswer": asked / n,
            "tokensPerAnswer": tokens / measured if measured else math.nan, "tokensMeasuredOn": measured,
            "secondsPerAnswer": seconds / len(timed) if timed else math.nan,
            "promptRate": sum(r.tokens for r in timed) / sum(SECONDS[r.item.id] for r in timed) if timed else math.nan,
            "auc": auc(good, bad), "balancedAccuracy": balanced_accuracy(good, bad, 0.5),
            "matchedAuc": auc([by_id[g] for g, _ in domain.pairs], [by_id[b] for _, b in domain.pairs]),
            "matchedPairs": len(domain.pairs)}


def whole(labels: str, cache: str, rubrics: Sequence[tuple[str, Rubric, bool]]) -> list[dict[str, Any]]:
    """Per rubric: model calls and prompt tokens per answer of every metric, as a run asks them."""
    import cached_parts
    from tracegrade.judge import relevant
    from tracegrade.judge.answer_cache import CachedModel

    relevant.default_rank = cached_parts.DEFAULT_RANK  # WHY: the prompts must be a run's, as the cache's keys are
    items, _ = cached_parts.load_labels(labels)
    results = []
    for label, rubric, on in rubrics:
        refusing = Refusing()
        model = CachedModel(refusing, cache)
        judge = Judge(model, rubric, cascade=on)
        unscored = sum(not isinstance(asyncio.run(judge.score(i.case(), i.reply())), Scores) for i in items)
        results.append({"rubric": label, "answers": len(items), "callsPerAnswer": model.hits / len(items),
                        "tokensPerAnswer": model.evaluated / len(items), "notInCache": refusing.refused,
                        "unscored": unscored})
        print(f"whole rubric, {labels}: {label:<17} {results[-1]['callsPerAnswer']:.2f} calls, "
              f"{results[-1]['tokensPerAnswer']:.1f} prompt tokens evaluated per answer "
              f"({refusing.refused} questions not in the cache)")
    return results


class Refusing:
    """The judge model's id and nothing else: every answer must come from the cache."""

    model_id = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    token_probabilities = True
    refused = 0

    async def complete(self, messages: Sequence[Message], options: ChatOptions = ChatOptions()) -> ChatResponse:
        self.refused += 1
        raise LookupError("not in the answer cache")


def table(domains: Sequence[Domain], before: Rubric, after: Rubric) -> list[dict[str, Any]]:
    print(f"{'set':<10} {'rubric':<17} {'answers':>7} {'asked':>6} {'calls/ans':>9} {'tokens/ans (n)':>13} "
          f"{'AUC':>6} {'bal.acc':>7} {'matched AUC (pairs)':>20}  seconds, the runtime's rate in the same run")
    results = []
    for d in domains:
        for label, rubric, on in (("before", before, True), ("after, no cascade", after, False),
                                  ("after", after, True)):
            r = {"set": d.name, "rubric": label, **as_run(d, rubric, on)}
            results.append(r)
            print(f"{d.name:<10} {label:<17} {r['answers']:>7} {r['asked']:>6.2f} {r['callsPerAnswer']:>9.2f} "
                  f"{r['tokensPerAnswer']:>6.1f} ({r['tokensMeasuredOn']:>4}) {r['auc']:>6.3f} {r['balancedAccuracy']:>7.3f} "
                  f"{r['matchedAuc']:>13.3f} ({r['matchedPairs']:>3})  {r['secondsPerAnswer']:>5.2f} s at "
                  f"{r['promptRate']:.0f} tokens/s")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="+", metavar="NAME=LABELS[:natural]")
    parser.add_argument("--answers", nargs="+", required=True, metavar="LOG")
    parser.add_argument("--before", required=True, help="the rubric before (its faithfulness asked on every answer)")
    parser.add_argument("--after", required=True, help="the rubric after (with its cascade)")
    parser.add_argument("--held-out", nargs="*", default=[], metavar="NAME=LABELS", help="scored, not fitted on")
    parser.add_argument("--fit", action="store_true", help="fit the after rubric's cascade band first")
    parser.add_argument("--tolerance", type=float, default=0.005)
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--whole", metavar="LABELS", help="also: every metric of the rubric on these labels")
    parser.add_argument("--cache", help="the answer cache --whole reads")
    args = parser.parse_args()
    answers = logged(args.answers)
    before, after = load_rubric(args.before), load_rubric(args.after)
    domains = parse_domains(args.domains, after, answers)
    held = parse_domains(args.held_out, after, answers)
    rule = after.metric(METRIC).cascade
    weights = after.metric(METRIC).weights or {}
    if args.fit:
        rule = cascade.fit([d.labelled() for d in domains], weights, args.tolerance)
        print(f"fitted on {', '.join(d.name for d in domains)} (tolerance {args.tolerance}): cascade: "
              f"{{model: {rule['model']}, low: {rule['low']}, high: {rule['high']}}}")
        after = Rubric(after.text, after.instructions, after.headings,
                       tuple(m.model_copy(update={"cascade": rule}) if m.name == METRIC else m for m in after.metrics),
                       after.name, after.known)
    print(f"before: {args.before} (faithfulness weights {before.metric(METRIC).weights}); after: {args.after} "
          f"(weights {weights}, cascade {rule})")
    results = table([*domains, *held], before, after)
    whole_figures = whole(args.whole, args.cache, [("before", before, True), ("after, no cascade", after, False),
                                                   ("after", after, True)]) if args.whole else []
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"rule": rule, "weights": weights, "results": results, "whole": whole_figures}, out, indent=2)


if __name__ == "__main__":
    main()
