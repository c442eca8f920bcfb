"""`tracegrade report`: which run RUN names, and what the HTML file holds.
(The page itself is exercised in Chromium by test_browser.py.)"""

from __future__ import annotations

import pytest

from tracegrade.core.results import CheckResult
from tracegrade.cli import main
from tracegrade.cli.report import load_run
from tracegrade.core.errors import TracegradeError
from judge_rubrics import SEED_METRICS as METRICS
from tracegrade.report import html
from tracegrade.outputs import json_report
from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.store.runstore import open_store
from tracegrade.core.trace import Reply, ToolCall


def make_run(run_id: str, answer: str = "Returns are accepted within 30 days.") -> Run:
    manifest = Manifest(run_id, "golden.json", "v1hash", 2, "shopnest", "m", "j", "r", started_at="t0", ended_at="t1")
    reply = Reply(answer=answer, tool_calls=(ToolCall(name="getOrderStatus", argument="ORD-101", result="SHIPPED"),))
    return Run(manifest, (
        CaseResult("rag-return-01", "pass", question="How long?", reply=reply, split="nominal",
                   checks=(CheckResult("answerPresent", True),), scores={m: 5 for m in METRICS}, judge_reason="fine"),
        CaseResult("tool-status-01", "fail", question="Where?", reply=reply, split="edge",
                   checks=(CheckResult("toolArgument", False, "wrong_argument", "expected ORD-101"),)),
    ))


@pytest.fixture
def runs_dir(tmp_path):
    folder = tmp_path / "runs"
    for run_id in ("20260601-090000-aaaaaa", "20260602-090000-bbbbbb", "20260603-090000-cccccc"):
        json_report.write(make_run(run_id), folder / run_id / "results.json")
    return folder


@pytest.fixture
def empty_store(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def test_run_names_resolve_from_the_results_folders(runs_dir, empty_store):
    assert load_run("latest", empty_store, runs_dir).manifest.run_id == "20260603-090000-cccccc"
    assert load_run("previous", empty_store, runs_dir).manifest.run_id == "20260602-090000-bbbbbb"
    assert load_run("20260601", empty_store, runs_dir).manifest.run_id == "20260601-090000-aaaaaa"
    path = runs_dir / "20260602-090000-bbbbbb" / "results.json"
    assert load_run(str(path), empty_store, runs_dir).manifest.run_id == "20260602-090000-bbbbbb"
    with pytest.raises(TracegradeError, match="ambiguous"):
        load_run("2026060", empty_store, runs_dir)
    with pytest.raises(TracegradeError, match="no run matching 'nope'"):
        load_run("nope", empty_store, runs_dir)


def test_the_run_store_wins_over_the_folders(runs_dir, empty_store):
    stored = make_run("20260604-090000-dddddd")
    with open_store(empty_store) as store:
        store.start_run(stored.manifest)
        for position, result in enumerate(stored.results):
            store.save_case(stored.manifest.run_id, result, position)
        store.finish_run(stored.manifest)
    assert load_run("latest", empty_store, runs_dir).manifest.run_id == "20260604-090000-dddddd"
    assert [r.case_id for r in load_run("20260604", empty_store, runs_dir).results] == ["rag-return-01", "tool-status-01"]


def test_report_command_writes_the_html_file(runs_dir, empty_store, tmp_path, capsys):
    out = tmp_path / "out" / "report.html"
    assert main(["report", "latest", "--html", "-o", str(out), "--db", empty_store, "--runs-dir", str(runs_dir)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "20260603-090000-cccccc" in page
    assert 'data-status="fail"' in page and 'data-split="edge"' in page and "wrong_argument" in page
    assert main(["report", "latest", "--html", "--db", empty_store, "--runs-dir", str(runs_dir)]) == 0
    assert (runs_dir / "20260603-090000-cccccc" / "report.html").is_file()
    assert main(["report", "previous", "--db", empty_store, "--runs-dir", str(runs_dir)]) == 0
    assert "FINAL REPORT" in capsys.readouterr().out


def test_html_escapes_and_redacts_what_the_agent_said():
    page = html.to_html(make_run("r1", answer="<script>alert(1)</script> mail ann@example.com"))
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "ann@example.com" not in page and "[REDACTED_EMAIL]" in page
    assert "<link" not in page and 'src="http' not in page  # nothing to fetch


def test_a_run_without_scores_says_so():
    run = make_run("r1")
    unscored = Run(run.manifest, tuple(CaseResult(r.case_id, r.status, split=r.split) for r in run.results))
    assert "No judge scores in this run." in html.to_html(unscored)


def test_tool_arguments_show_as_json_not_python_repr():
    run = make_run("20260601-090000-aaaaaa")
    call = ToolCall(name="createRefundDraft", arguments={"orderId": "ORD-102", "express": True, "note": None})
    reply = Reply(answer="Drafted.", tool_calls=(call,))
    page = html.to_html(Run(run.manifest, (CaseResult("c1", "pass", reply=reply),)))
    assert "{&quot;orderId&quot;: &quot;ORD-102&quot;, &quot;express&quot;: true, &quot;note&quot;: null}" in page
    assert "&#x27;orderId&#x27;" not in page and "True" not in page


def test_an_exact_run_id_wins_over_the_longer_ids_it_starts():
    """"r1" is not ambiguous because "r10" exists (the command line and the view alike)."""
    from tracegrade.store.runref import pick_prefix

    assert pick_prefix("r1", ["r10", "r1", "r11"], "here") == "r1"
    with pytest.raises(TracegradeError, match="3 runs matching 'r' in here"):
        pick_prefix("r", ["r10", "r1", "r11"], "here")
