"""Breaks are deterministic and each one changes what its target metric measures."""

from __future__ import annotations

import re

import pytest

from tracegrade.judge.calibrate import evidence_of
from judge_rubrics import SEED_METRICS as METRICS
from tracegrade.judge.labels import load_labels
from tracegrade.judge.perturb import BREAK_KINDS, INVENTED_FACTS, TARGETS, all_breaks, break_answer

ITEMS, _ = load_labels()
GOOD = [item for item in ITEMS if all(set(label.scores.values()) == {5} for label in item.labels)]


def _evidence_without_answer(item) -> str:
    return evidence_of(item)


def test_every_target_is_a_judge_metric_and_every_kind_has_targets():
    assert set(TARGETS) == set(BREAK_KINDS)
    assert all(targets and set(targets) <= set(METRICS) for targets in TARGETS.values())
    assert TARGETS["inventFact"] == ("faithfulness", "hallucinationFree")
    assert TARGETS["stripFacts"] == ("correctness", "helpfulness")
    assert TARGETS["offTopic"] == ("relevance",)


@pytest.mark.parametrize("item", GOOD, ids=lambda i: i.id)
def test_breaks_are_deterministic_and_all_differ_from_the_answer(item):
    first = all_breaks(item.question, item.answer, _evidence_without_answer(item))
    again = all_breaks(item.question, item.answer, _evidence_without_answer(item))
    assert first == again
    assert [b.kind for b in first] == list(BREAK_KINDS)
    assert all(b.answer != item.answer for b in first)


@pytest.mark.parametrize("item", GOOD, ids=lambda i: i.id)
def test_invent_fact_adds_a_sentence_whose_markers_are_absent_from_the_evidence(item):
    seen = _evidence_without_answer(item).lower()
    broken = break_answer("inventFact", item.question, item.answer, seen).answer
    assert broken.startswith(item.answer.rstrip("."))
    added = broken[len(item.answer):].strip()
    markers = next(m for m, sentence in INVENTED_FACTS if sentence == added)
    assert not any(marker in seen for marker in markers)


@pytest.mark.parametrize("item", GOOD, ids=lambda i: i.id)
def test_strip_facts_leaves_no_number_verdict_or_status(item):
    broken = break_answer("stripFacts", item.question, item.answer, "").answer
    body = re.sub(r"ORD-\d+", "", broken)  # the opening names the order, which is not a fact
    assert not re.search(r"\d", body)
    assert not re.search(r"\b(yes|no|shipped|delivered|processing|completed|refund|return|warranty)\b", body, re.I)


@pytest.mark.parametrize("item", GOOD, ids=lambda i: i.id)
def test_off_topic_shares_no_content_word_with_the_question(item):
    broken = break_answer("offTopic", item.question, item.answer, "").answer
    words = lambda text: {w.rstrip("s") for w in re.findall(r"[a-z]{5,}", text.lower())} - {"every"}
    assert not words(broken) & words(item.question), broken


def test_invent_fact_skips_a_fact_already_in_the_evidence():
    question, answer = "Can I return ORD-102?", "Yes."
    first = break_answer("inventFact", question, answer, evidence="").answer
    used = next(m for m, s in INVENTED_FACTS if first.endswith(s))
    other = break_answer("inventFact", question, answer, evidence=" ".join(used)).answer
    assert other != first and other.startswith("Yes. ")


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown break kind"):
        break_answer("shuffle", "q", "a", "")  # type: ignore[arg-type]
