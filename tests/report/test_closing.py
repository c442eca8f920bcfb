"""The run's closing line counts failures by whose they are, with the exit code to match."""

from __future__ import annotations

import json

from tracegrade.cli import main
from tracegrade.core.results import CaseResult, CheckResult
from tracegrade.report.closing import closing as closing_of
from tracegrade.stats.tally import RunTally

WRONG = CheckResult("toolArgument", False, "wrong_argument", "expected ORD-1")


def closing(run_id: str, results: list[CaseResult]) -> tuple[str, int]:
    tally = RunTally()
    for r in results:
        tally.add(r)
    return closing_of(run_id, tally)


def result(case_id: str, status: str, checks=()) -> CaseResult:
    return CaseResult(case_id=case_id, status=status, question="q", checks=tuple(checks))


def test_unscored_only_is_not_the_agents_verdict():
    line, code = closing("r", [result("a", "unscored"), result("b", "unscored"), result("c", "pass")])
    assert code == 2
    assert "1 of 3 cases passed; 2 unscored (not a verdict on the agent: see each case's reason)" in line
    assert "failed" not in line.split(";")[1]


def test_failures_are_counted_by_checks_judge_and_agent_errors_apart():
    line, code = closing("r", [result("a", "fail", [WRONG]), result("b", "fail"), result("c", "error"),
                               result("d", "error"), result("e", "unscored")])
    assert code == 1
    assert ("0 of 5 cases passed; 1 failed by the checks, 1 failed by the judge, 2 agent errors "
            "(it crashed or timed out: see each case's error), 1 unscored") in line


def test_all_passed_exits_0_without_blame():
    line, code = closing("r", [result("a", "pass")])
    assert (line, code) == ("run r finished: 1 of 1 cases passed", 0)


def test_a_crashing_agent_is_called_an_agent_error_on_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "crashy.py").write_text("def answer(question):\n    raise RuntimeError('db down')\n")
    (tmp_path / "cases.json").write_text(json.dumps([{"id": "a", "question": "hi?"}]))
    monkeypatch.chdir(tmp_path)
    code = main(["run", "cases.json", "--target", "crashy:answer", "--checks-only", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "0 of 1 cases passed; 1 agent errors (it crashed or timed out" in err
