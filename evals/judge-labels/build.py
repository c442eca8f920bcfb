"""Build the judge's own labelled answers (travel, general knowledge) from the hand-written scenarios.

    python evals/judge-labels/build.py

Labels come from how each answer was written, before any threshold was fitted:
faithfulness is good for ``para`` and ``close`` and bad for ``swap``, ``neg``,
``add`` and ``partial``; correctness is good for ``para`` and ``close``, bad for
``swap``, ``neg`` and ``partial`` (``add`` answers the question rightly and adds
an unsupported detail: not labelled for correctness). Each domain is written twice:
with the reference answer (reference-guided correctness) and without it
(``*-noref.json``: reference-free correctness, the same answers and labels).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import general_items  # noqa: E402
import travel_items  # noqa: E402

KINDS = ("para", "close", "swap", "neg", "add", "partial")
FAITHFUL = {"para": "good", "close": "good", "swap": "bad", "neg": "bad", "add": "bad", "partial": "bad"}
CORRECT = {"para": "good", "close": "good", "swap": "bad", "neg": "bad", "partial": "bad"}
WHY = {"para": "faithful paraphrase in other words", "close": "faithful, in the evidence's words",
       "swap": "reuses the evidence's words with a relation swapped", "neg": "negates or misqualifies the evidence",
       "add": "right, plus a plausible detail the evidence does not give",
       "partial": "one part supported, one contradicted or not given"}
DOMAINS = {"travel": ("a travel assistant's answers over a retrieved policy or guide passage", travel_items),
           "general": ("a general-knowledge assistant's answers over a retrieved encyclopedia passage", general_items)}


def items(domain: str, scenarios: list[dict], with_reference: bool) -> list[dict]:
    out = []
    for s in scenarios:
        for kind in KINDS:
            scores = {"faithfulness": FAITHFUL[kind]}
            if kind in CORRECT:
                scores["correctness"] = CORRECT[kind]
            out.append({
                "id": f"{domain}-{s['id']}-{kind}", "caseId": f"{domain}-{s['id']}", "question": s["q"],
                "goldenAnswer": s["ref"] if with_reference else "", "evidence": {"context": s["ev"]},
                "answer": s[kind], "kind": kind,
                "labels": [{"annotator": "construction", "scores": scores, "rationale": WHY[kind]}],
            })
    return out


def main() -> None:
    for domain, (what, module) in DOMAINS.items():
        for with_reference, suffix in ((True, ""), (False, "-noref")):
            data = {"description": f"Hand-written {what}; labelled by construction (evals/judge-labels/build.py)"
                                   + ("" if with_reference else "; no reference answers (reference-free)"),
                    "items": items(domain, module.SCENARIOS, with_reference)}
            path = HERE / f"{domain}{suffix}.json"
            path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{path}: {len(data['items'])} items")


if __name__ == "__main__":
    main()
