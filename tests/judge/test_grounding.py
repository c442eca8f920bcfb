"""Grounding by code: specific claims of an answer must appear in its evidence."""

from __future__ import annotations

import asyncio
import math

import pytest

from tracegrade.judge.calibrate import evidence_of, good_items
from tracegrade.judge.grounding import claims, ungrounded
from tracegrade.judge.labels import load_labels
from tracegrade.judge.perturb import INVENTED_FACTS, break_answer
from tracegrade.judge.rubric import load_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel

ITEMS, _ = load_labels()
# WHY: the scripted judge says yes whatever passages it is shown, and grounding reads the
# whole evidence: the embeddings model would only choose what the scripted model ignores.
pytestmark = pytest.mark.usefixtures("evidence_ranked_by_words")


def kinds(text: str) -> list[tuple[str, str]]:
    return [(c.kind, c.text) for c in claims(text)]


def test_each_kind_of_claim_is_found_once_and_the_longest_form_wins():
    text = ("On 2026-10-16 we sent ORD-103 (ticket RD-7) to ana@example.com; a 15% fee of 9.90 EUR applies "
            "within 3 to 5 business days, see https://example.com/terms. Ask Maria in Lisbon, not DHL.")
    assert kinds(text) == [
        ("date", "2026-10-16"), ("id", "ORD-103"), ("id", "RD-7"), ("email", "ana@example.com"), ("percent", "15%"),
        ("money", "9.90 EUR"), ("quantity", "3 to 5 business days"), ("url", "https://example.com/terms."),
        ("name", "Maria"), ("name", "Lisbon"), ("name", "DHL"),
    ]


def test_a_capital_at_the_start_of_a_sentence_is_not_a_name():
    assert kinds("Yes. Returns are free. Sorry: Standard shipping applies.") == []


@pytest.mark.parametrize("answer, evidence", [
    ("It was delivered on 16 October.", "delivered 45 days ago, on 2026-10-16."),  # a date in another form
    ("It was delivered on October 16, 2026.", "on 2026-10-16"),
    ("Express costs €9,90.", "Express costs 9.90 EUR."),  # a currency symbol and a decimal comma
    ("A 2 year warranty.", "Every product has a 2-year warranty."),  # hyphen and plural
    ("It shipped 1 day ago.", "It shipped 1 day(s) ago."),
    ("Standard shipping takes 3 to 5 days.", "takes 3 to 5 business days"),
    ("Your order ord-101 shipped.", "Order ORD-101 is SHIPPED."),  # ids and statuses ignore case
    ("We ship to the European Union.", "We ship to every country in the European Union."),
])
def test_the_same_fact_in_another_form_is_grounded(answer, evidence):
    assert ungrounded(answer, evidence) == []


@pytest.mark.parametrize("answer, evidence, missing", [
    ("You have 60 days to return it.", "Products can be returned within 30 days.", "60 days"),
    ("It lasts 1 year.", "a 2-year warranty; delivered 400 days ago", "1 year"),
    ("Refund of 89.99 EUR.", "Refund for ORD-106 is IN PROGRESS.", "89.99 EUR"),
    ("It arrives on 2 December.", "It shipped 1 day(s) ago.", "2 December"),
    ("Delivered by DHL.", "It shipped 1 day(s) ago.", "DHL"),
    ("Write to help@shop.example.", "Reply to the delivery e-mail.", "help@shop.example"),
    ("The capital of France is Paris.", "What is the capital of France?", "Paris"),
])
def test_a_claim_the_evidence_does_not_hold_is_named(answer, evidence, missing):
    assert [c.text for c in ungrounded(answer, evidence)] == [missing]


def test_a_number_seen_with_another_unit_is_not_grounded():
    # "30" is in the evidence, but as days: "30 years" is a different claim.
    assert [c.text for c in ungrounded("You have 30 years.", "within 30 days of delivery")] == ["30 years"]


