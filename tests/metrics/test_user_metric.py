"""A metric a user adds in a rubric file, no code: it is asked, scored, and reported everywhere."""

from __future__ import annotations

import asyncio
import math

import pytest

from support import GOLDEN, golden_reply_async
from tracegrade.compare.comparison import compare_runs
from tracegrade.compare.gate import decide
from tracegrade.core.results import Manifest, Run
from tracegrade.judge.rubric import DEFAULT_RUBRIC, load_rubric
from tracegrade.judge.scoring import Judge
from tracegrade.metrics import run_metrics
from tracegrade.models import ChatResponse
from tracegrade.models.scripted import ScriptedModel
from tracegrade.report import console, html, stratified
from tracegrade.outputs import markdown
from tracegrade.report.compare_markdown import to_markdown as compare_markdown
from tracegrade.run.runner import RunSettings, run_cases

TONE = """
  - name: tone
    measures: the answer is polite
    yesNo: Is the answer polite and calm?
    evidence: [question, answer]
"""


def rubric_with_tone(tmp_path):
    """The shipped rubric plus one yes/no metric, written by a user into their own file."""
    text = DEFAULT_RUBRIC.read_text()
    front, body = text.split("\n---\n", 1)
    path = tmp_path / "my-rubric.md"
    path.write_text(front + TONE + "---\n" + body)
    return load_rubric(path)


def judge(rubric, polite: float) -> Judge:
    """Says yes with 0.9 to every shipped question; ``polite`` is P(yes) for the tone question."""
    def reply(messages, options):
        p = polite if "polite and calm" in messages[-1].content else 0.9
        return ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))
    return Judge(ScriptedModel(reply, "judge-m", token_probabilities=True), rubric)


def a_run(rubric, polite: float, run_id: str) -> Run:
    cases = GOLDEN.cases[:4]
    results = asyncio.run(run_cases(cases, golden_reply_async, judge(rubric, polite), RunSettings()))
    manifest = Manifest(run_id, "golden.json", GOLDEN.version, len(cases), "t", "agent-m", "judge-m", rubric.hash,
                        metrics=tuple(m.name for m in rubric.metrics))
    return Run(manifest, tuple(results))


@pytest.fixture
def runs(tmp_path):
    rubric = rubric_with_tone(tmp_path)
    return a_run(rubric, 0.8, "base"), a_run(rubric, 0.2, "cand")


def test_the_user_metric_is_asked_and_scored_from_probabilities(runs):
    base, cand = runs
    for result in base.results:
        tone = next(m for m in result.metrics if m.name == "tone")
        assert (round(tone.value, 6), tone.source, tone.passed) == (0.8, "probability", True)
    assert all(r.status == "fail" and r.scores["tone"] == pytest.approx(0.2) for r in cand.results)
    assert base.manifest.metrics[-1] == "tone"


def test_the_user_metric_is_in_the_per_case_block(runs):
    block = console.case_block(runs[1].results[0])
    line = next(line for line in block.splitlines() if " tone " in f" {line} ")
    assert line.split()[:4] == ["tone", "0.20", "probability", "FAIL"]


def test_the_user_metric_is_in_the_averages(runs):
    assert "tone 0.80" in console.final_report(runs[0])
    table = markdown.to_markdown(runs[0])
    assert "| relevance | correctness | faithfulness | helpfulness | hallucinationFree | completeness | tone |" in table


def test_the_user_metric_is_in_the_html_report(runs):
    page = html.to_html(runs[1])
    assert "avg tone" in page and "0.20" in page
    # Each case row names it as the failing metric, and each case detail has it in its score table.
    assert page.count("<td>tone</td>") == 2 * len(runs[1].results)
    assert 'aria-label="tone"' in page  # its distribution chart


def test_the_user_metric_is_a_column_of_the_stratified_table(runs):
    text = stratified.render(run_metrics(runs[0].results, GOLDEN.cases))
    header = next(line for line in text.splitlines() if line.strip().startswith("split"))
    assert header.split()[-2] == "tone"
    assert "judge.tone" in run_metrics(runs[0].results, GOLDEN.cases).overall


def test_the_user_metric_is_a_row_of_compare(runs):
    comparison = compare_runs(*runs)
    row = comparison.metric("tone")
    assert (row.baseline, row.candidate) == (pytest.approx(0.8), pytest.approx(0.2))
    assert row.delta == pytest.approx(-0.6)
    assert any(line.startswith("| tone | 0.80 | 0.20 | -0.60 |") for line in
               compare_markdown(comparison, decide(comparison), 0.05).splitlines())
