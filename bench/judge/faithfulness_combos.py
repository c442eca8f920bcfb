"""Ways to combine faithfulness's parts, measured on stored judge runs: no model call.

    python bench/judge/faithfulness_combos.py \\
        dialogue=bench/results/judge-labels-dialogue.json:evals/judge-labels/dialogue.json \\
        travel=bench/results/judge-labels-travel.json:evals/judge-labels/travel.json \\
        general=bench/results/judge-labels-general.json:evals/judge-labels/general.json

Each argument is NAME=RESULT:LABELS: a `tracegrade calibrate --json` result and its
label file. From each item's faithfulness ``parts`` (the model's P(yes), the code share
of specific claims found, the word overlap) and its label it prints the AUC (ties count
half: ``judge.agreement.auc``) of each part alone and of several combinations, each
with code's veto (0 when a specific claim is not in the evidence), on every domain's
whole set and on its pairs matched on word overlap (``judge.attribution.matched_pairs``
over the overlap of the answer with question + context + tool results, as calibrate
pairs them). Then a leave-one-domain-out view: the combination best on the other
domains, and how it does on the one left out; and a paired bootstrap of each
combination's difference from the shipped one's on every domain.

WHY no choice is made here: the stored parts come from one model run per domain, and
two of the three domains were built so that overlap misleads; a combination picked as
the best of these on these sets is an optimistic estimate.
Items whose faithfulness was not scored (failed call, n/a) are left out and counted.

``--parts-now [--rubric FILE]``: keep each item's stored P(yes) but recompute the code and
overlap parts with the code checked out now, through ``Judge.score`` on that one item
with a stand-in model that answers the faithfulness question with the stored P(yes).
WHY one item at a time: runs stored by older code carry older code parts, and a lookup
of the item by its answer text inside the prompt (bench/judge/judge_labels_replay.py) finds
the wrong item when an answer in the evidence's words is a substring of the evidence.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
from statistics import mean
from typing import Callable, Mapping, Sequence

from tracegrade.judge.agreement import auc
from tracegrade.judge.attribution import matched_pairs
from tracegrade.judge.labels import LabelledItem, load_labels
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.prompt import section_texts
from tracegrade.judge.rubric import Rubric, load_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel

Parts = Mapping[str, float]
METRIC = "faithfulness"
BOOTSTRAP = 2000


def vetoed(f: Callable[[float, float], float]) -> Callable[[Parts], float]:
    """f(P(yes), overlap), or 0 when code found a specific claim missing (code share < 1)."""
    return lambda p: f(p["model"], p["overlap"]) if p["code"] >= 1.0 else 0.0


COMBOS: dict[str, Callable[[Parts], float]] = {
    "model alone": lambda p: p["model"],
    "overlap alone": lambda p: p["overlap"],
    "code alone": lambda p: p["code"],
    "model+veto": vetoed(lambda m, o: m),
    "overlap+veto": vetoed(lambda m, o: o),
    "round two m*(2+o)/3+veto": vetoed(lambda m, o: m * (2 + o) / 3),
    "m*(1+o)/2+veto": vetoed(lambda m, o: m * (1 + o) / 2),
    "m*o+veto": vetoed(lambda m, o: m * o),
    "sqrt(m*o)+veto": vetoed(lambda m, o: math.sqrt(m * o)),
    "(m+o)/2+veto": vetoed(lambda m, o: (m + o) / 2),
}
SHIPPED = "model+veto"  # the shipped rubric's faithfulness since round three


class Domain:
    """One domain's scored items: (id, verdict, parts, overlap used for pairing)."""

    def __init__(self, name: str, result_path: str, labels_path: str, rubric: Rubric | None = None):
        self.name = name
        result = json.loads(open(result_path, encoding="utf-8").read())
        items, _ = load_labels(labels_path)
        parts = {row["itemId"]: _faithfulness_parts(row) for row in result["items"]}
        if rubric is not None:
            parts = {item.id: parts_now(item, rubric, parts[item.id]["model"]) if parts.get(item.id) else None
                     for item in items}
        self.kinds = {item.id: item.kind or "-" for item in items}
        self.rows: list[tuple[str, str, Parts]] = []
        self.left_out = 0
        overlap = {}
        for item in items:
            verdict, scored = item.verdict(METRIC), parts.get(item.id)
            if verdict not in ("good", "bad"):
                continue
            if not scored:
                self.left_out += 1
                continue
            overlap[item.id] = pairing_overlap(item)
            # WHY: a rubric without `overlap: true` stores no overlap part; the pairing's is the same measure.
            self.rows.append((item.id, verdict, {"overlap": overlap[item.id], **scored}))
        self.pairs = matched_pairs([(i, overlap[i], v) for i, v, _ in self.rows])
        self.result_path, self.labels_path = result_path, labels_path

    def auc_of(self, combo: Callable[[Parts], float], rows: Sequence[tuple[str, str, Parts]] | None = None) -> float:
        rows = self.rows if rows is None else rows
        return auc([combo(p) for _, v, p in rows if v == "good"], [combo(p) for _, v, p in rows if v == "bad"])

    def matched_auc(self, combo: Callable[[Parts], float]) -> float:
        """AUC over the matched pairs' members, as calibrate computes it."""
        by_id = {i: p for i, _, p in self.rows}
        return auc([combo(by_id[g]) for g, _ in self.pairs], [combo(by_id[b]) for _, b in self.pairs])

    def counts(self) -> str:
        good = sum(v == "good" for _, v, _ in self.rows)
        return (f"{self.name}: {good} good, {len(self.rows) - good} bad scored ({self.left_out} not scored), "
                f"{len(self.pairs)} matched pairs; {self.result_path} + {self.labels_path}")


