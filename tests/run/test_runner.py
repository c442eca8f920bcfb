"""The runner: each case's failure is contained, order is kept, concurrency is bounded.
Then full runs of the 12 golden cases: through the library with a scripted judge,
and through ``tracegrade run`` (checks only, and with a judge served over HTTP)."""

from __future__ import annotations

import asyncio
import re
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import GOLDEN, GOLDEN_PATH, full_marks, golden_reply, openai_compatible, scores_by_case, serving
from tracegrade.cli import main
from tracegrade.judge.scoring import Judge
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS, SHIPPED_METRICS
from tracegrade.models.scripted import ScriptedModel
from tracegrade.report import console
from tracegrade.outputs import json_report, junit, markdown
from tracegrade.core.results import Manifest, Run
from tracegrade.run.runner import RunSettings, evaluate_case, run_cases

CASES = GOLDEN.cases
IDS = [case.id for case in CASES]


def judge(script=full_marks) -> Judge:
    return Judge(ScriptedModel(script, model_id="scripted-judge"), rubric=SCALE_RUBRIC)


def by_id(results) -> dict:
    return {r.case_id: r for r in results}


# A bound on waiting for an event, so that a broken runner fails a test instead of
# hanging it; never reached when the code is right, whatever the machine's load.
BOUND_S = 120


# --- containment ---------------------------------------------------------------------


async def troubled_agent(case):
    """Raises on one case, hangs on another, and gives the golden reply on the rest."""
    if case.id == "tool-unknown-01":
        raise RuntimeError("order service unreachable")
    if case.id == "rag-shipping-01":
        await asyncio.sleep(30)
    return golden_reply(case)


async def test_one_bad_case_never_stops_the_run():
    garbage_judge = judge(scores_by_case({"tool-status-02": "I would rate this answer highly."}))
    settings = RunSettings(timeout_s=0.3, concurrency=4)

    results = await asyncio.wait_for(run_cases(CASES, troubled_agent, garbage_judge, settings), BOUND_S)

    assert [r.case_id for r in results] == IDS
    found = by_id(results)
    assert found["tool-unknown-01"].status == "error"
    assert re.fullmatch(r"agent failed: RuntimeError: order service unreachable \(at \S*test_runner\.py:\d+ in "
                        r"troubled_agent\)", found["tool-unknown-01"].error)  # where the agent raised it
    assert (found["rag-shipping-01"].status, found["rag-shipping-01"].error) == (
        "error", "agent timed out after 0.3 s")
    unscored = found["tool-status-02"]
    assert unscored.status == "unscored" and unscored.scores is None and unscored.judge_attempts == 3
    assert unscored.error == "judge reply unusable: not JSON: 'I would rate this answer highly.'"
    assert unscored.reply == golden_reply(CASES[IDS.index("tool-status-02")])  # the trace is kept
    assert all(c.passed for c in unscored.checks)
    troubled = {"tool-unknown-01", "rag-shipping-01", "tool-status-02"}
    assert [r.status for r in results if r.case_id not in troubled] == ["pass"] * 9
    assert found["rag-shipping-01"].reply is None and found["rag-shipping-01"].checks == ()


async def test_a_judge_that_raises_leaves_its_case_unscored_and_the_run_goes_on():
    class Buggy(Judge):
        async def score(self, case, reply):
            if case.id == "tool-status-02":
                raise TypeError("unhashable type: 'dict'")  # a bug, not a model error
            return await super().score(case, reply)

    async def agent(case):
        return golden_reply(case)

    buggy = Buggy(ScriptedModel(full_marks, model_id="scripted-judge"), rubric=SCALE_RUBRIC)
    results = await asyncio.wait_for(run_cases(CASES, agent, buggy, RunSettings(concurrency=4)), BOUND_S)
    found = by_id(results)
    assert [r.case_id for r in results] == IDS
    assert found["tool-status-02"].status == "unscored"
    assert re.fullmatch(r"judge failed: TypeError: unhashable type: 'dict' \(at \S*test_runner\.py:\d+ in score\)",
                        found["tool-status-02"].error)
    assert [r.status for r in results if r.case_id != "tool-status-02"] == ["pass"] * (len(IDS) - 1)


