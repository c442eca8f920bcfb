"""Rubric variants on the shipped human labels: per metric AUC and same-question pairs ordered.

    python bench/judge/judge_variants.py bench/judge/judge-variants.json [NAME ...] > bench/results/judge-variants.txt

Loads the embedded local model once and, for each rubric in the JSON file (name
-> rubric text), scores all 55 labelled answers with ``Judge(model, rubric)``
and prints, per metric, the AUC of the judge's score for the answers humans
scored good (4-5) against bad (1-2) and how many good/bad pairs of answers to
the same question it ordered right. For correctness and helpfulness it also
prints the number combined with the grounding check (``min(P(yes),
hallucinationFree)``, what ``requires: [hallucinationFree]`` does). It is how
the shipped rubric's wording and order were chosen; a variant picked as the
best of several on the same 55 labels is an optimistic estimate (see
docs/calibration.md). CPU-heavy: minutes per variant on 2 cores.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from tracegrade.judge.agreement import auc
from tracegrade.judge.calibrate import pairs_ordered
from tracegrade.judge.labels import load_labels
from tracegrade.judge.rubric import parse_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models.local import local_model


def measure(values: dict[str, dict[str, float]], items, metric: str, combined: bool) -> str:
    def value(v: dict[str, float]) -> float:
        return min(v[metric], v["hallucinationFree"]) if combined else v[metric]

    rows = [(i, i.verdict(metric), value(values[i.id])) for i in items
            if i.verdict(metric) and metric in values[i.id] and (not combined or "hallucinationFree" in values[i.id])]
    good = [v for _, d, v in rows if d == "good"]
    bad = [v for _, d, v in rows if d == "bad"]
    ordered, pairs = pairs_ordered(rows)
    name = f"{metric}+grounding" if combined else metric
    return f"   {name:24} AUC {auc(good, bad):.3f}  pairs {ordered}/{pairs}  good {len(good)} bad {len(bad)}"


def main() -> None:
    variants = json.loads(open(sys.argv[1], encoding="utf-8").read())
    wanted = sys.argv[2:] or list(variants)
    items, version = load_labels()
    model = local_model()
    print(f"labels {version}, {len(items)} answers; machine nproc={os.cpu_count()}", flush=True)
    for name in wanted:
        rubric = parse_rubric(variants[name], name)
        judge = Judge(model, rubric)
        load, started = os.getloadavg()[0], time.perf_counter()
        values = {}
        for item in items:
            outcome = asyncio.run(judge.score(item.case(), item.reply()))
            values[item.id] = dict(getattr(outcome, "values", {}) or {})
        print(f"{name}: {time.perf_counter() - started:.0f} s, load {load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
        for metric in (m.name for m in rubric.metrics):
            print(measure(values, items, metric, False), flush=True)
            if metric in ("correctness", "helpfulness") and "hallucinationFree" in rubric.headings.keys() | {
                    m.name for m in rubric.metrics}:
                print(measure(values, items, metric, True), flush=True)


if __name__ == "__main__":
    main()