def _faithfulness_parts(row: dict) -> dict[str, float] | None:
    metric = next((m for m in row["metrics"] if m["name"] == METRIC), None)
    if metric is None or metric.get("value") is None:
        return None
    parts = dict(metric.get("parts") or [])
    return parts if {"model", "code"} <= parts.keys() else None


def parts_now(item: LabelledItem, rubric: Rubric, model_p: float) -> dict[str, float] | None:
    """The item's faithfulness parts as the code checked out now computes them, the model's
    answer being the stored P(yes)."""
    question = next(m.yes_no for m in rubric.metrics if m.name == METRIC)
    p = min(max(model_p, 1e-9), 1 - 1e-9)

    def reply(messages, options):
        # WHY 0.5 for any other question: only faithfulness is read here.
        q = p if question in messages[-1].content else 0.5
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(q)), ("No", math.log(1 - q))),))

    judge = Judge(ScriptedModel(reply, model_id="stored", token_probabilities=True), rubric, ask_decided=True)
    outcome = asyncio.run(judge.score(item.case(), item.reply()))
    metric = next((m for m in getattr(outcome, "metrics", ()) if m.name == METRIC), None)
    if metric is None or metric.value is None:
        return None
    # WHY computed here when missing: a rubric without `overlap: true` keeps no overlap part,
    # and the combinations with overlap are still compared.
    return {"overlap": pairing_overlap(item), **dict(metric.parts)}


def pairing_overlap(item: LabelledItem) -> float:
    """The answer's word overlap with what the assistant saw: calibrate's pairing overlap."""
    texts = section_texts(item.case(), item.reply())
    return word_overlap(item.answer, [texts["question"], texts["context"], texts["tools"]])


def bootstrap_difference(domain: Domain, combo: Callable[[Parts], float], base: Callable[[Parts], float],
                         seed: int = 0) -> tuple[float, float]:
    """95% interval of AUC(combo) - AUC(base), items resampled with replacement (paired)."""
    rng = random.Random(seed)
    diffs = []
    for _ in range(BOOTSTRAP):
        sample = [rng.choice(domain.rows) for _ in domain.rows]
        a, b = domain.auc_of(combo, sample), domain.auc_of(base, sample)
        if not (math.isnan(a) or math.isnan(b)):
            diffs.append(a - b)
    diffs.sort()
    return diffs[int(0.025 * len(diffs))], diffs[int(0.975 * len(diffs)) - 1]


def by_kind(domain: Domain) -> list[str]:
    """Per answer kind: its label, count, and the mean of each part and of the shipped value."""
    kinds: dict[tuple[str, str], list[Parts]] = {}
    for i, v, p in domain.rows:
        kinds.setdefault((domain.kinds[i], v), []).append(p)
    lines = [f"  {domain.name}: {'kind':<9}{'label':>6}{'n':>4}{'model':>7}{'overlap':>8}{'code':>6}{'shipped':>8}"
             f"{'vetoed':>7}"]
    for (kind, verdict), ps in sorted(kinds.items(), key=lambda k: (k[0][1] == "bad", k[0][0])):
        lines.append(f"  {'':<{len(domain.name) + 1}} {kind:<9}{verdict:>6}{len(ps):>4}"
                     f"{mean(p['model'] for p in ps):>7.2f}{mean(p['overlap'] for p in ps):>8.2f}"
                     f"{mean(p['code'] for p in ps):>6.2f}{mean(COMBOS[SHIPPED](p) for p in ps):>8.2f}"
                     f"{sum(p['code'] < 1 for p in ps):>7}")
    return lines