async def test_a_target_that_returns_no_reply_is_a_case_error():
    async def wire_only(case):
        return golden_reply(case).to_wire()  # forgot Reply.from_wire

    (result,) = await run_cases(CASES[:1], wire_only, judge())
    assert (result.status, result.error) == ("error", "agent failed: AgentError: the target returned dict, not a Reply")


async def test_a_low_score_fails_the_case_and_keeps_the_judges_reason():
    strict = judge(scores_by_case({"rag-return-edge-01": {"correctness": 2, "reason": "Hedges on day 30."}}))
    results = await run_cases(CASES, golden_reply_async_target, strict)
    edge = by_id(results)["rag-return-edge-01"]
    assert edge.status == "fail" and edge.scores["correctness"] == 2
    assert edge.judge_reason == "Hedges on day 30." and edge.error == ""
    assert sum(r.passed for r in results) == 11


async def golden_reply_async_target(case):
    return golden_reply(case)


async def test_a_failed_check_fails_the_case_whatever_the_judge_says():
    async def wrong_order(case):
        reply = golden_reply(case)
        if case.id != "tool-status-01":
            return reply
        call = reply.tool_calls[0].model_copy(update={"argument": "ORD-999"})
        return reply.model_copy(update={"tool_calls": (call,)})

    results = by_id(await run_cases(CASES, wrong_order, judge()))
    failed = results["tool-status-01"]
    assert failed.status == "fail" and failed.scores == {m: 5 for m in METRICS}
    assert [(c.name, c.code) for c in failed.failed_checks()] == [("toolArgument", "wrong_argument")]


# --- order, concurrency, callbacks ------------------------------------------------------


async def test_results_keep_dataset_order_when_cases_finish_in_reverse():
    finished = []
    reported = {case_id: asyncio.Event() for case_id in IDS}

    async def after_the_next_one(case):
        # WHY events, not sleeps of different lengths: on a loaded machine a
        # sleep gap is no ordering; here each case waits for the next one's result.
        later = IDS.index(case.id) + 1
        if later < len(IDS):
            await asyncio.wait_for(reported[IDS[later]].wait(), BOUND_S)
        return golden_reply(case)

    def on_result(result, position) -> None:
        assert IDS[position] == result.case_id  # with its case's place in the dataset (where the store keeps it)
        finished.append(result.case_id)
        reported[result.case_id].set()

    results = await run_cases(CASES, after_the_next_one, None, RunSettings(concurrency=len(CASES)),
                              on_result=on_result)
    assert finished == IDS[::-1]  # on_result sees each case as it finishes
    assert [r.case_id for r in results] == IDS


@pytest.mark.parametrize("limit", [1, 3])
async def test_the_concurrency_limit_is_respected_and_reached(limit):
    in_flight, peak = 0, 0

    full = asyncio.Event()

    async def counting(case):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == limit:
            full.set()
        # WHY wait for the limit to be reached once: with a sleep, the first cases
        # could finish before the last of the first batch started.
        await asyncio.wait_for(full.wait(), BOUND_S)
        in_flight -= 1
        return golden_reply(case)

    results = await run_cases(CASES, counting, None, RunSettings(concurrency=limit))
    assert peak == limit and len(results) == len(CASES)


async def test_checks_only_never_calls_the_judge():
    model = ScriptedModel([])  # any call would run out of replies
    results = await run_cases(CASES, golden_reply_async_target, Judge(model, SCALE_RUBRIC), RunSettings(checks_only=True))
    assert model.calls == [] and all(r.status == "pass" and r.scores is None for r in results)
    assert all(r.judge_attempts == 0 and r.judge_tokens == (0, 0) for r in results)


