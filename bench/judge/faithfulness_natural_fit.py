"""Faithfulness's weights fitted with public natural replies beside the project's own labelled sets.

    python bench/judge/faithfulness_natural_fit.py --answers /tmp/tg48-faithdial-parts.log /tmp/tg48-own-fill.log \\
        faithdial=../shared/judge-labels/faithdial-audit.jsonl:natural \\
        dialogue=evals/judge-labels/dialogue.json:natural \\
        travel=evals/judge-labels/travel.json general=evals/judge-labels/general.json \\
        --held-out shopnest=src/tracegrade/defaults/human-labels.json

No model call: every answer's P(yes) comes from the logs of bench/judge/judge_fill_cache.py
(the shipped faithfulness question, as a run asks it), its code and overlap parts from
the code checked out now (bench/judge/cached_parts.py).

The rule (issue 48): on every natural domain the value is at least its best single
part's AUC; on every constructed one at most 0.05 under its best part. Candidates:
the rubric's weights now, and fits on the domains pooled with the constructed sets
weighed ``c`` of a natural one (c = 0: natural replies alone), each natural domain
weighed alike whatever its size. For each: AUC per domain, in sample, and on the public
natural labels held out by whole systems and by whole benchmarks (the weights fitted
without that system or benchmark). The weights shipped: the candidate that meets the
rule; if none does, the one that loses least on natural replies (the largest worst
margin over the best part on a natural domain), and what it misses on each constructed
set said. ``--held-out`` domains (ShopNest's
labels) are scored, never fitted on.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy.stats import rankdata

from cached_parts import PARTS, Domain, logged, parse_domains

from tracegrade.judge.agreement import auc
from tracegrade.judge.combine import combined, fit
from tracegrade.judge.rubric import load_rubric

NAMES = list(PARTS)
CONSTRUCTED_SLACK = 0.05
SHARES = (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0)
BENCHMARK = {"topicalchat": "topical"}  # one benchmark, spelled two ways in the audit's ids

Weights = Mapping[str, float]


def auc_of(domain: Domain, score: Callable[[Mapping[str, float]], float]) -> float:
    values = [(score(r.parts), r.good) for r in domain.rows]
    return auc([v for v, g in values if g], [v for v, g in values if not g])


def matched_auc(domain: Domain, score: Callable[[Mapping[str, float]], float]) -> float:
    by_id = {r.item.id: r.parts for r in domain.rows}
    return auc([score(by_id[g]) for g, _ in domain.pairs], [score(by_id[b]) for _, b in domain.pairs])


def best_part(domain: Domain) -> tuple[str, float]:
    return max(((n, auc_of(domain, lambda p, n=n: p[n])) for n in NAMES), key=lambda x: x[1])


def pooled_fit(domains: Sequence[Domain], constructed: float, exclude: Callable[[str], bool] = lambda g: False,
               only: str = "") -> dict[str, float]:
    """Weights fitted on every domain (or the one named ``only``), each natural domain weighed 1 in
    all, each constructed one ``constructed`` (0: left out)."""
    rows, weights = [], []
    for d in domains:
        kept = [r for r in d.rows if not (d.name == "faithdial" and exclude(r.group))]
        share = (1.0 if d.natural else constructed) if not only else float(d.name == only)
        if not kept or share == 0:
            continue
        rows += [(r.parts, r.good) for r in kept]
        weights += [share / len(kept)] * len(kept)
    return fit(rows, NAMES, row_weights=weights)


Learn = Callable[[Sequence[Domain], Callable[[str], bool]], dict[str, float]]


def held_out(domains: Sequence[Domain], learn: Learn, key: Callable[[str], str]) -> float:
    """AUC on the public natural labels, each group (system or benchmark) scored by weights
    learned without it, the held-out values pooled."""
    public = next(d for d in domains if d.name == "faithdial")
    values: list[tuple[float, bool]] = []
    for group in sorted({key(r.group) for r in public.rows}):
        w = learn(domains, lambda g, group=group: key(g) == group)
        values += [(combined(w, r.parts), r.good) for r in public.rows if key(r.group) == group]
    return auc([v for v, g in values if g], [v for v, g in values if not g])


def fast_auc(values: np.ndarray, good: np.ndarray) -> float:
    ranks = rankdata(values)
    n_good = int(good.sum())
    return float((ranks[good].sum() - n_good * (n_good + 1) / 2) / (n_good * (len(values) - n_good)))


def searched(domains: Sequence[Domain], exclude: Callable[[str], bool] = lambda g: False,
             step: float = 0.02) -> dict[str, float]:
    """The weights the rule itself picks: AUC depends only on the direction of (model, code, overlap)'s
    weights, so every direction on a grid of the simplex is scored; among those whose AUC on every
    natural domain reaches its best part's, the one with the largest worst constructed margin (ties:
    the larger worst natural margin); none reaching it: the largest worst natural margin. Then the
    scale and bias fitted (class-balanced, natural domains) on that one direction, so 0.5 is even odds."""
    data = []
    for d in domains:
        kept = [r for r in d.rows if not (d.name == "faithdial" and exclude(r.group))]
        x = np.array([[r.parts[n] for n in NAMES] for r in kept])
        good = np.array([r.good for r in kept])
        best = max(fast_auc(x[:, i], good) for i in range(len(NAMES)))
        data.append((d, x, good, best))
    grid = [(a, b, 1 - a - b) for a in np.arange(0, 1 + 1e-9, step) for b in np.arange(0, 1 - a + 1e-9, step)]
    scored = []
    for w in grid:
        nat, built = math.inf, math.inf
        for d, x, good, best in data:
            margin = fast_auc(x @ np.array(w), good) - best
            if d.natural:
                nat = min(nat, margin)
            else:
                built = min(built, margin + CONSTRUCTED_SLACK)
        scored.append((nat >= 0, built if nat >= 0 else nat, nat, w))
    _, _, _, w = max(scored, key=lambda s: (s[0], s[1], s[2]))
    direction = {n: float(v) for n, v in zip(NAMES, w)}
    rows, row_weights = [], []
    for d, x, good, _ in data:
        if d.natural:
            rows += [({"s": float(v @ np.array(w))}, bool(g)) for v, g in zip(x, good)]
            row_weights += [1.0 / len(x)] * len(x)
    scale = fit(rows, ["s"], row_weights=row_weights)
    return {"bias": scale["bias"], **{n: scale["s"] * v for n, v in direction.items()}}


def system(group: str) -> str:
    return group.split("/")[0]


def benchmark(group: str) -> str:
    b = group.split("/")[1]
    return BENCHMARK.get(b, b)


def verdict(domains: Sequence[Domain], w: Weights) -> tuple[float, float]:
    """(the worst natural margin over its best part, the worst constructed margin over best part - slack)."""
    natural = [auc_of(d, lambda p: combined(w, p)) - best_part(d)[1] for d in domains if d.natural]
    built = [auc_of(d, lambda p: combined(w, p)) - best_part(d)[1] + CONSTRUCTED_SLACK
             for d in domains if not d.natural]
    return min(natural, default=math.inf), min(built, default=math.inf)


def report(domains: Sequence[Domain], extra: Sequence[Domain], rubric_weights: Weights) -> dict[str, object]:
    every = [*domains, *extra]
    for d in every:
        good = sum(r.good for r in d.rows)
        print(f"{d.name:<10} {'natural' if d.natural else 'constructed' if d in domains else 'held out'}: "
              f"{good} good / {len(d.rows) - good} bad, {d.missing} not in the cache, {len(d.pairs)} matched pairs")
    print("\neach part alone, AUC (matched pairs):")
    for d in every:
        print(f"  {d.name:<10} " + "  ".join(f"{n} {auc_of(d, lambda p, n=n: p[n]):.3f} "
                                             f"({matched_auc(d, lambda p, n=n: p[n]):.3f})" for n in NAMES))
    candidates: list[tuple[str, dict[str, float], Learn | None]] = [("rubric now", dict(rubric_weights), None)]
    candidates += [(f"fit c={c:g}", pooled_fit(domains, c), lambda ds, ex, c=c: pooled_fit(ds, c, ex)) for c in SHARES]
    candidates.append(("public only", pooled_fit(domains, 0, only="faithdial"),
                       lambda ds, ex: pooled_fit(ds, 0, ex, only="faithdial")))
    candidates.append(("searched", searched(domains), searched))
    print("\ncandidates: AUC per domain (in sample); natural margin over the best part; constructed margin over "
          f"the best part - {CONSTRUCTED_SLACK}; public labels held out by system / by benchmark")
    rows = []
    for label, w, learn in candidates:
        nat, built = verdict(domains, w)
        cells = "  ".join(f"{d.name} {auc_of(d, lambda p: combined(w, p)):.3f}" for d in every)
        by_system = held_out(domains, learn, system) if learn is not None else math.nan
        by_bench = held_out(domains, learn, benchmark) if learn is not None else math.nan
        print(f"  {label:<12} {cells}  natural {nat:+.3f} constructed {built:+.3f}  held out {by_system:.3f} / "
              f"{by_bench:.3f}  weights " + ", ".join(f"{k} {v:.2f}" for k, v in w.items()))
        rows.append({"candidate": label, "weights": w, "natural": nat, "constructed": built,
                     "heldOutBySystem": by_system, "heldOutByBenchmark": by_bench})
    fitted = [r for r in rows if r["candidate"] != "rubric now"]
    meets = [r for r in fitted if r["natural"] >= 0 and r["constructed"] >= 0]
    if meets:
        chosen, why = max(meets, key=lambda r: r["natural"]), "meets both halves of the rule"
    else:  # WHY natural first: most users' answers are natural replies (issue 48)
        chosen = max(fitted, key=lambda r: r["natural"])
        misses = [f"{d.name} by {best_part(d)[1] - CONSTRUCTED_SLACK - auc_of(d, lambda p: combined(chosen['weights'], p)):.3f}"
                  for d in domains if not d.natural]
        why = (f"no candidate meets both halves; this one loses least on natural replies (margin "
               f"{chosen['natural']:+.3f}) and misses the constructed half on {', '.join(misses)}")
    print(f"\nchosen: {chosen['candidate']} ({why})")
    return {"chosen": chosen, "why": why, "candidates": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="+", metavar="NAME=LABELS[:natural]")
    parser.add_argument("--answers", nargs="+", required=True, metavar="LOG", help="bench/judge/judge_fill_cache.py logs")
    parser.add_argument("--held-out", nargs="*", default=[], metavar="NAME=LABELS")
    parser.add_argument("--rubric", help="the rubric whose weights are 'now' (default: the shipped one)")
    parser.add_argument("--json", help="also write the candidates and the choice here")
    args = parser.parse_args()
    rubric = load_rubric(args.rubric)
    answers = logged(args.answers)
    domains = parse_domains(args.domains, rubric, answers)
    extra = parse_domains(args.held_out, rubric, answers)
    result = report(domains, extra, rubric.metric("faithfulness").weights or {})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
