"""One read of each stored result feeds every number of a run: the tally, and
a count of decodes over a whole `tracegrade run` (issue 15 point 7)."""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter
from dataclasses import replace

import pytest

from tracegrade import cli
from tracegrade.core.results import CaseResult, CheckResult, Manifest, MetricScore, Run
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.case.schema import GoldenCase
from tracegrade.metrics import run_metrics
from tracegrade.report import console, costs, repeats, stratified
from tracegrade.outputs.files import finish_outputs, output_writers, write_outputs
from tracegrade.stats import aggregate, summary as list_summary
from tracegrade.stats.tally import RunTally, tally
from tracegrade.store import compact

CASES = [GoldenCase(id=f"c{i}", question=f"Where is ORD-{i}?", expected_tool="getOrderStatus",
                    expected_tool_argument=f"ORD-{i}", category=("a", "b", "c")[i % 3], split=("x", "y")[i % 2])
         for i in range(12)]


def judged(i: int) -> CaseResult:
    call = ToolCall(name="getOrderStatus", arguments={"orderId": f"ORD-{i}"}, argument=f"ORD-{i}", result="ok")
    metrics = (MetricScore("correctness", i % 5 + 1.0, 3, "json"), MetricScore("relevance", None, 3, "json", "why"),
               MetricScore("tone", 0.5 + i / 100, 0.5, "probability"))
    return CaseResult(f"c{i}", ("pass", "fail", "unscored", "error")[i % 4], question="q",
                      reply=Reply(answer=f"ORD-{i} shipped.", tool_calls=(call,)),
                      checks=(CheckResult("toolChoice", i % 3 > 0),), metrics=metrics,
                      scores={m.name: m.value for m in metrics if m.value is not None}, seconds=i / 10,
                      agent_tokens=(i, 2), judge_tokens=(3, 1), attempts=("fail", "pass") if i == 5 else (),
                      split=CASES[i].split, category=CASES[i].category)


RESULTS = [judged(i) for i in range(12)]
MANIFEST = Manifest("r1", "d.json", "v1", 12, "t", "agent", "judge", None)


def test_the_tally_gives_what_the_list_functions_give():
    t = tally(RESULTS)
    assert t.totals() == aggregate.run_totals(RESULTS)
    assert t.quality() == aggregate.quality_metrics(RESULTS)
    assert t.metric_names == ["correctness", "relevance", "tone"] == list_summary.metric_names(RESULTS)
    assert t.not_scored == {"relevance": 12}
    assert t.statuses == list_summary.status_counts(RESULTS)
    assert (t.failed, t.unscored[0], t.flaky) == (["c1", "c3", "c5", "c7", "c9", "c11"], ("c2", ""),
                                                  [("c5", ("fail", "pass"), "fail")])


@pytest.mark.parametrize("costs", [[0.0] * 5, [0.0, 0.0, 0.1, 0.2, 0.0, 0.3], [-0.0, 0.0], [0.7, math.nan, 0.0], []])
def test_the_costs_sum_as_sum_over_them_while_only_zeros_are_counted(costs):
    from tracegrade.stats.tally import Summed

    summed = Summed()
    for cost in costs:
        summed.append(cost)
    total = summed.total()
    assert repr(total) == repr(sum(array("d", costs))) and len(summed) == len(costs)  # 0 for none, 0.0 for zeros
    assert (summed._values is None) == all(c == 0.0 for c in costs)  # WHY: zeros cost no memory a case


def test_a_tally_of_one_repetition_keeps_no_pass_k_counts_and_refuses_a_second():
    one, every = RunTally(repeated=False), RunTally()
    for result in RESULTS:
        one.add(result)
        every.add(result)
    assert one.trials == {} and len(every.trials) == 12  # WHY: a run of one repetition never shows pass^k
    assert one.totals() == every.totals() and "passHatK" not in one.totals()
    with pytest.raises(ValueError, match="one repetition"):
        one.pass_hat()
    with pytest.raises(ValueError, match="one repetition was given repetition 1"):
        one.add(replace(RESULTS[0], repeat=1))


class CountingResults(compact.CompactResults):
    """CompactResults that count how often each result is decoded."""

    def __init__(self, results) -> None:
        super().__init__(json.dumps(r.to_json()).encode() for r in results)
        self.decoded: Counter = Counter()

    def __iter__(self):
        for result in super().__iter__():
            self.decoded[result.case_id] += 1
            yield result

    def __getitem__(self, index):
        found = super().__getitem__(index)
        for result in found if isinstance(found, tuple) else (found,):
            self.decoded[result.case_id] += 1
        return found


def test_the_reports_and_files_of_a_judged_run_read_each_result_once(tmp_path):
    """One read gives every number (metrics, console, costs, repeats) and the three
    files: not a read per judge metric, per group, per report or per file."""
    results = CountingResults(RESULTS)
    run = Run(MANIFEST, results)  # type: ignore[arg-type]
    writers, summary = output_writers(MANIFEST), RunTally()
    metrics = run_metrics(results, CASES, readers=(summary, *writers.per_result()))
    for text in (console.final_report(run, summary), costs.render(run, summary), stratified.render(metrics)):
        assert text
    assert not repeats.wanted(run, summary)
    files = finish_outputs(writers, run, summary, metrics, tmp_path)
    assert set(results.decoded.values()) == {1}
    assert metrics.to_json() == run_metrics(RESULTS, CASES).to_json()  # the same numbers as from a list
    # The same files as written from the results alone (write_outputs: its own one read; the
    # rows of results.json encoded, not copied as stored: the same JSON, spaced differently).
    again = write_outputs(Run(MANIFEST, RESULTS), tmp_path / "again", CASES)
    assert [f.read_text() for f in files[1:]] == [f.read_text() for f in again[1:]]
    assert json.loads(files[0].read_text()) == json.loads(again[0].read_text())
    assert json.loads(files[0].read_text())["metrics"] == metrics.to_json()


def test_a_whole_tracegrade_run_reads_no_stored_result_back(tmp_path, monkeypatch, capsys):
    """One read gives the totals stored with the run, every report and every file, made as
    each case is committed (run/reading.py): no stored result is decoded back."""
    decoded: Counter = Counter()
    decode = compact._decode

    def counting(blob: bytes) -> CaseResult:
        result = decode(blob)
        decoded[result.case_id] += 1
        return result

    monkeypatch.setattr(compact, "_decode", counting)
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("".join(json.dumps(c.model_dump(by_alias=True, exclude_defaults=True)) + "\n" for c in CASES))
    code = cli.main(["run", str(dataset), "--target", "test_tally:right_target", "--checks-only", "--quiet",
                     "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    assert not decoded
    written = json.loads(next((tmp_path / "out").glob("*/results.json")).read_text())
    assert [r["case_id"] for r in written["results"]] == [c.id for c in CASES]
    assert written["manifest"]["totals"]["cases"] == len(CASES) and "metrics" in written


def right_target(case: GoldenCase) -> Reply:
    call = ToolCall(name=case.expected_tool, arguments={"orderId": case.expected_tool_argument},
                    argument=case.expected_tool_argument, result="SHIPPED")
    return Reply(answer=f"{case.expected_tool_argument} is on its way.", tool_calls=(call,))