async def test_evaluate_case_records_the_evidence_of_one_case():
    case = CASES[IDS.index("combined-return-01")]
    result = await evaluate_case(case, golden_reply_async_target, judge(), RunSettings())
    assert (result.case_id, result.question, result.split, result.category, result.risk) == (
        case.id, case.question, "nominal", "returns", "low")
    assert [c.name for c in result.checks] == ["answerPresent", "toolChoice", "toolArgument", "source",
                                              "duplicateCalls", "answerDecision"]
    assert result.agent_tokens == (400, 20) and result.judge_tokens == (10, 5) and result.judge_attempts == 1
    assert result.seconds > 0


# --- a full library run with a scripted judge, written to every report -----------------


def manifest(judge_model: str | None = "scripted-judge") -> Manifest:
    return Manifest(run_id="run-1", dataset=GOLDEN.name, dataset_version=GOLDEN.version, case_count=len(CASES),
                    target="support:golden_reply", agent_model="golden-agent", judge_model=judge_model,
                    rubric_hash="abc123" if judge_model else None, settings={"passScore": 4})


async def test_full_run_of_the_golden_cases_with_a_scripted_judge(tmp_path):
    results = await run_cases(CASES, golden_reply_async_target, judge(), RunSettings(concurrency=4))
    assert [r.status for r in results] == ["pass"] * 12
    run = Run(manifest(), tuple(results))

    assert json_report.read(json_report.write(run, tmp_path / "results.json")) == run
    suite = ET.parse(junit.write(run, tmp_path / "junit.xml")).getroot()
    assert [t.get("name") for t in suite.iter("testcase")] == IDS
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("12", "0", "0")
    summary = markdown.write(run, tmp_path / "summary.md").read_text()
    assert "**12/12 passed**" in summary and "| 5.00 | 5.00 | 5.00 | 5.00 | 5.00 |" in summary
    assert "cases 12   passed 12   failed 0   unscored 0" in console.render(run)


# --- the CLI -------------------------------------------------------------------------------


def run_cli(tmp_path: Path, *flags: str) -> tuple[int, Path]:
    out = tmp_path / "runs"
    code = main(["run", str(GOLDEN_PATH), "--out", str(out), *flags])
    (run_dir,) = out.iterdir()
    return code, run_dir


def test_cli_checks_only_all_pass_exits_0_and_writes_every_file(tmp_path, capsys):
    code, run_dir = run_cli(tmp_path, "--target", "support:golden_reply", "--checks-only")
    assert code == 0
    assert sorted(p.name for p in run_dir.iterdir()) == ["junit.xml", "results.json", "summary.md"]

    run = json_report.read(run_dir / "results.json")
    assert run.manifest.run_id == run_dir.name
    assert (run.manifest.dataset, run.manifest.dataset_version, run.manifest.case_count) == (
        "golden-dataset.json", GOLDEN.version, 12)
    assert (run.manifest.target, run.manifest.judge_model, run.manifest.rubric_hash) == (
        "support:golden_reply", None, None)
    assert run.manifest.settings["checksOnly"] is True
    assert [r.case_id for r in run.results] == IDS and all(r.passed for r in run.results)
    assert run.results[2].reply == golden_reply(CASES[2])
    assert json.loads((run_dir / "results.json").read_text())["results"][0]["reply"]["retrievedSources"] == [
        "return-policy.md"]

    suite = ET.parse(run_dir / "junit.xml").getroot()
    assert len(list(suite.iter("testcase"))) == 12 and suite.get("failures") == "0"
    assert "**12/12 passed**" in (run_dir / "summary.md").read_text()

    printed = capsys.readouterr()
    assert "cases 12   passed 12   failed 0   unscored 0" in printed.out
    assert "judge (skipped: checks only)" in printed.out
    assert f"version {GOLDEN.version}" in printed.err