def table(domains: Sequence[Domain]) -> list[str]:
    head = f"{'combination':<22}" + "".join(f"{d.name + ' all':>13}{d.name + ' matched':>17}" for d in domains)
    lines = [head + f"{'min all':>9}{'mean all':>10}{'min matched':>13}"]
    for name, combo in COMBOS.items():
        whole = [d.auc_of(combo) for d in domains]
        matched = [d.matched_auc(combo) for d in domains]
        cells = "".join(f"{w:>13.3f}{m:>17.3f}" for w, m in zip(whole, matched))
        lines.append(f"{name:<22}{cells}{min(whole):>9.3f}{mean(whole):>10.3f}{min(matched):>13.3f}")
    return lines


def leave_one_out(domains: Sequence[Domain], key: str) -> list[str]:
    """For each domain left out, the combination with the best mean AUC on the others, and its
    AUC and rank on the one left out. Only the combinations with the veto (the parts alone excluded)."""
    score = {"all": Domain.auc_of, "matched": Domain.matched_auc}[key]
    combos = {n: c for n, c in COMBOS.items() if "+veto" in n}
    lines = []
    for out in domains:
        rest = [d for d in domains if d is not out]
        on_rest = {n: mean(score(d, c) for d in rest) for n, c in combos.items()}
        best = max(on_rest, key=lambda n: on_rest[n])
        on_out = {n: score(out, c) for n, c in combos.items()}
        rank = sorted(on_out.values(), reverse=True).index(on_out[best]) + 1
        lines.append(f"  leave out {out.name:<9} best on the rest ({key}): {best:<22} mean {on_rest[best]:.3f}; "
                     f"on {out.name}: {on_out[best]:.3f} (rank {rank} of {len(combos)}; "
                     f"best there {max(on_out, key=lambda n: on_out[n])} {max(on_out.values()):.3f}; "
                     f"shipped {on_out[SHIPPED]:.3f})")
    return lines


def bootstraps(domains: Sequence[Domain]) -> list[str]:
    lines = [f"paired bootstrap ({BOOTSTRAP} resamples of items, seed 0): 95% interval of AUC(combination) - "
             f"AUC(shipped), whole sets"]
    for name, combo in COMBOS.items():
        if name == SHIPPED:
            continue
        cells = []
        for d in domains:
            low, high = bootstrap_difference(d, combo, COMBOS[SHIPPED])
            cells.append(f"{d.name} {d.auc_of(combo) - d.auc_of(COMBOS[SHIPPED]):+.3f} [{low:+.3f}, {high:+.3f}]")
        lines.append(f"  {name:<22} " + "; ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="+", metavar="NAME=RESULT:LABELS")
    parser.add_argument("--parts-now", action="store_true", help="recompute code and overlap with the code now")
    parser.add_argument("--rubric", help="with --parts-now: the rubric (default the shipped one)")
    args = parser.parse_args()
    rubric = load_rubric(args.rubric) if args.parts_now else None
    domains = []
    for spec in args.domains:
        name, _, paths = spec.partition("=")
        result_path, _, labels_path = paths.partition(":")
        if not (name and result_path and labels_path):
            parser.error(f"{spec!r}: expected NAME=RESULT:LABELS")
        domains.append(Domain(name, result_path, labels_path, rubric))
    print("parts: " + ("stored P(yes); code and overlap recomputed with the code now" if rubric else "as stored"))
    print("\n".join(d.counts() for d in domains))
    print("\nfaithfulness AUC (ties count half); 'matched': over the pairs matched on word overlap (caliper 0.05)")
    print("note: sqrt(m*o) ranks answers exactly as m*o does (a monotone transform): same AUC, other thresholds")
    print("\n".join(table(domains)))
    print("\nleave one domain out (combinations with the veto):")
    print("\n".join(leave_one_out(domains, "all") + leave_one_out(domains, "matched")))
    print()
    print("\n".join(bootstraps(domains)))
    print("\nper answer kind (means; 'vetoed': answers with a specific claim not in the evidence):")
    print("\n".join(line for d in domains for line in by_kind(d)))


if __name__ == "__main__":
    main()
