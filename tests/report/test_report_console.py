"""The console report, compared with a stored snapshot.

After a deliberate change to the report, review the new text and store it:
``UPDATE_SNAPSHOTS=1 python -m pytest tests/report/test_report_console.py``.
"""

from __future__ import annotations

from snapshot_support import assert_matches_snapshot
from support import GOLDEN, golden_reply, scores_by_case
from judge_rubrics import SCALE_RUBRIC
from tracegrade.judge.scoring import Judge
from tracegrade.models.scripted import ScriptedModel
from tracegrade.report import console
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.run.runner import RunSettings, run_cases

# The issue's example: one answer that lost a point, one failure, one unusable judge reply.
JUDGE_TABLE = {
    "combined-return-01": {"helpfulness": 4,
                           "reason": "Helpfulness lost a point: the answer does not say how to start the return."},
    "rag-return-edge-01": {"correctness": 2, "faithfulness": 4, "helpfulness": 3,
                           "reason": "It says the window has closed, but day 30 is still inside it."},
    "tool-status-02": '{"relevance": 5, "correctness": 7, "faithfulness": 5, "helpfulness": 5, '
                      '"hallucinationFree": 5, "reason": "ok"}',
    "out-of-scope-01": {"reason": "A polite refusal of an out-of-scope question."},
}


async def agent(case):
    """The golden replies, except that the day-30 case read the wrong policy and said no."""
    reply = golden_reply(case)
    if case.id == "rag-return-edge-01":
        return reply.model_copy(update={"retrieved_sources": ("refund-policy.md",),
                                        "answer": "No. ORD-107 was delivered 30 days ago, so the window has closed."})
    return reply


async def example_run() -> Run:
    judge = Judge(ScriptedModel(scores_by_case(JUDGE_TABLE), model_id="qwen2.5-judge"), rubric=SCALE_RUBRIC)
    results = await run_cases(GOLDEN.cases, agent, judge, RunSettings(concurrency=3))
    manifest = Manifest(run_id="20260101-000000-abcdef", dataset=GOLDEN.name, dataset_version=GOLDEN.version,
                        case_count=len(results), target="shopnest", agent_model="qwen2.5-agent",
                        judge_model="qwen2.5-judge", rubric_hash="0123456789ab")
    return Run(manifest, tuple(results))


async def test_console_report_matches_the_snapshot():
    run = await example_run()
    # The version is the golden dataset's real hash; pin a stand-in so editing a case does not touch the snapshot.
    text = console.render(run).replace(GOLDEN.version, "<version>") + "\n"
    assert_matches_snapshot(text, "console_report.txt")


async def test_the_example_run_has_the_issues_counts():
    statuses = {r.case_id: r.status for r in (await example_run()).results}
    assert {k: v for k, v in statuses.items() if v != "pass"} == {"tool-status-02": "unscored",
                                                                  "rag-return-edge-01": "fail"}


def test_an_agent_error_shows_its_reason_and_counts_as_failed():
    manifest = Manifest(run_id="r", dataset="d.json", dataset_version="v", case_count=1, target="t",
                        agent_model="a", judge_model=None, rubric_hash=None)
    result = CaseResult(case_id="tool-unknown-01", status="error", question="Where is ORD-999?",
                        error="agent timed out after 600 s")
    text = console.render(Run(manifest, (result,)))
    assert "tool-unknown-01          ERROR" in text
    assert "  reason     agent timed out after 600 s" in text
    assert "cases 1   passed 0   failed 1   unscored 0" in text
    assert "average" not in text  # nothing scored, nothing to average


def test_a_metric_line_shows_its_source_verdict_and_why_not_scored_or_not_gating():
    from tracegrade.core.results import MetricScore

    metrics = (
        MetricScore("relevance", 0.93, 0.5, "probability"),
        MetricScore("correctness", None, 0.5, "probability", "not scored: the case has no reference answer"),
        MetricScore("faithfulness", 0.0, 1.0, "code", "not in the evidence: '60 days' (quantity)"),
        MetricScore("tone", 0.2, 0.5, "probability", gates=False),
    )
    block = console.case_block(CaseResult("c1", "fail", question="q", scores={"relevance": 0.93}, metrics=metrics))
    lines = [line.split() for line in block.splitlines()[3:]]
    assert lines[0] == ["scores", "relevance", "0.93", "probability", "pass", "(>=", "0.5)"]
    assert lines[1] == ["correctness", "-", "probability", "not", "scored", "the", "case", "has", "no", "reference",
                        "answer"]
    assert lines[2][:5] == ["faithfulness", "0.00", "code", "FAIL", "(>="] and "'60 days'" in " ".join(lines[2])
    assert lines[3] == ["tone", "0.20", "probability", "info", "(>=", "0.5)", "not", "allowed", "to", "gate"]
    report = console.final_report(Run(Manifest("r", "d", "v", 1, "t", "a", "j", "h"), (
        CaseResult("c1", "fail", scores={"relevance": 0.93}, metrics=metrics),)))
    assert "not scored correctness in 1 case(s)" in " ".join(report.split())


def test_a_case_block_names_each_failed_checks_code():
    """Issue 34: the console showed the detail but not the code that results.json and pytest show."""
    from tracegrade.core.results import CheckResult

    checks = (CheckResult("toolArgument", False, "wrong_argument", "expected ORD-102, got ORD-999"),
              CheckResult("answerPresent", True))
    block = console.case_block(CaseResult("c1", "fail", question="q", checks=checks))
    assert "toolArgument: wrong_argument: expected ORD-102, got ORD-999" in block


def test_the_final_report_says_each_unscored_reason_once_and_caps_the_ids():
    """A run without --capture gave every case the same long reason, once per case on one line."""
    why = "expectedCalls not judged: no model call was recorded for this case (the run has no --capture)"
    results = [CaseResult(f"u{i}", "unscored", error=why) for i in range(30)]
    results += [CaseResult("j1", "unscored", error="the judge could not answer"),
                *(CaseResult(f"f{i}", "fail") for i in range(25))]
    report = console.final_report(Run(Manifest("r", "d", "v", 1, "t", "a", "j", "h"), tuple(results)))
    assert report.count(why) == 1
    unscored = [line for line in report.splitlines() if "not judged" in line or "judge could not" in line]
    assert unscored[0].split()[:3] == ["unscored", "30", "cases"] and "u19" in unscored[0] and "u20," not in unscored[0]
    assert "(+10 more: results.json lists them all)" in unscored[0]
    assert unscored[1].split()[:4] == ["1", "case", "(j1):", "the"]
    failed = next(line for line in report.splitlines() if line.lstrip().startswith("failed "))
    assert "f19" in failed and "f20" not in failed and "(+5 more" in failed
