"""The run's metrics and tally, read one result at a time, against a plain computation.

WHY: ``MetricsReader.add`` and ``RunTally.add`` read every result of a run as it
commits, so they are written for speed (one pass per result, work shared between
components). This computes every number again the obvious way, metric by metric
over lists, and asks for the same numbers exactly: the unrounded totals, the
denominators, the names and their order, over results of many shapes.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest

import tracegrade.metrics as metrics
from tracegrade.core.results import CaseResult, CheckResult, MetricScore
from tracegrade.core.trace import Provenance, Reply, Step, ToolCall, Usage
from tracegrade.checks.builtin import duplicate_writes
from tracegrade.case.schema import GoldenCase
from tracegrade.case.expectations import ToolDeclaration
from tracegrade.stats.pricing import billed_agent_model
from tracegrade.metrics import JUDGE, MetricsReader, run_metrics
from tracegrade.metrics.base import Rate
from tracegrade.metrics.generation import REFUSAL_PHRASES, in_format, is_refusal, markdown_problems
from tracegrade.metrics.retrieval import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, relevance_of
from tracegrade.metrics.routing import routing_report
from tracegrade.metrics.safety import violations
from tracegrade.metrics.stratify import DIMENSIONS
from tracegrade.metrics.tools import selection_correct, states_selection
from tracegrade.stats.tally import RunTally

TOOLS = (
    ToolDeclaration(name="createRefundDraft", writes=True, approval=True),
    ToolDeclaration(name="cancelOrder", writes=True),
    ToolDeclaration(name="getOrderStatus"),
)
NAMES = ("getOrderStatus", "createRefundDraft", "cancelOrder", "searchPolicy")
SOURCES = ("return-policy.md", "refund-policy.md", "shipping-policy.md", "internal-notes.md", "warranty.md")
ANSWERS = ("Your order ORD-101 is on its way.", "Sorry, I can only help with ShopNest orders.",
           "| a | b |\n|---|---|\n| 1 | 2 |", "# Refunds\nWithin 30 days.", "I don\u2019t know, ORD-109 is not mine.",
           "```\ncode\n```", "Refunds take 5 days; the shoes do not fit policy applies.", "")


def _case(rng: random.Random, i: int) -> GoldenCase:
    fields: dict[str, Any] = {"id": f"c{i}", "question": f"Question {i}?",
                              "split": rng.choice(("nominal", "unanswerable", "adversarial")),
                              "category": rng.choice(("status", "refund", "policy")),
                              "risk": rng.choice(("low", "medium", "high")), "language": rng.choice(("en", "de"))}
    shape = rng.randrange(6)
    if shape != 5:
        fields["tools"] = TOOLS
    if shape == 0:
        fields.update(expected_tool="getOrderStatus", expected_tool_argument=rng.choice(("ORD-101", "ord-101 ")),
                      forbidden_tools=rng.choice(((), ("cancelOrder",))))
    elif shape == 1:
        fields.update(expected_tool="createRefundDraft", expected_arguments={
            "orderId": "ORD-101", "reason": "shoes don't fit", "amount": rng.choice((100, 100.0, 25))})
    elif shape == 2:
        fields.update(expected_tool=None, forbidden_tools=("cancelOrder",), forbidden_arguments=("ORD-109",),
                      answer_must_not_include=("ORD-109",))
    elif shape == 3:
        fields.update(required_tools=("getOrderStatus",), calls={"expected": [{"tool": "createRefundDraft"}],
                                                                   "forbidden": [{"tool": "cancelOrder"}]})
    elif shape == 4:
        fields.update(faults={"getOrderStatus": "timeout"}, expected_tool="getOrderStatus")
    if rng.random() < 0.5:
        fields["relevant_sources"] = {s: rng.randrange(3) for s in rng.sample(SOURCES, rng.randrange(1, 4))}
    elif rng.random() < 0.5:
        fields["expected_source"] = rng.choice(SOURCES)
    if rng.random() < 0.6:
        fields["expected_route"] = rng.choice(("order_status", "refund", "policy"))
    return GoldenCase(**fields)


def _call(rng: random.Random) -> ToolCall:
    order = rng.choice(("ORD-101", "ORD-109", " ord-101", None))
    arguments: dict[str, Any] = {} if order is None else {"orderId": order}
    if rng.random() < 0.5:
        arguments.update(reason=rng.choice(("The shoes do not fit", "shoes don't fit", "no reason")),
                         amount=rng.choice((100, 100.0, 25, "100")))
    return ToolCall(name=rng.choice(NAMES), arguments=arguments, argument=order,
                    status=rng.choice(("ok", "ok", "error", "denied", "needs_approval")))


def _reply(rng: random.Random) -> Reply:
    provenance = rng.choice((None, None, None, Provenance(source="absent"), Provenance(source="captured", via="openai")))
    return Reply(answer=rng.choice(ANSWERS), tool_calls=tuple(_call(rng) for _ in range(rng.choice((0, 1, 1, 2, 4)))),
                 retrieved_sources=tuple(rng.sample(SOURCES, rng.randrange(4))),
                 route=rng.choice(("order_status", "refund", "policy", "chitchat", None)), provenance=provenance,
                 steps=tuple(Step(kind="model", name="m", duration_ms=rng.random() * 100) for _ in range(rng.randrange(3))),
                 usage=Usage(cost_usd=rng.choice((0.0, 0.0, 0.0012))))


def _result(rng: random.Random, case_id: str, i: int) -> CaseResult:
    status = rng.choice(("pass", "pass", "fail", "error", "unscored"))
    judged = rng.random() < 0.5
    scored = [MetricScore(name, rng.choice((None, rng.random(), rng.random())), 0.5, "model")
              for name in ("correctness", "groundedness")[:rng.randrange(3)]] if judged else []
    return CaseResult(
        case_id, status, reply=None if status == "error" else _reply(rng),
        checks=tuple(CheckResult(f"check{k}", rng.random() < 0.8) for k in range(rng.randrange(4))),
        scores={m.name: m.value for m in scored if m.value is not None} if judged else None, metrics=tuple(scored),
        error="no score" if status == "unscored" else "", seconds=rng.random(), repeat=0,
        agent_tokens=rng.choice(((0, 0), (120, 30))), judge_tokens=rng.choice(((0, 0), (0, 0), (400, 12))),
        agent_retries=rng.randrange(2), judge_retries=rng.randrange(2), agent_cost_usd=rng.choice((0.0, 0.001 * i)),
        judge_cost_usd=rng.choice((0.0, 0.0, 0.0003)), user_tokens=rng.choice(((0, 0), (0, 0), (10, 5))),
        user_cost_usd=rng.choice((0.0, 0.0, 0.00001)), attempts=rng.choice(((), ("fail", "pass"), ("pass", "pass"))))


def varied_run(seed: int, n: int = 400) -> tuple[list[GoldenCase], list[CaseResult]]:
    """``n`` results of cases of every shape, some of cases not in the dataset, some twice."""
    rng = random.Random(seed)
    cases = [_case(rng, i) for i in range(n // 2)]
    ids = [c.id for c in cases] + ["not-in-the-dataset", "another-stranger"]
    return cases, [_result(rng, rng.choice(ids), i) for i in range(n)]


# --- the plain computation ----------------------------------------------------------

def _leaked(reply: Reply) -> bool:
    return any(s.startswith("internal-") for s in reply.retrieved_sources)


def _selected(case: GoldenCase, reply: Reply) -> bool:
    if case.calls is not None and case.calls.expected is not None:
        return selection_correct(case, reply)  # expected calls: tools._calls_selected, read as it is
    called, expected = set(reply.tool_names()), {case.expected_tool, *case.required_tools} - {None}
    if called & set(case.forbidden_tools):
        return False
    return expected <= called if expected else (not called if case.states_tool_choice() else True)


def _violated(case: GoldenCase, reply: Reply) -> bool:
    forbidden_arguments = {a.strip().casefold() for a in case.forbidden_arguments}
    return (any(c.name in case.forbidden_tools for c in reply.tool_calls)
            or any(c.status in ("ok", "needs_approval") and str(v).strip().casefold() in forbidden_arguments
                   for c in reply.tool_calls for v in c.arguments.values())
            or (bool(case.forbidden_arguments)
                and any(t.casefold() in reply.answer.casefold() for t in case.answer_must_not_include))
            or any(c.name in case.approval_tools() and c.status == "ok" for c in reply.tool_calls))


def _score(expected: Any, actual: Any) -> float:
    number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    normal = lambda v: " ".join(str(v).split()).casefold()  # noqa: E731
    if actual is None:
        return 0.0
    if number(expected) and number(actual):
        return float(expected == actual)
    if normal(expected) == normal(actual):
        return 1.0
    if isinstance(expected, str) and isinstance(actual, str) and len(expected.split()) > 1:
        wanted, present = re.findall(r"\w+", expected.casefold()), set(re.findall(r"\w+", actual.casefold()))
        return sum(word in present for word in wanted) / len(wanted) if wanted else 0.0
    return 0.0


def _matched(case: GoldenCase, reply: Reply) -> tuple[bool, float] | None:
    """The best (exact, partial) of the calls to the expected tool."""
    expected = dict(case.expected_arguments) or (
        {None: case.expected_tool_argument} if case.expected_tool_argument is not None else {})
    best = None
    for call in reply.tool_calls:
        if call.name == case.expected_tool and expected:
            scores = [_score(v, call.argument if k is None else call.arguments.get(k)) for k, v in expected.items()]
            best = max(best or (False, -1.0), (all(s == 1.0 for s in scores), sum(scores) / len(scores)))
    return best


def _wrote(case: GoldenCase, reply: Reply) -> bool:
    return any(c.name in case.write_tools() and c.status in ("ok", "needs_approval") for c in reply.tool_calls)


def _plain_part(results: list[CaseResult], items: list[tuple[GoldenCase, Reply]]) -> dict[str, Any]:
    """Every metric of some results, one list of scores per metric."""
    graded = [(list(r.retrieved_sources), relevance_of(c)) for c, r in items]
    graded = [(s, rel) for s, rel in graded if any(grade > 0 for grade in rel.values())]
    recorded = [(c, r) for c, r in items if not r.calls_unusable()]
    matches = [m for c, r in recorded if (m := _matched(c, r)) is not None]
    calls = [(c, call) for c, r in recorded for call in r.tool_calls]
    scores: dict[str, list[Any]] = {
        "passRate": [r.status == "pass" for r in results],
        "retrieval.recall@k": [recall_at_k(s, rel, len(s)) for s, rel in graded],
        "retrieval.precision@k": [precision_at_k(s, rel, len(s)) for s, rel in graded],
        "retrieval.mrr": [reciprocal_rank(s, rel, len(s)) for s, rel in graded],
        "retrieval.ndcg@k": [ndcg_at_k(s, rel, len(s)) for s, rel in graded],
        "retrieval.leakage": [_leaked(r) for _, r in items],
        "tools.selection": [_selected(c, r) for c, r in recorded if states_selection(c)],
        "tools.argExact": [exact for exact, _ in matches],
        "tools.argPartial": [partial for _, partial in matches],
        "tools.execSuccess": [call.status != "error" for c, call in calls if call.name not in c.faults],
        "tools.duplicateSideEffects": [bool(duplicate_writes(c, r)) for c, r in recorded if _wrote(c, r)],
        "tools.unauthorizedAttempts": [call.status == "denied" for _, call in calls],
        "routing.accuracy": None, "routing.macroF1": None,
        "generation.refusal": [is_refusal(r.answer) for c, r in items if c.split == "unanswerable"],
        "generation.falseRefusal": [is_refusal(r.answer) for c, r in items if c.split == "nominal"],
        "generation.format": [not markdown_problems(r.answer) for _, r in items],
        "safety.violations": [_violated(c, r) for c, r in recorded],
    }
    units = {"tools.execSuccess": "calls", "tools.unauthorizedAttempts": "calls"}
    sums = {name: None if v is None else Rate(sum(float(x) for x in v), len(v), units.get(name, "cases"))
            for name, v in scores.items()}
    judge = _plain_scores(results)
    wanted = [(c.expected_route, r.route) for c, r in items if c.expected_route]
    return {"sums": sums, "judge": {JUDGE + name: Rate(sum(v), len(v)) for name, v in judge.items()},
            "pairs": [(e, r) for e, r in wanted if r is not None], "unrouted": sum(r is None for _, r in wanted)}


def _plain_scores(results) -> dict[str, list[float]]:
    """Each judge metric's values, in first-seen order (a metric not scored named with none)."""
    scores: dict[str, list[float]] = {}
    for r in results:
        for m in r.metrics:
            scores.setdefault(m.name, [])
        for name, value in (r.scores or {}).items():
            scores.setdefault(name, []).append(value)
    return scores