def test_cli_exits_1_when_one_case_fails(tmp_path, capsys):
    code, run_dir = run_cli(tmp_path, "--target", "support:one_wrong_argument", "--checks-only")
    assert code == 1
    run = json_report.read(run_dir / "results.json")
    assert [r.case_id for r in run.results if not r.passed] == ["tool-status-01"]
    failures = [t for t in ET.parse(run_dir / "junit.xml").getroot().iter("testcase") if t.find("failure") is not None]
    assert [t.get("name") for t in failures] == ["tool-status-01"]
    assert "wrong_argument" not in failures[0].find("failure").get("message")  # the human detail, not the code
    assert "expected getOrderStatus(ORD-101), got 'ORD-102'" in failures[0].find("failure").get("message")
    assert "| `tool-status-01` | fail | toolArgument: expected getOrderStatus(ORD-101)" in (
        run_dir / "summary.md").read_text()
    assert "  failed" in capsys.readouterr().out


def test_cli_filters_and_a_filter_that_matches_nothing(tmp_path, capsys):
    code, run_dir = run_cli(tmp_path, "--target", "support:golden_reply_async", "--checks-only",
                            "--split", "edge", "--only", "tool-status-02", "--only", "rag-return-edge-01")
    assert code == 0
    assert [r.case_id for r in json_report.read(run_dir / "results.json").results] == [
        "tool-status-02", "rag-return-edge-01"]
    assert main(["run", str(GOLDEN_PATH), "--checks-only", "--target", "support:golden_reply",
                 "--split", "nomial", "--out", str(tmp_path / "none")]) == 2
    assert "no case matches split 'nomial'" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_cli_rejects_an_unknown_target(tmp_path, capsys):
    assert main(["run", str(GOLDEN_PATH), "--checks-only", "--target", "support:no_such_function"]) == 2
    assert "cannot import" in capsys.readouterr().err


@pytest.fixture
def served_judge(monkeypatch):
    """Serve an OpenAI-compatible judge; ``--judge-model openai:fake-judge`` reaches it."""

    def serve(script):
        stack = serving(openai_compatible(script))
        url = stack.__enter__()
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
        served.append(stack)

    served: list = []
    yield serve
    for stack in served:
        stack.__exit__(None, None, None)


