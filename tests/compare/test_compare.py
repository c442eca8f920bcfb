"""`tracegrade compare` end to end: run ids, latest/previous, results files;
console, Markdown and JSON outputs; exit 0 pass, 1 block, 2 warn, 3 error."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from runs_support import GOLDEN_PATH, result, run, scores
from tracegrade.cli import main
from tracegrade.outputs import json_report
from tracegrade.store.runstore import open_store

GATE_FAST = "[statistics]\nbootstrap_resamples = 200\n"


@pytest.fixture
def gate(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text(GATE_FAST)
    return str(path)


def files(tmp_path, base_results, cand_results):
    base, cand = tmp_path / "base.json", tmp_path / "cand.json"
    json_report.write(run(base_results, "base-run"), base)
    json_report.write(run(cand_results, "cand-run"), cand)
    return str(base), str(cand)


def twenty(**kwargs):
    return [result(f"c{i:02}", score=scores(5), **kwargs) for i in range(20)]


def test_pass_exits_0_and_writes_markdown_and_json(tmp_path, gate, capsys):
    base, cand = files(tmp_path, twenty(), twenty())
    md, verdict = tmp_path / "compare.md", tmp_path / "verdict.json"
    assert main(["compare", base, cand, "--gate", gate, "--markdown", str(md), "--json", str(verdict)]) == 0
    out = capsys.readouterr().out
    assert "VERDICT: PASS (exit 0)" in out and "p Wilcoxon" in out and "No difference is statistically significant" in out
    assert md.read_text().startswith("### tracegrade compare: ✅ PASS")
    data = json.loads(verdict.read_text())
    assert (data["verdict"], data["exitCode"], len(data["casesCompared"])) == ("pass", 0, 20)
    assert data["metrics"][0]["name"] == "taskSuccess" and data["metrics"][0]["tests"]["mcnemar"]["pValue"] == 1.0


def test_a_significant_drop_blocks_with_exit_1_and_says_it_is_significant(tmp_path, gate, capsys):
    worse = [replace(r, status="fail", scores=scores(5, correctness=2)) if i < 10 else r for i, r in enumerate(twenty())]
    base, cand = files(tmp_path, twenty(), worse)
    md = tmp_path / "compare.md"
    assert main(["compare", base, cand, "--gate", gate, "--markdown", str(md)]) == 1
    out = capsys.readouterr().out
    assert "task_success_drop" in out and "Significant at alpha 0.05: taskSuccess -50.0 pp (p=0.00195)" in out
    assert "⛔ BLOCK" in md.read_text() and "`c00`" in md.read_text()


def test_warn_only_exits_2(tmp_path, gate):
    slightly = [replace(r, scores=scores(5, helpfulness=4)) if i < 7 else r for i, r in enumerate(twenty())]  # -7%
    assert main(["compare", *files(tmp_path, twenty(), slightly), "--gate", gate]) == 2


def test_errors_exit_3_never_2(tmp_path, gate, capsys):
    base, _ = files(tmp_path, twenty(), twenty())
    assert main(["compare", base, str(tmp_path / "missing.json"), "--gate", gate]) == 3
    other = tmp_path / "other.json"
    json_report.write(run(twenty(), "other", version="v2"), other)
    assert main(["compare", base, str(other), "--gate", gate]) == 3
    assert "--allow-dataset-change" in capsys.readouterr().err
    assert main(["compare", base, str(other), "--gate", gate, "--allow-dataset-change"]) == 0


def test_could_not_compare_still_writes_the_json_and_markdown_with_the_reason(tmp_path, gate):
    base, _ = files(tmp_path, twenty(), twenty())
    other = tmp_path / "other.json"
    json_report.write(run(twenty(), "other", version="v2"), other)
    md, verdict = tmp_path / "out" / "compare.md", tmp_path / "out" / "verdict.json"
    assert main(["compare", base, str(other), "--gate", gate, "--markdown", str(md), "--json", str(verdict)]) == 3
    data = json.loads(verdict.read_text())
    assert (data["verdict"], data["exitCode"]) == ("error", 3) and "different dataset versions" in data["error"]
    assert (data["baseline"], data["candidate"]) == (base, str(other))
    assert "could not compare" in md.read_text() and "different dataset versions" in md.read_text()


def test_latest_and_previous_come_from_the_store(tmp_path, monkeypatch, gate, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    monkeypatch.setenv("TG_SLOW_S", "0")
    common = ["--target", "runs_support:slow_target", "--checks-only", "--quiet", "--out", str(tmp_path / "out")]
    assert main(["run", str(GOLDEN_PATH), *common]) == 0
    assert main(["run", str(GOLDEN_PATH), "--only", "rag-return-01", *common]) == 0  # a run on the same dataset file
    with open_store() as store:
        newest, older = [i.run_id for i in store.runs()]
    capsys.readouterr()
    assert main(["compare", "previous", "latest", "--gate", gate]) == 0
    out = capsys.readouterr().out
    assert f"baseline   {older}" in out and f"candidate  {newest}" in out
    # A selection of the same file is the same dataset version: compared on the shared case, said so.
    assert "1 cases compared" in out and "11 cases only in the baseline" in out


def test_history_lists_runs_and_puts_latest_next_to_previous(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    monkeypatch.setenv("TG_SLOW_S", "0")
    common = ["--target", "runs_support:slow_target", "--checks-only", "--quiet", "--out", str(tmp_path / "out")]
    assert main(["history"]) == 0
    assert "no runs" in capsys.readouterr().out
    for _ in range(2):
        assert main(["run", str(GOLDEN_PATH), *common]) == 0
    capsys.readouterr()
    assert main(["history", "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("golden-dataset.json") >= 3 and "12/12" in out and "finished" in out
    assert "LATEST vs PREVIOUS on golden-dataset.json" in out
    assert "taskSuccess" in out and "+0.0 pp" in out and "latency p95 (s)" in out


def test_compare_reports_match_their_snapshots():
    from snapshot_support import assert_matches_snapshot  # one snapshot helper for every report
    from tracegrade.compare.comparison import compare_runs
    from tracegrade.compare.gate import decide
    from tracegrade.report import compare_console, compare_markdown

    base = [result(f"c{i:02}", score=scores(5), seconds=1.0 + i / 10, cost=0.002, risk="high" if i < 2 else "low",
                   split="adversarial" if i < 2 else "nominal") for i in range(8)]
    cand = [replace(r, status="fail", scores=scores(5, correctness=2)) if r.case_id in ("c00", "c05") else
            replace(r, scores=scores(5, helpfulness=4)) for r in base]
    comparison = compare_runs(run(base, "20260101-000000-aaaaaa"), run(cand, "20260102-000000-bbbbbb"), resamples=500)
    verdict = decide(comparison)
    assert_matches_snapshot(compare_console.render(comparison, verdict, 0.05) + "\n", "compare_console.txt")
    assert_matches_snapshot(compare_markdown.to_markdown(comparison, verdict, 0.05), "compare_markdown.md")


def test_history_shows_how_many_trials_pass_hat_k_counted_unscored(tmp_path):
    """An unscored trial counts in pass^k as not passed (issue 47): the history says how many there were."""
    import re

    import tracegrade
    from tracegrade.agent.capture.target import PROVENANCE_SET
    from tracegrade.core.trace import Provenance, Reply, ToolCall
    from tracegrade.report.history import latest_vs_previous

    def agent(unscored_trials: set[int]):
        async def answer(case) -> Reply:
            absent = int(case.trial.rsplit("/", 1)[1]) in unscored_trials
            return Reply(answer="ok", tool_calls=() if absent else (ToolCall(name="lookup"),),
                         provenance=Provenance(source="absent", via="openai") if absent else None)
        setattr(answer, PROVENANCE_SET, True)  # WHY: stands for `grade`'s recorded traces, some without calls
        return answer

    cases = [{"id": "a", "question": "q", "calls": {"expected": [{"tool": "lookup"}]}}]
    settings = tracegrade.RunSettings(checks_only=True, repeat=3)
    runs = [tracegrade.evaluate(cases, agent(unscored), judge=None, settings=settings,
                                store=f"sqlite:///{tmp_path}/r.db") for unscored in (set(), {1})]
    row = next(line for line in latest_vs_previous(runs[1], runs[0]).splitlines() if "unscored trials" in line)
    assert re.search(r"unscored trials \(in pass\^k\)\s+0\s+1\b", row), row
