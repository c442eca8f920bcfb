"""The shipped rubric cut to some of its metrics, every other word unchanged.

    python bench/judge/rubric_subset.py faithfulness correctness hallucinationFree > bench/judge/judge-rubric-labelled.md

WHY: a metric's value depends only on its own prompt (instructions, its sections
under the same headings, its question) and the metrics it requires, so a rubric
holding only the labelled metrics scores them exactly as the shipped one does,
with fewer model calls per answer (bench/judge/judge_labels.sh on a shared machine).
"""

from __future__ import annotations

import sys

import yaml

from tracegrade.judge.rubric import DEFAULT_RUBRIC


def main(keep: list[str]) -> None:
    text = DEFAULT_RUBRIC.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    data = yaml.safe_load(front)
    data["metrics"] = [m for m in data["metrics"] if m["name"] in keep]
    data["name"] = f"{data.get('name', 'rubric')}-subset"
    sys.stdout.write("---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=200) + "---\n" + body)


if __name__ == "__main__":
    main(sys.argv[1:])
