"""The judge's figures on its own labels, from `tracegrade calibrate --json` results (bench/judge/judge_labels.sh).

    python bench/judge/judge_labels_table.py bench/results/judge-labels-travel.json evals/judge-labels/travel.json ...

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

from tracegrade.judge.agreement import auc
from tracegrade.judge.attribution import matched_pairs, part_aucs
from tracegrade.judge.calibrate import _overlap
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
            rows = _rows(result, items, m["metric"])
            p = part_aucs([(parts, verdict) for _, verdict, _, parts in rows])
            pairs = matched_pairs([(i, _overlap(items[i]), verdict) for i, verdict, _, _ in rows])
            value = {i: v for i, _, v, _ in rows}
            model = {i: parts.get("model") for i, _, _, parts in rows}
            matched = auc([value[g] for g, _ in pairs], [value[b] for _, b in pairs]) if pairs else None
            matched_model = auc([model[g] for g, _ in pairs], [model[b] for _, b in pairs]) \
                if pairs and all(model[g] is not None and model[b] is not None for g, b in pairs) else None
            print(f"| {m['metric']} | {m['good']} | {m['bad']} | {_f(m['cvBalancedAccuracy'])} | "
                  f"{_f(m['cvFalseFail'])} | {_f(m['auc'])} | {_f(p.get('model'))} | {_f(p.get('code'))} | "
                  f"{_f(p.get('overlap'))} | {_f(p.get('requires'))} | {len(pairs)} | "
                  f"{_f(matched)} | {_f(matched_model)} |")
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


def _rows(result: dict, items: dict, metric: str) -> list[tuple[str, str, float, dict[str, float]]]:
    """(item id, verdict, value, parts) of every labelled, scored answer."""
    rows = []
    for row in result["items"]:
        verdict = items[row["itemId"]].verdict(metric)
        score = next((m for m in row["metrics"] if m["name"] == metric and m["value"] is not None), None)
        if verdict in ("good", "bad") and score is not None:
            rows.append((row["itemId"], verdict, score["value"], dict(score.get("parts") or [])))
    return rows


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


if __name__ == "__main__":
    main(sys.argv[1:])
