"""The streamed results file: one JSON document, the manifest indented, one case per line."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tracegrade.core.results import CheckResult
from tracegrade.outputs import json_report
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.core.trace import Reply, Step, ToolCall


def a_run(count: int) -> Run:
    reply = Reply(answer="Zurückgeben?\nJa — \"innerhalb\" von 30 Tagen.", retrieved_sources=("return-policy.md",),
                  tool_calls=(ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-102"}, argument="ORD-102",
                                       result="DELIVERED"),),
                  steps=(Step(kind="model", name="round 1", duration_ms=12.5),), context="SOURCE: x\n# Policy")
    results = tuple(
        CaseResult(case_id=f"case-{n}", status="pass" if n % 2 else "fail", question="Q?", reply=reply if n % 3 else None,
                   checks=(CheckResult("toolChoice", True), CheckResult("source", False, "wrong_source", "got x")),
                   scores={"relevance": 5, "correctness": 4} if n % 2 else None, seconds=0.25 * n,
                   agent_tokens=(10, 5), attempts=("fail", "pass"))
        for n in range(count)
    )
    manifest = Manifest(run_id="r1", dataset="d.json", dataset_version="v1", case_count=count, target="t",
                        agent_model="a", judge_model=None, rubric_hash=None, settings={"only": [], "x": {"y": 1}})
    return Run(manifest, results)


def one_dump(run: Run, metrics=None) -> str:
    data = run.to_json() if metrics is None else {**run.to_json(), "metrics": metrics}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("count", [0, 1, 4])
@pytest.mark.parametrize("metrics", [None, {"toolAccuracy": 0.75, "bySplit": {"nominal": [1, 2]}}])
def test_streamed_file_is_the_same_document(tmp_path, count, metrics):
    run = a_run(count)
    path = json_report.write(run, tmp_path / "results.json", metrics)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(one_dump(run, metrics))
    assert json_report.read(path) == run
    case_lines = [line for line in text.splitlines() if line.startswith('    {"case_id"')]
    assert len(case_lines) == count  # one line per case, newlines inside strings escaped
    assert text.startswith('{\n  "manifest": {\n    "run_id": "r1",')


def test_case_json_matches_asdict():
    result = a_run(2).results[1]
    expected = dataclasses.asdict(result)
    expected["reply"] = result.reply.to_wire()
    expected["scores"] = dict(result.scores)
    del expected["stored"]  # a cache of the stored form a Ray worker made, not part of the result
    assert json.dumps(result.to_json(), sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_rows_come_out_whole_and_in_order_across_batches_and_past_the_spill():
    import io

    from tracegrade.outputs.streamed import Rows

    rows = Rows()
    written = [f"row {n} " + "é" * (n % 7) + "x" * 20_000 + "\n" for n in range(Rows.BATCH * 2 + 5)]  # ~2.6 MB: spilled
    for row in written:
        rows.write(row)
    out = io.StringIO()
    rows.copy_to(out)
    assert rows.count == len(written) and out.getvalue() == "".join(written)
