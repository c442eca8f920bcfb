"""`tracegrade view` over a real run store (two recorded runs of the golden
dataset), through the app's routes: the landing page, a run's cases and
filters and pages, a case's trace, comparisons and diffs, history,
calibration, the Host allow-list, the token, and escaping. The browser
tests (test_view_browser.py) drive the same pages in Chromium."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from html import unescape

import pytest
from fastapi.testclient import TestClient

from runs_support import result, run
from tracegrade.core.results import CheckResult
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.store.runstore import CalibrationRecord, open_store
from tracegrade.view.app import create_view_app
from tracegrade.view.caseindex import FAILED, Filters, build_index
from tracegrade.view.shell import case_url, run_url
from view_support import ROOT, BASELINE, BROKEN, CANDIDATE, calibration, record, two_runs

HOST = "http://localhost"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('view') / 'runs.db'}")
    base, cand = two_runs(store)
    calibration(store)
    yield store, base, cand
    store.close()


@pytest.fixture
def client(recorded):
    return TestClient(create_view_app(recorded[0]), base_url=HOST)


def links(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', html)]


def rows(html: str, cls: str = "row case") -> int:
    return html.count(f'<tr class="{cls}')


def test_the_landing_page_lists_both_runs_each_linked_to_its_cases(client):
    page = client.get("/")
    assert page.status_code == 200
    assert run_url(BASELINE) in links(page.text) and run_url(CANDIDATE) in links(page.text)
    # newest first; the compare form picks the newest as candidate, the one before as baseline
    assert page.text.index(CANDIDATE) < page.text.index(BASELINE)
    assert re.search(rf'value="{BASELINE}" aria-label="baseline [^"]+" checked', page.text)
    assert re.search(rf'value="{CANDIDATE}" aria-label="candidate [^"]+" checked', page.text)


def test_a_run_page_links_every_case_to_its_page(client, recorded):
    _, _, cand = recorded
    page = client.get(run_url(CANDIDATE))
    assert rows(page.text) == len(cand.results)
    for r in cand.results:
        assert case_url(CANDIDATE, r.case_id) in links(page.text)
    failed = sum(r.status != "pass" for r in cand.results)
    assert f'<div class="label">failed</div><div class="value">{sum(r.status == "fail" for r in cand.results)}' in page.text
    assert failed > 0


def test_the_run_filters_keep_what_they_say(client, recorded):
    _, _, cand = recorded
    failed = client.get(run_url(CANDIDATE), params={"status": FAILED}).text
    assert rows(failed) == sum(r.status != "pass" for r in cand.results)
    assert 'data-status="pass"' not in failed
    by_code = client.get(run_url(CANDIDATE), params={"code": "wrong_argument"}).text
    assert rows(by_code) == 1 and case_url(CANDIDATE, "tool-status-01") in links(by_code)
    adversarial = client.get(run_url(CANDIDATE), params={"split": "adversarial"}).text
    assert rows(adversarial) == sum(r.split == "adversarial" for r in cand.results) > 0
    low = next(row for row in failed.split("</tr>") if "tool-refund-01" in row)
    assert "<td>correctness</td>" in low  # failed on a metric, no check: the metric is named
    searched = client.get(run_url(CANDIDATE), params={"q": "REFUND"}).text
    assert rows(searched) == sum("refund" in (r.case_id + r.question).lower() for r in cand.results)


def test_the_case_page_shows_the_tool_calls_with_their_arguments_on_a_timeline(client, recorded):
    _, _, cand = recorded
    broken = next(r for r in cand.results if r.case_id in BROKEN)
    page = client.get(case_url(CANDIDATE, broken.case_id)).text
    assert page.count('<tr class="step"') == len(broken.reply.steps)
    assert page.count('<tr class="toolcall"') == len(broken.reply.tool_calls) == 1
    call = re.search(r'<tr class="toolcall">.*?</tr>', page, re.S).group(0)
    assert "getOrderStatus" in call and "&quot;orderId&quot;: &quot;ORD-999&quot;" in call and "ok" in call
    # the tool call sits right after its step on the timeline
    assert page.index('data-kind="tool"') < page.index('<tr class="toolcall"') < page.rindex('data-kind="model"')
    assert "wrong_argument" in page and "scripted verdict" in page
    # the same case in the other run, one click away
    assert case_url(BASELINE, broken.case_id) in links(page)


def test_a_case_id_with_a_slash_and_repetitions_have_their_own_addresses(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a/b", reply=Reply(answer="first")), result("a/b", repeat=1, reply=Reply(answer="second"))],
                      run_id="r1"))
    client = TestClient(create_view_app(store), base_url=HOST)
    assert "first" in client.get(case_url("r1", "a/b")).text
    assert "second" in client.get(case_url("r1", "a/b", 1)).text
    assert client.get(case_url("r1", "nope")).status_code == 404


def test_pages_of_a_long_run_and_a_clamped_page_number(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result(f"c{i:03d}", "fail" if i % 3 == 0 else "pass") for i in range(120)], run_id="long"))
    client = TestClient(create_view_app(store), base_url=HOST)
    first = client.get(run_url("long")).text
    assert rows(first) == 50 and "page 1 of 3" in first and case_url("long", "c049") in links(first)
    last = client.get(run_url("long"), params={"page": 3}).text
    assert rows(last) == 20 and case_url("long", "c119") in links(last)
    assert "page 3 of 3" in client.get(run_url("long"), params={"page": 99}).text
    failed = client.get(run_url("long"), params={"status": FAILED, "page": 1}).text
    assert "1–40 of 40 cases" in failed and rows(failed) == 40
    assert f'{run_url("long")}?status=failed&amp;page=2' not in failed  # one page: no pager


def test_compare_gives_the_gates_verdict_and_the_regression_with_its_diff(client):
    page = client.get("/compare", params={"baseline": BASELINE, "candidate": CANDIDATE}).text
    assert "VERDICT: BLOCK" in page
    regressions = page.split('id="regressions"', 1)[1].split("</section>", 1)[0]
    assert "tool-status-01" in regressions
    diff = client.get(f"/compare/{BASELINE}/{CANDIDATE}/cases/tool-status-01").text
    changed = re.search(r'<tr class="changed">.*?</tr>', diff, re.S).group(0)
    baseline_cell, candidate_cell = re.findall(r"<pre>(.*?)</pre>", changed, re.S)
    assert "ORD-101" in baseline_cell and "ORD-999" in candidate_cell
    assert "the same answer in both runs" in diff


def test_compare_by_name_and_a_bad_pair_says_why(client):
    assert "VERDICT" in client.get("/compare", params={"baseline": "previous", "candidate": "latest"}).text
    page = client.get("/compare", params={"baseline": "no-such-run", "candidate": CANDIDATE})
    assert page.status_code == 200 and 'id="problem"' in page.text and "no-such-run" in page.text


def test_history_charts_each_metric_with_the_gates_lines(client):
    page = client.get("/history").text
    assert page.count('class="chart"') == 1 + 5  # task success and the five judge metrics
    assert "block below" in page and "warn below" in page


def test_calibration_shows_the_latest_per_judge_with_its_metric_table(client, recorded):
    page = client.get("/calibration").text
    result = json.loads((ROOT / "bench" / "results" / "calibrate-local.json").read_text())
    assert result["judgeModel"] in page
    table = page.split('id="calibration-table"', 1)[1].split("<tbody>", 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == len(result["metrics"])
    for metric in result["metrics"]:
        assert f"<td>{metric['metric']}</td>" in table


def test_the_metrics_page_and_the_results_download(client, recorded):
    _, _, cand = recorded
    page = client.get(run_url(CANDIDATE) + "/metrics").text
    assert "COMPONENT METRICS" in page and "STRATIFIED" in page
    assert 'failures="' in client.get(run_url(CANDIDATE) + "/junit.xml").text
    assert "tool-status-01" in client.get(run_url(CANDIDATE) + "/summary.md").text
    download = client.get(run_url(CANDIDATE) + "/results.json")
    assert download.json()["manifest"]["run_id"] == CANDIDATE
    assert [r["case_id"] for r in download.json()["results"]] == [r.case_id for r in cand.results]


def test_a_foreign_host_or_origin_is_refused(client):
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"origin": "http://attacker.example"}).status_code == 403
    assert client.get("/production/", headers={"host": "attacker.example"}).status_code == 400


def test_with_a_token_every_page_asks_for_it(recorded):
    client = TestClient(create_view_app(recorded[0], token="view-token-123"), base_url=HOST)
    assert client.get("/", headers={"accept": "text/html"}, follow_redirects=False).headers["location"] == "/login"
    assert client.get(run_url(CANDIDATE)).status_code == 401
    assert client.get("/", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"authorization": "Bearer view-token-123"}).status_code == 200
    assert client.get("/login", params={"token": "view-token-123"}).status_code == 400  # never in a URL
    assert client.post("/login", data={"token": "wrong"}).status_code == 401
    logged = client.post("/login", data={"token": "view-token-123"}, follow_redirects=False)
    assert logged.status_code == 303 and "view-token-123" not in logged.headers["set-cookie"]
    assert client.get(run_url(CANDIDATE)).status_code == 200  # the session cookie now


def test_pages_may_not_be_framed(client):
    headers = client.get("/").headers
    assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]


def test_stored_text_is_shown_escaped_and_redacted(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    answer = "<script>alert(1)</script> write to jane.doe@example.com"
    call = ToolCall(name="lookup", arguments={"q": "<img src=x onerror=alert(2)>"}, result="</pre><b>x</b>")
    record(store, run([result("c1", "fail", reply=Reply(answer=answer, tool_calls=(call,)),
                              checks=(CheckResult("x", False, "bad_<code>", "<i>detail</i>"),))], run_id="r1"))
    client = TestClient(create_view_app(store), base_url=HOST)
    for url in (case_url("r1", "c1"), run_url("r1"), run_url("r1") + "?code=bad_%3Ccode%3E"):
        page = client.get(url).text
        assert "<script>alert" not in page and "<img src=x" not in page and "<i>detail" not in page
        assert "jane.doe@example.com" not in page
    page = client.get(case_url("r1", "c1")).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "REDACTED_EMAIL" in page


def test_a_run_stored_raw_is_still_shown_redacted(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}", raw=True)  # TRACEGRADE_RAW_DATA=1 at record time
    record(store, run([result("c1", reply=Reply(answer="mail jane.doe@example.com"))], run_id="r1"))
    assert "jane.doe@example.com" in store.case_text("r1", "c1")
    client = TestClient(create_view_app(store), base_url=HOST)
    page = client.get(case_url("r1", "c1")).text
    assert "jane.doe@example.com" not in page and "[REDACTED_EMAIL]" in page


def test_a_raw_question_cut_short_for_the_run_page_shows_no_part_of_an_email(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}", raw=True)
    question = "x" * 150 + " mail jane.doe@example.com today"  # the address straddles the 160-character cut
    record(store, run([dataclasses.replace(result("c1"), question=question)], run_id="r1"))
    page = TestClient(create_view_app(store), base_url=HOST).get(run_url("r1")).text
    assert "x" * 150 + " mail [RED" in page and "jane" not in page


def test_production_without_a_span_store_says_so(client):
    page = client.get("/production/")
    assert page.status_code == 200 and "no span store given" in page.text


def test_the_case_index_filters_and_cache():
    texts = ['{"case_id": "a", "status": "pass", "split": "s1", "question": "Where is ORD-1?"}',
             '{"case_id": "b", "status": "fail", "split": "s2", "checks": [{"name": "n", "passed": false, "code": "c"}]}',
             '{"case_id": "c", "status": "error", "split": "s1"}']
    index = build_index(texts)
    ids = lambda f: [r.case_id for r in index.page(f, 1, 10).rows]  # noqa: E731
    assert ids(Filters(status=FAILED)) == ["b", "c"] and ids(Filters(status="error")) == ["c"]
    assert ids(Filters(code="c")) == ids(Filters(code="n")) == ["b"]
    assert ids(Filters(split="s1", text="ord-1")) == ["a"]
    assert index.codes == {"c": 1} and index.splits == ("s1", "s2")


def test_a_run_is_indexed_once_and_again_when_a_case_arrives(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    live = run([result("a"), result("b", "fail")], run_id="r")
    store.start_run(live.manifest)  # still recording
    store.save_cases("r", [(live.results[0], 0)])
    built: list[str] = []
    texts = store.case_texts
    store.case_texts = lambda run_id, page=1000: built.append(run_id) or texts(run_id, page)  # type: ignore[method-assign]
    client = TestClient(create_view_app(store), base_url=HOST)
    client.get(run_url("r"))
    client.get(run_url("r"), params={"status": FAILED})
    assert len(built) == 1
    store.save_cases("r", [(live.results[1], 1)])  # a live run with a new case is read again
    assert rows(client.get(run_url("r")).text) == 2
    assert len(built) == 2


def test_the_command_refuses_another_interface_without_a_token(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "view", "--host", "0.0.0.0", "--db",
                           f"sqlite:///{tmp_path / 'runs.db'}"], capture_output=True, text=True, timeout=60,
                          env={**env, "PYTHONPATH": ":".join(sys.path)})
    assert done.returncode == 2 and "TRACEGRADE_VIEW_TOKEN" in done.stderr


def test_the_store_reads_the_view_uses_agree_with_the_store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a"), result("b", "fail"), result("c", "error")], run_id="r1"))
    record(store, run([result("a"), result("a", repeat=1)], run_id="r2", version="v2"))
    store.start_run(run([], run_id="r3").manifest)  # started, no case yet
    assert [(i.run_id, i.cases_done) for i in store.runs(limit=10)] == [("r3", 0), ("r2", 2), ("r1", 3)]
    assert [i.run_id for i in store.runs(limit=1, offset=1)] == ["r2"]
    assert store.status_counts(["r1", "r2", "r3"]) == {"r1": {"pass": 1, "fail": 1, "error": 1}, "r2": {"pass": 2},
                                                      "r3": {}}
    assert [json.loads(t)["case_id"] for t in store.case_texts("r2", page=1)] == ["a", "a"]
    assert store.case_text("r2", "a", 1) is not None and store.case_text("r2", "a", 2) is None
    for n, (judge, created) in enumerate([("j1", "old"), ("j1", "new"), ("j2", "only")]):
        store.save_calibration(CalibrationRecord(f"cal-{n}", judge, "rubric", "labels", True, created, {"n": n}))
    assert [(c.judge_model, c.created_at) for c in store.calibrations()] == [("j2", "only"), ("j1", "new")]


def test_the_case_page_shows_the_reference_from_the_dataset_file_when_it_is_here(client, recorded, monkeypatch):
    monkeypatch.chdir(ROOT)  # the folder the runs' dataset file is under
    _, _, cand = recorded
    page = client.get(case_url(CANDIDATE, "rag-return-01")).text
    reference = page.split('id="reference"', 1)[1].split("</section>", 1)[0]
    assert "Products can be returned within 30 days of delivery." in reference
    from tracegrade.view import metrics_page

    monkeypatch.setattr(metrics_page, "REFERENCE_FILE_BYTES", 100)  # a dataset file too big to read per case
    page = client.get(case_url(CANDIDATE, "rag-return-01")).text
    reference = page.split('id="reference"', 1)[1].split("</section>", 1)[0]
    assert "Products can be returned" not in reference and "a case page does not read it" in reference
    assert "STRATIFIED" in client.get(run_url(CANDIDATE) + "/metrics").text


def test_a_dataset_named_outside_the_folder_is_not_read(tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere" / "cases.json"
    outside.parent.mkdir()
    outside.write_text('[{"id": "a", "question": "q?", "goldenAnswer": "secret reference"}]')
    served = tmp_path / "served"
    served.mkdir()
    monkeypatch.chdir(served)
    store = open_store(f"sqlite:///{served / 'runs.db'}")
    r = run([result("a")], run_id="r1")
    manifest = dataclasses.replace(r.manifest, dataset=str(outside))
    record(store, dataclasses.replace(r, manifest=manifest))
    client = TestClient(create_view_app(store), base_url=HOST)
    assert "secret reference" not in client.get(case_url("r1", "a")).text
    assert "is not here (looked for" in client.get(run_url("r1") + "/metrics").text


def test_an_exact_run_id_wins_over_a_longer_one_and_a_prefix_redirects(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a", reply=Reply(answer="in r1"))], run_id="r1"))
    record(store, run([result("a", reply=Reply(answer="in r10"))], run_id="r10"))
    client = TestClient(create_view_app(store), base_url=HOST)
    assert "in r1<" in client.get(case_url("r1", "a")).text
    assert "in r10<" in client.get(case_url("r10", "a")).text
    assert client.get("/runs/r1", follow_redirects=False).status_code == 200  # exact: no redirect
    latest = client.get("/runs/latest", follow_redirects=False)
    assert latest.status_code == 307 and latest.headers["location"] == run_url("r10")


def test_the_timeline_keeps_a_call_without_a_step_and_marks_a_failed_step(tmp_path):
    from tracegrade.core.trace import Step

    steps = (Step(kind="model", name="round 1", duration_ms=10, error="timeout after 10 ms"),)
    calls = (ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-7"}, status="error", result="boom"),)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a", "fail", reply=Reply(answer="-", steps=steps, tool_calls=calls))], run_id="r1"))
    page = TestClient(create_view_app(store), base_url=HOST).get(case_url("r1", "a")).text
    assert page.count('<tr class="step"') == 1 and 'class="k-error"' in page and "timeout after 10 ms" in page
    call = re.search(r'<tr class="toolcall">.*?</tr>', page, re.S).group(0)
    assert "ORD-7" in call and 'class="status error">error<' in call


def test_the_run_page_has_the_pass_rate_per_group(client, recorded):
    _, _, cand = recorded
    page = client.get(run_url(CANDIDATE)).text
    groups = page.split('id="groups-table"', 1)[1].split("</table>", 1)[0]
    nominal = [r for r in cand.results if r.split == "nominal"]
    passed = sum(r.passed for r in nominal)
    assert (f'>nominal</a></td><td class="num">{len(nominal)}</td><td class="num">{passed}</td>'
            f'<td class="num">{passed / len(nominal):.0%}</td>') in groups
    assert groups.count("<tr><td>risk</td>") == len({r.risk for r in cand.results})


def test_a_comparison_is_made_again_when_a_run_gets_a_case(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a"), result("b")], run_id="base"))
    live = run([result("a")], run_id="live")
    store.start_run(live.manifest)  # still recording
    store.save_cases("live", [(live.results[0], 0)])
    client = TestClient(create_view_app(store), base_url=HOST)
    page = lambda: client.get("/compare", params={"baseline": "base", "candidate": "live"}).text  # noqa: E731
    assert "1 cases compared" in page() and "1 cases compared" in page()
    store.save_cases("live", [(result("b", "fail"), 1)])
    again = page()
    assert "2 cases compared" in again and "b</a>" in again.split('id="regressions"', 1)[1]


def test_the_history_page_reads_each_finished_run_once(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    for n in range(6):  # more runs than the case index cache holds
        record(store, run([result("a"), result("b", "fail")], run_id=f"r{n}"))
    reads: list[str] = []
    texts = store.case_texts
    store.case_texts = lambda run_id, page=1000: reads.append(run_id) or texts(run_id, page)  # type: ignore[method-assign]
    client = TestClient(create_view_app(store), base_url=HOST)
    first, second = client.get("/history").text, client.get("/history").text
    assert first == second and first.count('class="row"') == 6
    assert sorted(reads) == [f"r{n}" for n in range(6)]  # the second page read no run again


def test_the_metrics_page_flags_at_the_thresholds_the_run_was_given(tmp_path, monkeypatch, capsys):
    """Issue 34: `run --flag-threshold` is stored with the run; the view's FLAGS are the run's."""
    from tracegrade.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.json").write_text(json.dumps([
        {"id": "a", "question": "Weather in Oslo?", "answerMustInclude": ["Oslo"]},
        {"id": "b", "question": "Weather in Rome?", "answerMustInclude": ["Paris"]}]))
    (tmp_path / "weather.py").write_text("def answer(question: str) -> str:\n    return 'Sunny in Oslo'\n")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    assert main(["run", "cases.json", "--target", "weather:answer", "--checks-only", "--db", db,
                 "--flag-threshold", "passRate>=0.4"]) == 1
    printed = capsys.readouterr().out
    assert "FLAGS  none" in printed  # 0.5 of the cases passed: above the 0.4 asked for, below the default 0.8
    assert main(["run", "cases.json", "--target", "weather:answer", "--checks-only", "--db", db,
                 "--flag-threshold", "passrate>=0.4"]) == 2
    assert "flag threshold 'passrate>=0.4'" in capsys.readouterr().err
    store = open_store(db)
    [info] = store.runs(limit=5)
    page = TestClient(create_view_app(store), base_url=HOST).get(run_url(info.run_id) + "/metrics").text
    assert "FLAGS  none" in page
