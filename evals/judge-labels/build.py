"""Build the judge's own labelled answers (travel, general knowledge, dialogue) from the hand-written scenarios.

    python evals/judge-labels/build.py

Labels come from how each answer was written, before any threshold was fitted:
faithfulness is good for ``para`` and ``close`` and bad for ``swap``, ``neg``,
``add`` and ``partial``; correctness is good for ``para`` and ``close``, bad for
``swap``, ``neg`` and ``partial`` (``add`` answers the question rightly and adds
an unsupported detail: not labelled for correctness). Each domain is written twice:
with the reference answer (reference-guided correctness) and without it
(``*-noref.json``: reference-free correctness, the same answers and labels).

``dialogue.json`` (dialogue_items.py) is built apart: knowledge-grounded chat replies written
the way such replies usually come (not adversarially), a varying number per snippet, no
reference answer, only faithfulness labelled (good for ``restate`` and ``para``; the
labelling rule is in dialogue_items.py's docstring).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import dialogue_items  # noqa: E402
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
DIALOGUE_FAITHFUL = {"restate": "good", "para": "good", "invent": "bad", "personal": "bad", "wrong": "bad",
                     "contra": "bad", "drift": "bad"}
DIALOGUE_WHY = {"restate": "attributable: restates the snippet (chatty framing carries no information)",
                "para": "attributable: paraphrases the snippet",
                "invent": "unattributable: states a fact the snippet does not give",
                "personal": "unattributable: a personal experience or opinion stated as fact",
                "wrong": "unattributable: a wrong number, name or date",
                "contra": "unattributable: contradicts the snippet",
                "drift": "unattributable: drifts to a related topic the snippet does not cover"}


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


def dialogue(snippets: list[dict]) -> list[dict]:
    out = []
    for s in snippets:
        for kind, reply in s["replies"]:
            out.append({
                "id": f"dialogue-{s['id']}-{kind}", "caseId": f"dialogue-{s['id']}", "question": s["q"],
                "goldenAnswer": "", "evidence": {"context": s["ev"]}, "answer": reply, "kind": kind,
                "labels": [{"annotator": "construction", "scores": {"faithfulness": DIALOGUE_FAITHFUL[kind]},
                            "rationale": DIALOGUE_WHY[kind]}],
            })
    return out


def write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path}: {len(data['items'])} items")


def main() -> None:
    for domain, (what, module) in DOMAINS.items():
        for with_reference, suffix in ((True, ""), (False, "-noref")):
            data = {"description": f"Hand-written {what}; labelled by construction (evals/judge-labels/build.py)"
                                   + ("" if with_reference else "; no reference answers (reference-free)"),
                    "items": items(domain, module.SCENARIOS, with_reference)}
            write(HERE / f"{domain}{suffix}.json", data)
    write(HERE / "dialogue.json", {
        "description": "Hand-written knowledge-grounded chat replies over a short encyclopedic snippet, written as such "
                       "replies usually come (not adversarial); faithfulness labelled by construction "
                       "(evals/judge-labels/build.py); no reference answers",
        "items": dialogue(dialogue_items.SNIPPETS)})


if __name__ == "__main__":
    main()
