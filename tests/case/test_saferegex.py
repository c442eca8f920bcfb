"""Issue 23: bounded work on untrusted text. A dataset's ``$regex``, a tool schema's
``pattern``, redaction and the money/number/date readers meet agent output; each
attack of the issue is replayed here at a size where the old code took minutes.

WHY no timing assertion: the attacks are run under the case deadline (the run
records a timeout as an error) or in a worker thread joined with a generous
limit, so a regression shows as a failed or timed-out case, not a flaky number."""

from __future__ import annotations

import json
import threading

import pytest

from tracegrade.core.redact import redact
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.case.saferegex import PatternError, compile_pattern, search
from tracegrade.case.textnorm import dates_in, money_in, numbers_in
from tracegrade.run.evaluate import evaluate
from tracegrade.run.runner import RunSettings

EVIL = r"^(a+)+$"
TOO_MANY_A = "a" * 5_000 + "!"  # Python's re: ~2**5000 steps; RE2: one pass


def test_a_catastrophic_pattern_is_matched_in_one_pass():
    assert compile_pattern(EVIL).search(TOO_MANY_A) is None and search(EVIL, "aaaa")


@pytest.mark.parametrize("pattern, words", [
    (r"(?=x)y", "look-around and back-references are not supported"),
    (r"(a)\1", "look-around and back-references are not supported"),
    ("(", "missing ): ("),
])
def test_a_pattern_re2_refuses_is_a_named_error(pattern, words):
    with pytest.raises(PatternError, match=words.replace("(", r"\(").replace(")", r"\)")):
        compile_pattern(pattern)


def test_a_non_text_pattern_is_a_named_error():
    with pytest.raises(PatternError, match="must be text, not list"):
        compile_pattern(["a"])  # type: ignore[arg-type]


def write_dataset(tmp_path, cases, tools=()):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"name": "d", "tools": list(tools), "cases": cases}))
    return load_dataset(path)


def test_a_dataset_regex_with_look_ahead_is_refused_when_it_loads(tmp_path):
    from tracegrade.core.errors import DatasetError

    with pytest.raises(DatasetError, match="RE2"):
        write_dataset(tmp_path, [{"id": "a", "question": "q", "calls": {"expected": [
            {"tool": "t", "arguments": {"x": {"$regex": "(?=a)"}}}]}}])


def test_a_backtracking_regex_case_a_hostile_tool_result_and_a_plain_case_all_finish(tmp_path):
    """The issue's "Done when", as a library call: each case is graded, none times out."""
    tools = [{"name": "lookup", "writes": False, "parameters": {
        "type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}}}]
    dataset = write_dataset(tmp_path, [
        {"id": "regex", "question": "regex", "calls": {"expected": [
            {"tool": "lookup", "arguments": {"code": {"$regex": EVIL}}}]}},
        {"id": "big-result", "question": "big", "calls": {"expected": [{"tool": "lookup"}]}},
        {"id": "plain", "question": "plain"},
    ], tools)

    async def agent(case: GoldenCase) -> Reply:
        if case.id == "regex":
            return Reply(answer="done", tool_calls=(ToolCall(name="lookup", arguments={"code": TOO_MANY_A}),))
        if case.id == "big-result":  # 400 KB of what made redaction quadratic
            return Reply(answer="1." * 20_000, tool_calls=(ToolCall(name="lookup", result="a." * 200_000),))
        return Reply(answer="plain")

    run = evaluate(dataset, agent, judge=None, settings=RunSettings(checks_only=True, timeout_s=10),
                   store=f"sqlite:///{tmp_path / 'runs.db'}")

    status = {r.case_id: r for r in run.results}
    assert run.status == "finished" and set(status) == {"regex", "big-result", "plain"}
    regex = status["regex"]
    assert regex.status == "fail" and not regex.error  # graded, not timed out
    failed = {c.name for c in regex.failed_checks()}
    assert {"toolSchema", "expectedCalls"} <= failed
    assert status["big-result"].status == "pass" and status["plain"].status == "pass"


def finishes(work, limit_s: float = 60.0) -> None:
    """``work()`` completes in a thread within ``limit_s`` (the old quadratic code took minutes)."""
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(limit_s)
    assert not worker.is_alive(), "still running: the work is not linear in the text"


@pytest.mark.parametrize("unit", ["a.", "1.", "sk-", "'0", "a@", "//a", "+1 ", "-----BEGIN PRIVATE KEY-----!"])
def test_redaction_of_400_kb_of_hostile_text_finishes(unit):
    # The issue: 200 KB of "a." cost ~40 s per case; "'0" took 5.8 s for 16 KB in $money.
    text = unit * (400_000 // len(unit))
    finishes(lambda: redact(text))


@pytest.mark.parametrize("unit", ["1.", "'0", "1 ", "1,"])
def test_money_numbers_and_dates_in_100k_characters_finish(unit):
    # The issue: $money on 40,000 characters of "1." took 55-62 s.
    text = unit * (100_000 // len(unit))
    finishes(lambda: (money_in(text), numbers_in(text), dates_in(text)))


def test_many_distinct_dates_are_read_in_order_without_duplicates():
    text = " ".join(f"{day:02d}.{month:02d}.2026" for month in range(1, 13) for day in range(1, 29)) * 2
    found = dates_in(text)
    assert len(found) == 12 * 28 and found == sorted(found)


@pytest.mark.parametrize("text, found", [
    ("write to ann.lee@example.com today", "write to [REDACTED_EMAIL] today"),
    ("a.b.c ann@example.com", "a.b.c [REDACTED_EMAIL]"),
    ("x" * 50 + " key sk-live-0123456789abcdef", "x" * 50 + " key [REDACTED_KEY]"),
])
def test_the_linear_patterns_still_find_what_they_found(text, found):
    assert redact(text) == found


@pytest.mark.parametrize("text, amounts", [
    ("€1,250 or 300 dollars", [(1250.0, "EUR"), (300.0, "USD")]),
    ("EUR 1.250,50 and 9,90 EUR", [(1250.5, "EUR"), (9.9, "EUR")]),
    ("1'250 CHF", [(1250.0, "CHF")]),
])
def test_money_still_reads_amounts_where_a_run_of_digits_starts(text, amounts):
    assert money_in(text) == amounts


@pytest.mark.parametrize("text", ["\t" * 100_000, " \n" * 50_000, "|---" * 25_000])
def test_the_format_metric_on_100k_characters_finishes(text):
    # A line of 16,000 tabs took 1.8 s in the table pattern (quadratic); the metric reads every answer.
    from tracegrade.metrics.generation import markdown_problems

    finishes(lambda: markdown_problems(text))


@pytest.mark.parametrize("answer, problems", [
    ("| a | b |\n|---|---|\n| 1 | 2 |", ["table"]), ("x\n  | --- | :---: |\n", ["table"]),
    ("text\n   ```py\ncode\n```", ["code fence"]), ("# Title\nbody", ["header"]), ("a - b --- c", []),
])
def test_the_format_metric_still_finds_tables_fences_and_headers(answer, problems):
    from tracegrade.metrics.generation import markdown_problems

    assert markdown_problems(answer) == problems
