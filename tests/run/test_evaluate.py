"""The public API: tracegrade.evaluate does what `tracegrade run` does."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass

import pytest

import tracegrade
from tracegrade import CheckResult, Reply, ToolCall
from tracegrade.core.errors import ConfigError
from tracegrade.store.runstore import open_store

CASES = [
    {"id": "lookup", "question": "Status of T-1?", "expectedTool": "getTicket", "expectedToolArgument": "T-1"},
    {"id": "faq", "question": "Opening hours?", "answerMustInclude": ["9:00"]},
]


async def agent(case) -> Reply:
    if case.id == "lookup":
        return Reply(answer="T-1 is open.", tool_calls=(ToolCall(name="getTicket", argument="T-9",
                                                                 arguments={"id": "T-9"}, result="open"),))
    return Reply(answer="We open at 9:00.")


@dataclass(frozen=True)
class Short:
    name: str = "short"

    def applies(self, case) -> bool:
        return case.id == "faq"

    def __call__(self, case, reply) -> CheckResult:
        return CheckResult(self.name, len(reply.answer) < 10, "too_long", f"{len(reply.answer)} characters")


def test_evaluate_runs_checks_stores_and_writes_files(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    run = tracegrade.evaluate(CASES, agent, judge=None, checks=[Short()], store=url, out=tmp_path / "out")
    by_id = {r.case_id: r for r in run.results}
    assert [(c.name, c.code) for c in by_id["lookup"].failed_checks()] == [("toolArgument", "wrong_argument")]
    assert [(c.name, c.code) for c in by_id["faq"].failed_checks()] == [("short", "too_long")]
    assert run.status == "finished" and run.pass_rate == 0.0 and not run.passed
    with open_store(url) as store:
        assert store.load_run(run.manifest.run_id).results == run.results
    files = sorted(p.name for p in (tmp_path / "out" / run.manifest.run_id).iterdir())
    assert files == ["junit.xml", "results.json", "summary.md"]


def test_on_finish_sees_the_runs_tally_metrics_and_files(tmp_path):
    finished: list[tracegrade.Evaluation] = []
    run = tracegrade.evaluate(CASES, agent, judge=None, store=f"sqlite:///{tmp_path / 'runs.db'}",
                              out=tmp_path / "out", on_finish=finished.append)
    (evaluation,) = finished
    assert evaluation.run == run and evaluation.summary.cases == 2 and evaluation.summary.failed == ["lookup"]
    assert evaluation.metrics.overall["passRate"].value == 0.5
    assert evaluation.metrics.overall["tools.argExact"].value == 0.0  # the right tool, the wrong argument
    assert [f.name for f in evaluation.files] == ["results.json", "junit.xml", "summary.md"]
    assert all(f.parent.name == run.manifest.run_id and f.stat().st_size for f in evaluation.files)


def test_the_async_twin_and_resume_finish_a_run(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        first = asyncio.run(tracegrade.evaluate_async(CASES[:1], agent, judge=None, store=store))
        assert store.info(first.manifest.run_id).status == "finished"
        with pytest.raises(ConfigError, match="already finished"):
            tracegrade.evaluate(CASES[:1], agent, judge=None, store=store, resume=first.manifest.run_id)


def test_a_target_nobody_listens_on_fails_before_any_case_and_stores_nothing(tmp_path):
    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(ConfigError, match=rf"target http://127.0.0.1:{port}/chat: cannot connect"):
        tracegrade.evaluate(CASES, f"http://127.0.0.1:{port}/chat", judge=None, store=url)
    with open_store(url) as store:
        assert store.runs(limit=5) == []


def test_the_public_names_are_exported_lazily():
    assert set(tracegrade.__all__) >= {"evaluate", "evaluate_async", "Dataset", "Case", "Reply", "ToolCall",
                                       "Check", "CheckResult", "Judge", "Run", "write_html"}
    assert isinstance(Short(), tracegrade.Check)
    with pytest.raises(AttributeError):
        tracegrade.nothing_here


def test_results_json_holds_each_case_as_the_store_holds_it(tmp_path):
    import json
    import sqlite3

    run = tracegrade.evaluate(CASES, agent, judge=None, store=f"sqlite:///{tmp_path / 'runs.db'}", out=tmp_path / "out")
    stored = [row[0] for row in sqlite3.connect(tmp_path / "runs.db").execute(
        "SELECT result FROM case_results ORDER BY position")]
    lines = (tmp_path / "out" / run.manifest.run_id / "results.json").read_text().splitlines()
    rows = [line.strip().rstrip(",") for line in lines if line.startswith("    {")]
    assert rows == stored  # copied, not decoded and encoded again
    assert [json.loads(r)["case_id"] for r in rows] == [r.case_id for r in run.results]


@pytest.mark.slow  # mypy --strict over the package
def test_every_public_name_is_in_the_literal_all_and_typed_for_users(tmp_path):
    """__all__ is what mypy --strict lets a user import; _EXPORTS is what loads."""
    import subprocess
    import sys

    assert set(tracegrade.__all__) == {"__version__", *tracegrade._EXPORTS}
    user = tmp_path / "user.py"
    user.write_text(
        "from tracegrade import Case, Reply, ToolCall, evaluate, render_console\n\n\n"
        "def agent(question: str) -> Reply:\n"
        "    call = ToolCall(name='lookup', arguments={'q': question}, result='x')\n"
        "    return Reply(answer='ok', tool_calls=(call,))\n\n\n"
        "def by_case(case: Case) -> str:\n"
        "    return case.question\n\n\n"
        "run = evaluate([], agent, judge=None)\n"
        "print(run.pass_rate, render_console)\n")
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(user)],
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout


# Issue 34: what a report calls the dataset and the agent.
def test_a_run_names_its_dataset_as_the_file_declares_and_its_agent_by_module(tmp_path, monkeypatch):
    import json

    from tracegrade.report.console import final_report

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "library.json").write_text(json.dumps({"name": "city-library", "cases": CASES}))
    run = tracegrade.evaluate("evals/library.json", agent, judge=None, store=f"sqlite:///{tmp_path}/r.db",
                              out=tmp_path / "out")
    settings = run.manifest.settings
    assert (run.manifest.dataset, settings["datasetName"]) == ("library.json", "city-library")
    assert settings["datasetFile"] == "evals/library.json"
    assert settings["datasetPath"] == str(tmp_path.resolve() / "evals" / "library.json")
    assert run.manifest.agent_model == "test_evaluate:agent"  # an openai and an anthropic agent's `answer` differ
    assert "dataset   city-library (library.json)" in final_report(run)
    summary = (tmp_path / "out" / run.manifest.run_id / "summary.md").read_text()
    assert summary.startswith("### tracegrade: city-library (library.json)")


def test_a_target_module_that_raises_on_import_is_one_line(tmp_path, monkeypatch, capsys):
    from tracegrade.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_agent.py").write_text("import os\n\nKEY = os.environ['HELPDESK_KEY_NOT_SET']\n")
    (tmp_path / "cases.json").write_text(__import__("json").dumps(CASES))
    code = main(["run", "cases.json", "--target", "broken_agent:answer", "--checks-only", "--db",
                 f"sqlite:///{tmp_path}/r.db"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "tracegrade: error: target 'broken_agent:answer': loading broken_agent raised KeyError: "
        "'HELPDESK_KEY_NOT_SET' (at broken_agent.py:3; `python -c 'import broken_agent'` shows the whole traceback)")
    assert "Traceback" not in err


def test_run_help_documents_every_exit_code(capsys):
    """Issue 34: the help said 0, 1 and 3; a broken run exits 2, as the README says."""
    from tracegrade.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in ("0 every case passed", "1 some case failed", "2 a broken run", "3 --budget stopped the run"):
        assert said in text, said