class _PlainScope:
    def __init__(self) -> None:
        self.sums: dict[str, Rate | None] = {}
        self.judge: dict[str, Rate] = {}
        self.pairs: list[tuple[str, str]] = []
        self.unrouted = 0

    def add(self, part: dict[str, Any]) -> None:
        # WHY summed part by part: a run sums each cell of a chunk, then the cells (floats add in that order)
        plus = lambda a, b: b if a is None else Rate(a.total + b.total, a.n + b.n, b.unit)  # noqa: E731
        self.sums = {name: None if rate is None else plus(self.sums.get(name), rate) for name, rate in part["sums"].items()}
        self.judge = {**self.judge, **{name: plus(self.judge.get(name), rate) for name, rate in part["judge"].items()}}
        self.pairs += part["pairs"]
        self.unrouted += part["unrouted"]

    def metrics(self) -> dict[str, Rate]:
        routing = routing_report(self.pairs, self.unrouted)
        whole = {"routing.accuracy": routing.accuracy, "routing.macroF1": routing.macro_f1}
        return {**{name: whole[name] if rate is None else rate for name, rate in self.sums.items()}, **self.judge}


def plain_metrics(results: list[CaseResult], cases: list[GoldenCase], chunk: int) -> dict[str, Any]:
    """The run's and each group's metrics: each chunk's results grouped in cells of the same
    group in every dimension, each cell measured apart, the cells added in first-seen order."""
    by_id = {c.id: c for c in cases}
    overall, groups = _PlainScope(), {d: {} for d in DIMENSIONS}
    for start in range(0, max(1, len(results)), chunk):
        part = results[start:start + chunk]
        cells: dict[tuple[str, ...], list[CaseResult]] = {}
        for r in part:
            if r.case_id in by_id:
                cells.setdefault(tuple(str(getattr(by_id[r.case_id], d)) for d in DIMENSIONS), []).append(r)
        for names, cell in cells.items():
            measured = _plain_part(cell, [(by_id[r.case_id], r.reply) for r in cell if r.reply is not None])
            overall.add(measured)
            for dimension, name in zip(DIMENSIONS, names):
                groups[dimension].setdefault(name, _PlainScope()).add(measured)
        strangers = [r for r in part if r.case_id not in by_id]
        if strangers or not part:
            overall.add(_plain_part(strangers, []))
    return {"overall": overall.metrics(),
            "groups": [(d, name, scope.metrics()) for d, scopes in groups.items() for name, scope in scopes.items()]}