def test_it_works_for_any_domain():
    passage = "The Eiffel Tower was completed in 1889 and is 330 metres tall. Gustave Eiffel's company built it."
    assert ungrounded("Gustave Eiffel's company finished it in 1889.", passage) == []
    assert [c.text for c in ungrounded("It was finished in 1887 by Alexandre Dumas.", passage)] == \
        ["1887", "Alexandre", "Dumas"]


# --- every inventFact break fails faithfulness, through the judge a run uses ----------------


def _yes(messages, options):
    return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.9)), ("No", math.log(0.1))),))


JUDGE = Judge(ScriptedModel(_yes, token_probabilities=True), load_rubric())


def _scores(item, answer: str):
    scores = asyncio.run(JUDGE.score(item.case(), item.reply(answer)))
    return {m.name: m for m in scores.metrics}


def _faithfulness(item, answer: str):
    return _scores(item, answer)["faithfulness"]


@pytest.mark.parametrize("item", good_items(ITEMS), ids=lambda i: i.id)
def test_every_invented_fact_fails_hallucination_free_and_lowers_faithfulness_naming_the_claim(item):
    original = _faithfulness(item, item.answer)
    # Read by code: the code part finds every claim of the good answer.
    assert ("code", 1.0) in original.parts, original.detail
    seen = f"{evidence_of(item)}\n{item.answer}".lower()
    candidates = [sentence for markers, sentence in INVENTED_FACTS if not any(m in seen for m in markers)]
    assert candidates  # the break picks one of these; every one must be caught
    for sentence in candidates:
        scores = _scores(item, f"{item.answer.rstrip('.')}. {sentence}")
        # The model said yes: code decides hallucinationFree (the hard rule), and faithfulness's code
        # part falls and names the claim. WHY not "faithfulness falls" too: its weights are fitted on
        # real replies, where word overlap weighs most, and an invented sentence in the evidence's
        # words can raise the overlap by more than the lost claim costs (docs/judge.md).
        assert scores["hallucinationFree"].passed is False, sentence
        broken = scores["faithfulness"]
        assert dict(broken.parts)["code"] < 1.0, sentence
        assert "not in the evidence: " in broken.detail
    chosen = break_answer("inventFact", item.question, item.answer, evidence_of(item)).answer
    assert _scores(item, chosen)["hallucinationFree"].passed is False


def test_an_answer_without_specific_claims_is_grounded():
    item = ITEMS[0]
    scores = asyncio.run(JUDGE.score(item.case(), item.reply("Sorry, I can't help with that.")))
    metrics = {m.name: m for m in scores.metrics}
    assert metrics["hallucinationFree"].value == 1.0 and ("code", 1.0) in metrics["faithfulness"].parts


def test_a_generic_acronym_is_not_a_name_claim_but_the_id_it_introduces_is():
    answer = "The order with ID ORD-999 was not found."
    assert ungrounded(answer, "Order ORD-999 not found.") == []
    assert [c.text for c in ungrounded(answer, "Order ORD-123 not found.")] == ["ORD-999"]


# One text per trigger the quick pre-check looks for, each alone: a pre-check that
# forgot a trigger ("per cent", "www.", a month) would skip a pattern that matches.
ONE_TRIGGER_EACH = (
    "write to help@shop.example", "see WWW.shop.example/faq", "see http://shop.example", "ask Maria",
    "code AB12345", "paid $ 12", "12 euros back", "12 EUR back", "9 USD", "9 gbp", "9 chf", "9 JPY", "3 dollars",
    "4 pounds", "5% off", "5 percent off", "5 per cent off", "on 16 Oct", "on Sept 3", "on 3 of december",
    "on 2026-10-16", "on 16/10/26", "within 3 business days", "item 42", "the 3rd", "9,90 or 1,000.50",
)


@pytest.mark.parametrize("text", [*ONE_TRIGGER_EACH, *(i.answer for i in ITEMS), *(evidence_of(i) for i in ITEMS),
                                  "Ünïcode: 16 Oct, 5 per cent, € 9, Ana"])
