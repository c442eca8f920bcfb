"""A golden run's spans, exported over OTLP/HTTP to a receiver on loopback and decoded
with opentelemetry-proto, carry the GenAI conventions' names, kinds and attributes.

One table row per kind of span; the run is the 12-case golden dataset against the
real ShopNest agent on a scripted model, judged by a scripted judge.
"""

from __future__ import annotations

import re

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes

import support
from conftest import hashing_embedder
from shopnest.agent import ShopNestAgent
from shopnest.knowledge import KnowledgeBase, load_policies
from shopnest.orders import OrderBook
from shopnest.target import agent_target
from tracegrade.judge import relevant
from tracegrade.judge.scoring import Judge, load_rubric
from tracegrade.models.scripted import ScriptedModel
from tracegrade.run.evaluate import evaluate

pytestmark = pytest.mark.slow  # a golden run exported over OTLP/HTTP

SERVER, CLIENT, INTERNAL = Span.SPAN_KIND_SERVER, Span.SPAN_KIND_CLIENT, Span.SPAN_KIND_INTERNAL
TOOLS = ("createRefundDraft", "getDeliveryDate", "getOrderStatus", "getRefundStatus")

# name pattern, kind, attributes every such span carries (None: present, any value)
TABLE = [
    ("eval_run", INTERNAL, {"tracegrade.run.id": None, "gen_ai.request.model": "golden-model"}),
    ("case", INTERNAL, {"tracegrade.case.id": None, "tracegrade.status": None}),
    ("invoke_agent shopnest", INTERNAL, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shopnest",
                                         "gen_ai.request.model": "golden-model"}),
    ("retrieval policies", CLIENT, {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "policies",
                                    "gen_ai.retrieval.documents": None}),
    ("chat golden-model", CLIENT, {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted",
                                   "gen_ai.request.model": "golden-model", "gen_ai.response.model": "golden-model",
                                   "gen_ai.usage.input_tokens": None, "gen_ai.usage.output_tokens": None}),
    (f"execute_tool ({'|'.join(TOOLS)})", INTERNAL, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": None,
                                                    "gen_ai.tool.call.id": "call-1", "gen_ai.tool.type": "function",
                                                    "gen_ai.tool.call.arguments": None}),
    ("approval", INTERNAL, {"tracegrade.approval.state": "asked", "gen_ai.tool.name": "createRefundDraft"}),
    ("checks", INTERNAL, {"tracegrade.checks.count": None}),
    ("chat judge-m", CLIENT, {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted",
                              "gen_ai.request.model": "judge-m", "gen_ai.evaluation.score.value": None}),
]


def _value(any_value):
    return getattr(any_value, any_value.WhichOneof("value")) if any_value.WhichOneof("value") else None


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> list[Span]:
    scratch = tmp_path_factory.mktemp("golden-otlp")
    agent = ShopNestAgent(ScriptedModel(support.golden_shopnest_model, model_id="golden-model"),
                          KnowledgeBase(load_policies(), hashing_embedder), OrderBook())
    judge = Judge(ScriptedModel(support.full_marks, model_id="judge-m"), load_rubric())
    with support.otlp_receiver() as (endpoint, received), pytest.MonkeyPatch.context() as env:
        # WHY here: conftest's evidence_ranked_by_words is per test; this run is the module's
        env.setattr(relevant, "default_rank", lambda: relevant.lexical_rank)
        env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        env.setenv("TRACEGRADE_SPANS_DB", str(scratch / "spans.db"))
        run = evaluate(support.GOLDEN_PATH, agent_target(agent), judge=judge, store=f"sqlite:///{scratch / 'runs.db'}",
                       telemetry=True)
    assert len(run.results) == 12 and run.pass_rate > 0.9  # (the hashing embedder misses one source)
    assert {path for path, _ in received} == {"/v1/traces"}
    return [span for service, span in support.otlp_spans(received) if service == "tracegrade"]


@pytest.mark.parametrize("pattern, kind, attributes", TABLE, ids=[row[0] for row in TABLE])
def test_each_kind_of_span_has_its_conventional_name_kind_and_attributes(exported, pattern, kind, attributes):
    spans = [s for s in exported if re.fullmatch(pattern, s.name)]
    assert spans, f"no span named {pattern}"
    for span in spans:
        found = {a.key: _value(a.value) for a in span.attributes}
        assert span.kind == kind, span.name
        for key, expected in attributes.items():
            assert key in found, f"{span.name} lacks {key}"
            assert expected is None or found[key] == expected, (span.name, key, found[key])


def test_the_judge_span_scores_the_share_of_metrics_passed(exported):
    values = [_value(a.value) for s in exported if s.name == "chat judge-m" for a in s.attributes
              if a.key == "gen_ai.evaluation.score.value"]
    assert len(values) == 12 and all(0.0 <= v <= 1.0 for v in values) and values.count(1.0) >= 10


def test_every_span_of_the_run_is_in_the_table_and_the_tree_is_whole(exported):
    assert all(any(re.fullmatch(pattern, s.name) for pattern, _, _ in TABLE) for s in exported), \
        sorted({s.name for s in exported})
    assert sum(s.name == "case" for s in exported) == 12 and sum(s.name == "eval_run" for s in exported) == 1
    by_id = {s.span_id: s for s in exported}
    assert all(s.parent_span_id in by_id for s in exported if s.name != "eval_run")
    tools = [s for s in exported if s.name.startswith("execute_tool ")]
    assert {by_id[s.parent_span_id].name for s in tools} == {"invoke_agent shopnest"}
    assert {s.name.split(" ", 1)[1] for s in tools} == set(TOOLS)


def test_every_gen_ai_attribute_is_one_the_installed_conventions_define(exported):
    # Read from the installed opentelemetry-semantic-conventions package, not guessed.
    defined = {value for name, value in vars(gen_ai_attributes).items() if name.startswith("GEN_AI_")}
    used = {a.key for s in exported for a in s.attributes if a.key.startswith("gen_ai.")}
    assert used and used <= defined, used - defined