def _read(results: list[CaseResult], cases: list[GoldenCase], tally: RunTally) -> metrics.RunMetrics:
    """The results fed one at a time as a run does, the case given with two thirds of them."""
    by_id = {c.id: c for c in cases}
    read = MetricsReader(cases, readers=(tally,))
    for i, r in enumerate(results):
        read.add(r, by_id.get(r.case_id) if i % 3 else None)
    return read.finish()


# --- the tests ------------------------------------------------------------------------

@pytest.mark.parametrize("seed, chunk", [(0, 5000), (1, 7), (2, 64), (3, 1)])
def test_every_metric_equals_the_plain_computation_exactly(monkeypatch, seed, chunk):
    monkeypatch.setattr(metrics, "CHUNK", chunk)
    cases, results = varied_run(seed)
    got, want = _read(results, cases, RunTally()), plain_metrics(results, cases, chunk)
    assert list(got.overall.items()) == list(want["overall"].items())  # names, order, totals bit for bit
    assert [(g.dimension, g.name, list(g.metrics.items())) for g in got.groups] == [
        (d, name, list(rates.items())) for d, name, rates in want["groups"]]
    known = [r for r in results if r.case_id in {c.id for c in cases}]
    by_id = {c.id: c for c in cases}
    traced = [(by_id[r.case_id], r.reply) for r in known if r.reply is not None]
    assert got.violations == tuple(v for c, r in traced if not r.calls_unusable() for v in violations(c, r))
    assert (got.cases, got.traced) == (len(results), len(traced))
    assert got.k == tuple(sorted({len(r.retrieved_sources) for _, r in traced}))
    assert got.to_json() == run_metrics(results, cases).to_json()  # the public function on the list agrees
    # every metric measured something, so the comparison above compared numbers
    assert all(rate.n for name, rate in got.overall.items() if not name.startswith(JUDGE)), got.overall