def test_cli_full_run_with_a_judge_over_http_exits_0(tmp_path, served_judge, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_JUDGE_CASCADE", "off")  # WHY: every metric asked of the JSON judge, faithfulness too
    served_judge(full_marks)
    code, run_dir = run_cli(tmp_path, "--target", "support:golden_reply", "--judge-model", "openai:fake-judge")
    assert code == 0
    run = json_report.read(run_dir / "results.json")
    assert run.manifest.judge_model == "fake-judge" and len(run.manifest.rubric_hash) == 12
    # The shipped rubric: three yes/no questions in one JSON reply, three metrics by code.
    assert run.manifest.metrics == SHIPPED_METRICS
    # Faithfulness: the model's yes times (2 + word overlap) / 3, so below 1 unless every word is shared.
    assert all({m.name: m.passed for m in r.metrics if m.scored} == {m: True for m in SHIPPED_METRICS}
               for r in run.results if r.scores.keys() == set(SHIPPED_METRICS))
    assert all(r.passed for r in run.results)
    assert all({m.name: m.source for m in r.metrics} == {"relevance": "json", "correctness": "json", "faithfulness": "json",
                                                       "helpfulness": "json", "hallucinationFree": "code",
                                                       "completeness": "code"}
               for r in run.results)
    assert all(r.judge_tokens == (50, 30) for r in run.results)


def test_cli_contains_an_agent_crash_and_a_garbage_judge_and_exits_1(tmp_path, served_judge, capsys, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_JUDGE_CASCADE", "off")  # WHY: every metric asked of the JSON judge, faithfulness too
    served_judge(scores_by_case({"tool-status-02": json.dumps({"relevance": "yes", "correctness": 7,
                                                             "helpfulness": "yes", "reason": ""})}))
    code, run_dir = run_cli(tmp_path, "--target", "support:agent_that_breaks", "--judge-model", "openai:fake-judge")
    assert code == 1
    found = by_id(json_report.read(run_dir / "results.json").results)
    assert found["tool-unknown-01"].status == "error"
    assert re.fullmatch(r"agent failed: RuntimeError: order service unreachable \(at \S*support\.py:\d+ in "
                        r"agent_that_breaks\)", found["tool-unknown-01"].error)
    # The code metrics still scored it; the model's metrics are not scored, with the reason,
    # and a judge that could not answer leaves the case unscored (never a pass on checks alone).
    unusable = ('judge reply unusable: correctness must be "yes" or "no", got 7; '
                'faithfulness must be "yes" or "no", got None')
    assert (found["tool-status-02"].status, found["tool-status-02"].error) == (
        "unscored", f"relevance, correctness, faithfulness, helpfulness not scored: {unusable}")
    assert {m.name: m.value for m in found["tool-status-02"].metrics if m.scored} == \
        {"hallucinationFree": 1.0, "completeness": 1.0}
    assert sum(r.passed for r in found.values()) == 10
    out = capsys.readouterr().out
    assert "cases 12   passed 10   failed 1   unscored 1" in out
    assert f"unscored 1 case (tool-status-02): relevance, correctness, faithfulness, helpfulness not scored: {unusable}" \
        in " ".join(out.split())
    suite = ET.parse(run_dir / "junit.xml").getroot()
    assert (suite.get("failures"), suite.get("errors")) == ("1", "1")


async def test_a_large_run_starts_only_concurrency_tasks_and_keeps_nothing_when_asked():
    """WHY: a task per case (100,000 waiting on a semaphore) held memory in proportion to the dataset."""
    import asyncio

    from tracegrade.core.trace import Reply
    from tracegrade.case.schema import GoldenCase
    from tracegrade.run.runner import RunSettings, run_cases

    cases = [GoldenCase(id=f"c{i}", question="q") for i in range(500)]
    peak_tasks, seen = 0, []

    async def target(case):
        nonlocal peak_tasks
        peak_tasks = max(peak_tasks, len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        return Reply(answer="a")

    kept = await run_cases(cases, target, None, RunSettings(checks_only=True, concurrency=8),
                           on_result=lambda r, position: seen.append(r.case_id), keep=False)
    assert kept == [] and sorted(seen) == sorted(c.id for c in cases)
    assert peak_tasks <= 2 * 8 + 1  # the workers, their wait_for tasks, and the test's own task
    ordered = await run_cases(cases[:50], target, None, RunSettings(checks_only=True, concurrency=8))
    assert [r.case_id for r in ordered] == [c.id for c in cases[:50]]


@pytest.mark.parametrize("text", ['plain', 'a "quote" & <tag> \'apostrophe\'', "lines\nand\ttabs\r", "Grüße — ✓", ""])
@pytest.mark.parametrize("status", ["pass", "fail", "error"])
def test_a_testcase_is_written_as_elementtree_writes_it(text, status):
    """The JUnit rows are formatted by hand for speed; ElementTree is the reference."""
    from tracegrade.core.results import CaseResult, CheckResult

    checks = (CheckResult(name="toolChoice", passed=False, detail=f"wanted {text}"),) if status == "fail" else ()
    result = CaseResult(f"case {text}", status, checks=checks, error=f"agent failed: {text}", split=text,
                        seconds=0.0125)
    expected = ET.Element("testcase", classname=f"golden.{text}", name=result.case_id, time="0.013")
    if status == "error":
        ET.SubElement(expected, "error", message=result.error)
    elif status == "fail":
        ET.SubElement(expected, "failure", message=f"toolChoice: wanted {text}")
    assert junit.testcase_xml(result, "golden") == ET.tostring(expected, encoding="unicode")
