"""The judge's figures on its own labels, from `tracegrade calibrate --json` results (bench/judge_labels.sh).

    python bench/judge_labels_table.py bench/results/judge-labels-travel.json evals/judge-labels/travel.json ...

Per metric: cross-validated balanced accuracy and share of good answers failed
first, then AUC of the metric and of each part alone, on all answers and on the
good/bad pairs matched on word overlap; then, per answer kind, the mean value
and the share passing at the metric's threshold. Reads only stored results:
no model call.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from statistics import mean

from tracegrade.judge.labels import load_labels


def main(pairs: list[str]) -> None:
    for result_path, labels_path in zip(pairs[::2], pairs[1::2]):
        result = json.loads(open(result_path).read())
        items = {i.id: i for i in load_labels(labels_path)[0]}
        print(f"## {labels_path} (judge {result['judgeModel']}, rubric {result['rubricHash']})\n")
        print("| metric | good | bad | cv bal.acc | cv good failed | AUC | model | code | overlap | requires "
              "| matched pairs | matched AUC | matched model |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for m in result["metrics"]:
            if not m["good"] or not m["bad"]:
                continue
            p = m.get("partAuc", {})
            print(f"| {m['metric']} | {m['good']} | {m['bad']} | {_f(m['cvBalancedAccuracy'])} | "
                  f"{_f(m['cvFalseFail'])} | {_f(m['auc'])} | {_f(p.get('model'))} | {_f(p.get('code'))} | "
                  f"{_f(p.get('overlap'))} | {_f(p.get('requires'))} | {m.get('matchedPairs', 0)} | "
                  f"{_f(m.get('matchedAuc'))} | {_f(m.get('matchedModelAuc'))} |")
        by_kind: dict[tuple[str, str], list[float]] = defaultdict(list)
        thresholds = {m["metric"]: m["threshold"] for m in result["metrics"]}
        for row in result["items"]:
            kind = items[row["itemId"]].kind
            for metric in row["metrics"]:
                if metric["value"] is not None and metric["name"] in ("faithfulness", "correctness"):
                    by_kind[(metric["name"], kind)].append(metric["value"])
        print("\n| metric | kind | n | mean value | passing at threshold |\n|---|---|---|---|---|")
        for (metric, kind), values in sorted(by_kind.items()):
            passing = sum(v >= thresholds[metric] for v in values) / len(values)
            print(f"| {metric} | {kind} | {len(values)} | {mean(values):.2f} | {passing:.2f} |")
        print()


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


if __name__ == "__main__":
    main(sys.argv[1:])