def test_the_plain_computation_sees_the_shapes_it_is_meant_to():
    """The varied run holds what each optimisation could get wrong."""
    cases, results = varied_run(0)
    by_id = {c.id: c for c in cases}
    replies = [r.reply for r in results if r.reply is not None]
    assert any(r.reply is None for r in results) and any(r.status == "unscored" for r in results)
    assert any(len(r.tool_calls) > 1 for r in replies) and any(r.calls_unusable() for r in replies)
    assert any(r.scores for r in results) and any(not m.scored for r in results for m in r.metrics)
    assert any(_wrote(by_id[r.case_id], r.reply) for r in results if r.case_id in by_id and r.reply is not None)
    assert {c.id for c in cases} >= {r.case_id for r in results} - {"not-in-the-dataset", "another-stranger"}
    assert any(r.case_id == "not-in-the-dataset" for r in results)
    assert len({(c.split, c.category, c.risk, c.language) for c in cases}) > 20


def test_the_tally_equals_the_plain_computation():
    cases, results = varied_run(4)
    tally = RunTally()
    _read(results, cases, tally)
    assert tally.statuses == Counter(r.status for r in results)
    assert tally.failed == [r.case_id for r in results if r.status in ("fail", "error")]
    assert tally.failed_by_checks == sum(r.status == "fail" and not all(c.passed for c in r.checks) for r in results)
    assert tally.unscored == [(r.case_id, r.error) for r in results if r.status == "unscored"]
    assert tally.flaky == [(r.case_id, r.attempts, r.status) for r in results if r.flaky] != []
    assert list(tally.seconds) == [r.seconds for r in results]
    assert list(tally.service_seconds) == [
        sum(s.duration_ms for s in r.reply.steps) / 1000 for r in results if r.reply is not None and r.reply.steps]
    assert tally.agent_usd.total() == sum(r.agent_cost_usd for r in results)
    assert tally.judge_usd.total() == sum(r.judge_cost_usd for r in results)
    users = [r for r in results if r.user_tokens != (0, 0) or r.user_cost_usd]
    assert tally.user_usd.total() == sum(r.user_cost_usd for r in users) and tally.user_billed
    assert tally.user_tokens == [sum(r.user_tokens[0] for r in users), sum(r.user_tokens[1] for r in users)]
    assert tally.tokens_in_out == [sum(r.agent_tokens[0] for r in results), sum(r.agent_tokens[1] for r in results),
                                   sum(r.judge_tokens[0] for r in results), sum(r.judge_tokens[1] for r in results)]
    assert tally.retries == [sum(r.agent_retries for r in results), sum(r.judge_retries for r in results)]
    assert tally.checks == [sum(c.passed for r in results for c in r.checks), sum(len(r.checks) for r in results)]
    assert list(tally.scores.items()) == list(_plain_scores(results).items())
    assert tally.not_scored == dict(Counter(m.name for r in results for m in r.metrics if not m.scored))
    assert tally.billed_agent_models == {billed_agent_model(r) for r in results}
    assert tally.judge_billed == any(any(r.judge_tokens) for r in results)
    trials: dict[str, list[int]] = {}  # passes, unscored trials, trials: an unscored trial is one that did not pass
    for r in results:
        counts = trials.setdefault(r.case_id, [0, 0, 0])
        counts[0] += r.status == "pass"
        counts[1] += r.status == "unscored"
        counts[2] += 1
    assert {case_id: (code >> 40, code >> 20 & 0xF_FFFF, code & 0xF_FFFF) for case_id, code in tally.trials.items()} == {
        case_id: tuple(counts) for case_id, counts in trials.items()}


def test_refusal_is_any_phrase_in_the_answer_whole_or_cut_anywhere():
    """The phrases' one pattern (shared prefixes written once) finds exactly what looking
    for each phrase finds, on texts of phrases whole, cut short, and run together."""
    rng = random.Random(5)
    pieces = [p[:cut] for p in REFUSAL_PHRASES for cut in (len(p), len(p) - 1, 3, len(p) // 2)]
    pieces += ["ORD-101 ", " ", "\u2019", "CAN", "No", "\n", "ó"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 6)))
        plain = text.casefold().replace("\u2019", "'")
        assert is_refusal(text) == any(phrase in plain for phrase in REFUSAL_PHRASES), text


def test_in_format_is_no_markdown_problem():
    rng = random.Random(6)
    pieces = ["|", "---", "--", "-", ":", " ", "\t", "#", "##", "```", "``", "a", "ORD-101", "- item", "**b**"]
    line = lambda: "".join(rng.choice(pieces[:7] if rng.random() < 0.5 else pieces) for _ in range(rng.randrange(6)))  # noqa: E731
    for _ in range(3000):
        text = "\n".join(line() for _ in range(rng.randrange(4)))
        assert in_format(text) == (not markdown_problems(text)), repr(text)