def test_the_quick_pre_check_never_skips_a_pattern_that_matches(text):
    from tracegrade.judge.grounding import _ALL_KINDS, _possible_kinds, _scan

    assert _scan(text, _possible_kinds(text)) == _scan(text, _ALL_KINDS)


def test_every_kind_of_claim_is_met_by_one_trigger_text():
    found = {c.kind for text in ONE_TRIGGER_EACH for c in claims(text)}
    assert found == {"email", "url", "name", "id", "money", "percent", "date", "quantity", "number"}


@pytest.mark.parametrize("text", [
    "Yes. Returns are free.\n- Standard shipping\n  * Express: Next day\n\u2022 Ana said \"Maria\" (Lisbon)",
    "\nFirst\n\nSecond;  Third?\tFourth!\u00a0Fifth: Sixth ( Seventh ' Eighth",
    "- Bullet at the start", "   Leading blanks", "Trailing dash -", "a.b Not after a dot without a blank",
    *(i.answer for i in ITEMS[:20]), *(evidence_of(i) for i in ITEMS[:5]),
])
def test_the_sentence_start_test_looks_back_exactly_as_a_search_of_the_whole_prefix(text):
    from tracegrade.judge.grounding import _SENTENCE_START, _at_sentence_start

    assert [_at_sentence_start(text, i) for i in range(len(text) + 1)] == [
        _SENTENCE_START.search(text[:i]) is not None for i in range(len(text) + 1)]


# --- what a faithful paraphrase may change ------------------------------------------------------


@pytest.mark.parametrize("answer, evidence", [
    ("It covers 9.2 million square kilometres.", "Its area is 9,200,000 square kilometres."),
    ("It covers 9,200,000 km2.", "Its area is 9.2 million km2."),
    ("It covers 9.2\nmillion km2.", "Its area is 9,200,000 km2."),  # wrapped between number and scale
    ("It reaches almost 30 metres.", "Its length is 29.9 metres."),
    ("It weighs about 200 tonnes.", "It weighs up to 199 tonnes."),
    ("Some 9 million people live there.", "The city has 9,200,000 inhabitants."),
    ("He left over 800 pieces.", "He composed more than 800 works."),
    ("The dish comes from Italy.", "It is a dish of Italian origin."),
    ("It was founded by Germany.", "It was founded by German engineers."),
    ("A PE teacher invented it.", "It was invented by a physical education teacher."),
    ("She worked for the BBC.", "She worked for the British Broadcasting Corporation."),
    ("The data came from the BoE.", "The data came from the Bank of England."),
])
def test_a_faithful_paraphrase_of_a_number_count_or_name_is_held(answer, evidence):
    assert ungrounded(answer, evidence) == []


@pytest.mark.parametrize("answer, evidence, missing", [
    ("It covers 9.3 million square kilometres.", "Its area is 9,200,000 square kilometres.", "9.3 million"),
    ("It reaches 30 metres.", "Its length is 29.9 metres.", "30"),  # not hedged: stated exactly, and wrong
    ("It reaches almost 35 metres.", "Its length is 29.9 metres.", "35"),
    ("It weighs about 200 tonnes.", "It weighs 150 tonnes.", "200"),  # 150 does not round to 200
    ("He left over 900 pieces.", "He composed more than 800 works.", "900 pieces"),
    ("She was born in Austria.", "She was born in Australia.", "Austria"),
    ("A PT teacher invented it.", "It was invented by a physical education teacher.", "PT"),
    ("She worked for the BBC.", "She worked for British Broadcasting.", "BBC"),  # a word short
    ("She worked for the BBC.", "The corporation is British and broadcasts.", "BBC"),  # not in a row
])
def test_a_changed_number_count_or_name_is_still_missing(answer, evidence, missing):
    assert [c.text for c in ungrounded(answer, evidence)] == [missing]
