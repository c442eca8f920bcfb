"""Faithfulness's parts combined by fit (judge/combine.py), per domain, from stored judge runs: no model call.

    python bench/judge/faithfulness_fit.py --rubric bench/judge/judge-rubric-labelled.md \\
        dialogue=bench/results/judge-labels-dialogue.json:evals/judge-labels/dialogue.json \\
        travel=bench/results/judge-labels-travel.json:evals/judge-labels/travel.json \\
        general=bench/results/judge-labels-general.json:evals/judge-labels/general.json

Each item's parts are the stored P(yes) with the code and overlap parts computed by
the code checked out now (``faithfulness_combos.Domain`` with ``--parts-now``). Per
domain, all cross-validated over 5 folds of whole questions as `tracegrade calibrate`
does (AUC of the held-out values; balanced accuracy at thresholds fitted on the other
folds, at most 0.2 of the good answers failed): each part alone, the shipped value
(P(yes) with code's veto), and the parts fitted within the domain. Then the weights a
shipped rubric would carry: fitted on the three domains pooled (in sample), and each
domain scored by weights fitted on the other two (held out). Both with every part
offered to the fit, and with model and code only.
"""

from __future__ import annotations

import argparse
import math
from typing import Sequence

from faithfulness_combos import COMBOS, SHIPPED, Domain

from tracegrade.judge.agreement import auc
from tracegrade.judge.combine import combined, cross_validate, fit, logistic, part_alone
from tracegrade.judge.labels import load_labels
from tracegrade.judge.rubric import load_rubric

PARTS = ["model", "code", "overlap"]
MAX_FALSE_FAIL = 0.2  # calibrate's default bar
Row = tuple[str, dict[str, float], bool]


def rows_of(domain: Domain) -> list[Row]:
    questions = {i.id: i.case_id for i in load_labels(domain.labels_path)[0]}
    return [(questions[i], dict(p), v == "good") for i, v, p in domain.rows]


def within(name: str, rows: Sequence[Row]) -> list[str]:
    shipped = cross_validate(rows, lambda train: COMBOS[SHIPPED], MAX_FALSE_FAIL)
    lines = [f"{name:<9} {'scored as':<34} {'cv.AUC':>6} {'cv.ba':>6} {'cv.ff':>6}"]
    scorers = [(f"part {n} alone", part_alone(n)) for n in PARTS]
    scorers += [("fitted in domain, model+code", logistic(PARTS[:2])), ("fitted in domain, all parts", logistic(PARTS))]
    for label, learn in scorers:
        o = cross_validate(rows, learn, MAX_FALSE_FAIL)
        lines.append(f"{'':<9} {label:<34} {o.auc:>6.3f} {o.balanced_accuracy:>6.3f} {o.false_fail:>6.3f}")
    lines.append(f"{'':<9} {'shipped (P(yes), code veto)':<34} {shipped.auc:>6.3f} {shipped.balanced_accuracy:>6.3f} "
                 f"{shipped.false_fail:>6.3f}")
    return lines


def auc_under(weights: dict[str, float], rows: Sequence[Row]) -> float:
    values = [(combined(weights, p), g) for _, p, g in rows]
    return auc([v for v, g in values if g], [v for v, g in values if not g])


def across(domains: dict[str, list[Row]], names: Sequence[str]) -> list[str]:
    pooled = fit([(p, g) for rows in domains.values() for _, p, g in rows], names)
    shown = ", ".join(f"{k} {v:.2f}" for k, v in pooled.items())
    lines = [f"offered {'+'.join(names)}; pooled weights: {shown}"]
    for name, rows in domains.items():
        others = fit([(p, g) for other, r in domains.items() if other != name for _, p, g in r], names)
        shipped = auc([COMBOS[SHIPPED](p) for _, p, g in rows if g], [COMBOS[SHIPPED](p) for _, p, g in rows if not g])
        inside, held = auc_under(pooled, rows), auc_under(others, rows)
        lines.append(f"  {name:<9} shipped {shipped:.3f}  pooled (in sample) {inside:.3f} ({inside - shipped:+.3f})  "
                     f"held out {held:.3f} ({held - shipped:+.3f}; weights "
                     + ", ".join(f"{k} {v:.2f}" for k, v in others.items()) + ")")
    return lines


def overlap_scan(domains: dict[str, Domain], steps: Sequence[float]) -> list[str]:
    """The pooled model+code weights with the overlap part added at a fixed weight (scaled to the
    model's): each domain's AUC and matched-pairs AUC per step. WHY: public natural replies rank
    by overlap far better than our dialogue set shows; this is the price of leaning on it."""
    rows = {n: rows_of(d) for n, d in domains.items()}
    pooled = fit([(p, g) for r in rows.values() for _, p, g in r], PARTS[:2])
    lines = ["overlap weight as a share of the model's (pooled model+code: "
             + ", ".join(f"{k} {v:.2f}" for k, v in pooled.items()) + "); AUC / matched AUC"]
    lines.append(f"{'share':>6} " + "".join(f"{n:>18}" for n in domains))
    for share in steps:
        weights = {**pooled, "overlap": share * pooled["model"]}
        weights["bias"] = balanced_bias(weights, [(p, g) for r in rows.values() for _, p, g in r])
        cells = "".join(f"{d.auc_of(lambda p: combined(weights, p)):>10.3f} / "
                        f"{d.matched_auc(lambda p: combined(weights, p)):.3f}" for d in domains.values())
        lines.append(f"{share:>6.3f} {cells}   bias {weights['bias']:.2f}, overlap {weights['overlap']:.2f}")
    return lines


def balanced_bias(weights: dict[str, float], rows: Sequence[tuple[dict[str, float], bool]]) -> float:
    """The bias that minimises the class-balanced log loss with the other weights fixed (as
    ``combine.fit`` weighs the classes), so 0.5 stays the point where good and bad are alike."""
    grid = [b / 100 for b in range(-2000, 501)]
    def loss(bias: float) -> float:
        w = {**weights, "bias": bias}
        total = {True: 0.0, False: 0.0}
        for parts, good in rows:
            v = min(max(combined(w, parts), 1e-12), 1 - 1e-12)
            total[good] -= math.log(v if good else 1 - v)
        counts = {g: sum(1 for _, x in rows if x == g) or 1 for g in (True, False)}
        return total[True] / counts[True] + total[False] / counts[False]
    return min(grid, key=loss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="+", metavar="NAME=RESULT:LABELS")
    parser.add_argument("--rubric", help="the rubric the parts are computed with (default the shipped one)")
    parser.add_argument("--overlap-scan", action="store_true", help="also: the overlap part added at fixed weights")
    args = parser.parse_args()
    rubric = load_rubric(args.rubric)
    loaded = {}
    for spec in args.domains:
        name, _, paths = spec.partition("=")
        result_path, _, labels_path = paths.partition(":")
        loaded[name] = Domain(name, result_path, labels_path, rubric)
    domains = {name: rows_of(domain) for name, domain in loaded.items()}
    print("per domain, 5-fold cross-validated over whole questions (balanced accuracy and good failed at "
          f"thresholds fitted on the other folds, at most {MAX_FALSE_FAIL} good failed)")
    for name, rows in domains.items():
        print("\n".join(within(name, rows)))
    print("\nweights for a shipped rubric: fitted on every domain (in sample), and each domain scored by weights "
          "fitted on the other two (held out); AUC, against the shipped value's")
    for names in (PARTS, PARTS[:2]):
        print("\n".join(across(domains, names)))
    if args.overlap_scan:
        print("\n".join(overlap_scan(loaded, [0.0, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0])))


if __name__ == "__main__":
    main()
