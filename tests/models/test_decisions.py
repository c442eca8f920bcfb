import pytest

from shopnest.tools import TOOL_NAMES, TOOL_SPECS
from tracegrade.models.base import ModelToolCall
from tracegrade.models.decisions import decision_instructions, decision_schema, parse_decision

STATUS_101 = ModelToolCall(name="getOrderStatus", arguments={"orderId": "ORD-101"})


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}',
        '  {"tool":"getOrderStatus","arguments":{"orderId":"ORD-101"}}\n',
        '```json\n{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}\n```',
        '```\n{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}\n```',
        'Let me check.\n```json\n{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}\n```\nOne moment.',
        '{{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}}',
        # Template-style escaping doubles every brace, not only the outer pair.
        '{{"tool": "getOrderStatus", "arguments": {{"orderId": "ORD-101"}}}}',
        '<tool_call>\n{"name": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}\n</tool_call>',
        '<tool_call>{"name": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}',  # unclosed tag
        '{"name": "getOrderStatus", "arguments": "{\\"orderId\\": \\"ORD-101\\"}"}',  # arguments as a JSON string
        '{"tool": "getOrderStatus", "parameters": {"orderId": "ORD-101"}}',
        'Sure, I will look that up: {"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}',
    ],
)
def test_every_form_of_tool_call_is_recognised(text):
    assert parse_decision(text, TOOL_NAMES) == ("", (STATUS_101,))


def test_two_calls_on_separate_lines_yield_the_first():
    text = (
        '{"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}\n'
        '{"tool": "getDeliveryDate", "arguments": {"orderId": "ORD-101"}}'
    )
    assert parse_decision(text, TOOL_NAMES) == ("", (STATUS_101,))


def test_tool_arguments_keep_every_field():
    text = '{"tool": "createRefundDraft", "arguments": {"orderId": "ORD-102", "reason": "too small"}}'
    _, calls = parse_decision(text, TOOL_NAMES)
    assert calls == (ModelToolCall("createRefundDraft", {"orderId": "ORD-102", "reason": "too small"}),)


@pytest.mark.parametrize(
    "text, answer",
    [
        ('{"answer": "Returns are accepted within 30 days."}', "Returns are accepted within 30 days."),
        ('```json\n{"answer": " Within 30 days. "}\n```', "Within 30 days."),
        ("Returns are accepted within 30 days.", "Returns are accepted within 30 days."),
        ("  A plain answer with {braces} inside.  ", "A plain answer with {braces} inside."),
    ],
)
def test_answers(text, answer):
    assert parse_decision(text, TOOL_NAMES) == (answer, ())


def test_unknown_tool_name_is_treated_as_text():
    text = '{"tool": "issueRefund", "arguments": {"orderId": "ORD-101"}}'
    assert parse_decision(text, TOOL_NAMES) == (text, ())


def test_arguments_that_are_not_an_object_become_empty():
    text = '{"tool": "getOrderStatus", "arguments": "ORD-101"}'
    assert parse_decision(text, TOOL_NAMES) == ("", (ModelToolCall("getOrderStatus", {}),))


def test_decision_schema_has_one_option_per_tool_plus_answer():
    options = decision_schema(TOOL_SPECS)["oneOf"]
    assert len(options) == len(TOOL_SPECS) + 1
    answers = [o for o in options if "answer" in o["properties"]]
    assert answers == [{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}]
    tools = {o["properties"]["tool"]["const"]: o for o in options if "tool" in o["properties"]}
    assert list(tools) == list(TOOL_NAMES)
    for spec in TOOL_SPECS:
        assert tools[spec.name]["properties"]["arguments"] == spec.parameters
        assert tools[spec.name]["required"] == ["tool", "arguments"]


def test_decision_schema_accepts_exactly_the_decisions():
    jsonschema = pytest.importorskip("jsonschema")
    schema = decision_schema(TOOL_SPECS)
    jsonschema.validate({"tool": "getOrderStatus", "arguments": {"orderId": "ORD-101"}}, schema)
    jsonschema.validate({"answer": "hi"}, schema)
    for bad in ({"tool": "issueRefund", "arguments": {}}, {"tool": "getOrderStatus", "arguments": {}}, {"text": "x"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_instructions_name_every_tool_and_its_parameters():
    text = decision_instructions(TOOL_SPECS)
    assert "- createRefundDraft(orderId, reason):" in text
    assert all(f"- {name}(" in text for name in TOOL_NAMES)
    assert '{"answer": "TEXT"}' in text


def test_a_call_written_as_the_answer_is_read_as_that_call():
    """The 1.5B model sometimes answers {"answer": "check_availability('Emma')"}: it meant the call."""
    from tracegrade.models.decisions import parse_decision

    tools, params = ["check_availability", "get_weather"], {"check_availability": ["title"],
                                                           "get_weather": ["city", "unit"]}
    assert parse_decision('{"answer": "check_availability(\'Emma\')"}', tools, params) == (
        "", (ModelToolCall("check_availability", {"title": "Emma"}),))
    assert parse_decision('`get_weather(city="Oslo", unit="C")`', tools, params) == (
        "", (ModelToolCall("get_weather", {"city": "Oslo", "unit": "C"}),))
    for answer in ['Yes: check_availability("Emma") says so.', "other_tool(1)", "get_weather(x.y)",
                   'get_weather("a", "b", "c")', "get_weather(1)+(2)", "Emma is on loan."]:
        assert parse_decision(answer, tools, params) == (answer, ()), answer
