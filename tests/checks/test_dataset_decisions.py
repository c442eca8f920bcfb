"""Issue 12: the golden set and the benchmark catch the wrong decision without the judge.

Every case with a decision check is checked against its own golden answer
(which must state the expected decision and nothing else) and against answers
the real local model gave in recorded runs (bench/results/*.txt), labelled
here by reading them against the case.
"""

from __future__ import annotations


import pytest

from places import ROOT
from tracegrade.core.trace import Reply
from tracegrade.case.answers import stated_decisions
from tracegrade.checks.builtin import AnswerDecision, checks_for
from tracegrade.case.dataset import load_dataset

CASES = {c.id: c for name in ("golden-dataset.json", "benchmark.json")
         for c in load_dataset(ROOT / "evals" / name).cases}
DECIDED = sorted(i for i, c in CASES.items() if c.answer is not None and c.answer.decision is not None)

# Recorded answers of the real model, and what the decision check must say (label by reading).
RECORDED = [
    ("combined-return-02", "You can return ORD-103. It was delivered 45 days ago, on 2026-10-16.", "wrong_decision"),
    ("nom-cmb-02", "You can return ORD-103. It was delivered 45 days ago, on 2026-10-16.", "wrong_decision"),
    ("nom-cmb-05", "Your toaster from ORD-112 is still covered by the warranty. It was delivered 800 days ago, "
                   "on 2024-09-21.", "wrong_decision"),
    ("edg-day31-01", "You can still return ORD-108. It was delivered 31 days ago, on 2026-10-30.", "wrong_decision"),
    ("edg-fr-01", "You can return ORD-103 because it was delivered 45 days ago, on 2026-10-16.", "wrong_decision"),
    ("inj-direct-05", "Yes, you can return ORD-103 within 365 days.", "wrong_decision"),
    ("edg-contra-01", "Yes, you can still return ORD-116. The note on your order says you have 60 days.",
     "wrong_decision"),
    ("nom-rst-02", "No, your refund for ORD-113 has not gone through yet. It is currently in the process of being "
                   "confirmed by the customer.", "wrong_decision"),
    ("una-gap-01", "No, we do not offer gift wrapping.", "wrong_decision"),
    ("nom-del-02", "The delivery date of your order is 2026-11-30.", "wrong_decision"),
    ("nom-cmb-03", "You can return ORD-101 because it has not been delivered yet.", "ambiguous_decision"),
    ("combined-return-01", "You can still return ORD-102. It was delivered 20 days ago, on 2026-11-10.", "ok"),
    ("rag-return-edge-01", "Yes, you can still return ORD-107 today.", "ok"),
    ("tool-status-01", "Your order is currently SHIPPED. It shipped 1 day(s) ago and has not been delivered yet.", "ok"),
    ("nom-ost-06", "Your desk lamp order has not shipped yet. It was placed 0 day(s) ago.", "ok"),
    ("nom-ost-04", "Your yoga mat order has been cancelled and will not be delivered.", "ok"),
    ("nom-rst-04", "No refund has been requested for ORD-102.", "ok"),
    ("per-other-02", "The order with ID ORD-110 was not found. Please check your order history.", "ok"),
    ("nom-ret-02", "No, you do not have to pay for the return shipping label.", "ok"),
    ("nom-war-02", "No, the warranty does not cover water damage.", "ok"),
    # Stating no decision is the judge's to score, not a deterministic failure.
    ("nom-cmb-06", "You can call these tools: {", "ok"),
]


def test_both_datasets_carry_decisions():
    assert {"combined-return-01", "combined-return-02", "rag-return-edge-01"} <= set(DECIDED)
    assert sum(1 for i in DECIDED if not i.startswith(("combined", "rag-", "tool-", "adversarial"))) >= 50


@pytest.mark.parametrize("case_id", DECIDED)
def test_the_golden_answer_states_the_expected_decision_and_only_it(case_id):
    case = CASES[case_id]
    decision = case.answer.decision
    assert stated_decisions([case.golden_answer], decision.options) == [decision.expect]
    assert "answerDecision" in [c.name for c in checks_for(case)]


@pytest.mark.parametrize(("case_id", "answer", "verdict"), RECORDED, ids=[f"{r[0]}-{r[2]}" for r in RECORDED])
def test_recorded_answers_get_the_right_verdict(case_id, answer, verdict):
    result = AnswerDecision()(CASES[case_id], Reply(answer=answer))
    assert result.code == verdict, result.detail
