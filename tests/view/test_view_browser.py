"""`tracegrade view` in real headless Chromium (Debian's ``chromium``, driven by
Playwright as test_browser.py drives the dashboard), served by uvicorn on a
real socket: runs → run → case → compare, the filters, the timeline, the
keys, the production pages, no console error, nothing fetched from the
network, and a foreign Host refused on the wire. With UPDATE_SCREENSHOTS=1 the
screenshots in docs/img/ are taken again."""

from __future__ import annotations

import http.client
import shutil
from pathlib import Path

import pytest

from test_browser import browser, new_page, screenshot, serve  # noqa: F401  (browser: the shared fixture)
from places import ROOT
from tracegrade.store.runstore import open_store
from tracegrade.view.app import create_view_app
from tracegrade.view.shell import run_url
from view_support import BASELINE, BROKEN, CANDIDATE, DATASET, calibration, in_thread, two_runs

pytestmark = pytest.mark.slow  # a real browser


@pytest.fixture
def view(tmp_path, monkeypatch, fake_knowledge):
    from tracegrade.observe.telemetry import open_telemetry
    from traffic import record_traffic

    monkeypatch.chdir(tmp_path)  # the default store, relative: what a user sees on the landing page
    (tmp_path / "evals").mkdir()  # the dataset in a folder, run from here: the case page shows the reference
    shutil.copy(DATASET, tmp_path / "evals" / DATASET.name)
    store = open_store("sqlite:///.tracegrade/runs.db")
    base, cand = two_runs(store, Path("evals") / DATASET.name)
    calibration(store)
    spans = Path(".tracegrade/spans.db")  # relative, as the default: the page header shows it
    telemetry = open_telemetry("shopnest", spans_db=spans, otlp_endpoint=None)
    in_thread(record_traffic(telemetry.tracer, fake_knowledge))
    telemetry.shutdown()
    url, server, thread = serve(create_view_app(store, spans_db=spans))
    yield url, base, cand
    server.should_exit = True
    thread.join(timeout=10)
    store.close()


def watched(browser, url):  # noqa: F811
    """A page that records console errors and page errors, and requests outside ``url``."""
    page, outside = new_page(browser, url)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, outside, errors


def test_runs_to_run_to_case_to_compare_in_chromium(browser, view):  # noqa: F811
    url, base, cand = view
    page, outside, errors = watched(browser, url)
    page.goto(url + "/")
    assert page.locator("#runs-table a.rowlink").all_inner_texts() == [CANDIDATE, BASELINE]
    screenshot(page, "view-runs.png")

    page.click(f"text={CANDIDATE}")
    page.wait_for_url(url + run_url(CANDIDATE))
    assert page.locator("#cases-table tr.case").count() == len(cand.results)
    screenshot(page, "view-run.png", full_page=True)

    page.select_option("select[name=status]", "failed")
    with page.expect_navigation():  # WHY: under load the table was read before the new page came
        page.click("form.filters button[type=submit]")
    assert "status=failed" in page.url
    statuses = page.locator("#cases-table tr.case").evaluate_all("rows => rows.map(r => r.dataset.status)")
    assert statuses and "pass" not in statuses and len(statuses) == sum(r.status != "pass" for r in cand.results)
    page.select_option("select[name=code]", "wrong_argument")
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    assert page.locator("#cases-table a.rowlink").all_inner_texts() == sorted(BROKEN)

    page.click("#cases-table a.rowlink")
    page.wait_for_selector("#timeline")
    broken = next(r for r in cand.results if r.case_id in BROKEN)
    assert page.locator("#timeline tr.step").count() == len(broken.reply.steps)
    assert page.locator("#timeline .timeline span").count() == len(broken.reply.steps)
    call = page.locator("#timeline tr.toolcall")
    assert call.count() == 1 and "ORD-999" in call.locator("pre.arguments").inner_text()
    assert broken.reply.answer in page.inner_text("#reference")
    screenshot(page, "view-case.png", full_page=True)

    page.click("#other-runs-table >> text=diff against this run")
    changed = page.locator("#calls-diff tr.changed")
    assert changed.count() == 1 and "ORD-999" in changed.inner_text()

    page.goto(url + "/")
    page.click("#compare-form button[type=submit]")  # newest as candidate, the one before as baseline
    page.wait_for_selector("#verdict")
    assert "BLOCK" in page.inner_text("#verdict")
    assert "tool-status-01" in page.inner_text("#regressions")
    screenshot(page, "view-compare.png", full_page=True)
    assert errors == [] and outside == []


def test_keys_move_through_the_rows_and_open_one(browser, view):  # noqa: F811
    url, _, cand = view
    page, outside, errors = watched(browser, url)
    page.goto(url + run_url(CANDIDATE))
    page.keyboard.press("j")
    page.keyboard.press("j")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == cand.results[1].case_id
    page.keyboard.press("k")
    page.keyboard.press("Enter")
    page.wait_for_selector("#timeline, #trace")
    assert page.url.endswith(f"/cases/{cand.results[0].case_id}")
    page.keyboard.press("/")  # no filter form on a case page: nothing happens, nothing breaks
    page.go_back()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.name") == "status"
    assert errors == [] and outside == []


def test_history_calibration_and_production_pages(browser, view):  # noqa: F811
    url, _, _ = view
    page, outside, errors = watched(browser, url)
    page.goto(url + "/history")
    assert page.locator("#history-charts svg.chart").count() == 6
    screenshot(page, "view-history.png", full_page=True)
    page.click("nav >> text=Calibration")
    assert page.locator("#calibration-table tbody tr").count() > 0
    page.click("nav >> text=Production")
    page.wait_for_selector("#summary")  # the monitor's own page, no login: the view let the request in
    assert page.locator("tr.trace").count() == 40
    screenshot(page, "view-production.png")
    page.locator("button.golden").first.click()
    page.wait_for_selector("#golden:not([hidden])")
    assert '"toFill"' in page.inner_text("#golden-json")
    page.click("nav >> text=Runs")  # the monitor's page carries the view's navigation
    page.wait_for_selector("#runs-table")
    assert errors == [] and outside == []


def test_a_foreign_host_is_refused_on_a_real_socket(view):
    url, _, _ = view
    host, port = url.removeprefix("http://").split(":")
    for name, status in (("attacker.example", 400), (f"attacker.example:{port}", 400), (f"localhost:{port}", 200)):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", "/", headers={"Host": name})
        response = connection.getresponse()
        assert response.status == status, name
        if status == 400:
            assert b"is not served here" in response.read()
        connection.close()


def test_images_are_where_the_readme_says():
    readme = (ROOT / "README.md").read_text()
    for name in ("view-runs.png", "view-run.png", "view-case.png", "view-compare.png"):
        assert f"docs/img/{name}" in readme


def test_a_run_of_a_dataset_in_a_folder_is_found_by_the_view_started_there(browser, tmp_path, monkeypatch,  # noqa: F811
                                                                              capsys):
    """Issue 34: `tracegrade run evals/library.json`, then `tracegrade view` in the same folder:
    the case page shows the reference, the metrics page counts traces and safety, and the
    dataset is named as its file declares."""
    import gc
    import json

    from tracegrade.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    declared = {"name": "shop-support", **json.loads(DATASET.read_text())}
    (tmp_path / "evals" / "library.json").write_text(json.dumps(declared))
    thresholds = gc.get_threshold()
    try:
        code = main(["run", "evals/library.json", "--target", "support:golden_reply", "--checks-only", "--quiet",
                     "--db", "sqlite:///.tracegrade/runs.db"])
    finally:  # the command tunes the collector for its own process; this one goes on
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert code == 0
    assert "dataset   shop-support (library.json)" in capsys.readouterr().out
    store = open_store("sqlite:///.tracegrade/runs.db")
    [info] = store.runs(limit=2)
    url, server, thread = serve(create_view_app(store))
    try:
        page, outside, errors = watched(browser, url)
        page.goto(url + run_url(info.run_id))
        assert "dataset shop-support (library.json)" in page.inner_text("main")
        page.goto(url + run_url(info.run_id) + "/cases/rag-return-01")
        assert "Products can be returned within 30 days of delivery." in page.inner_text("#reference")
        page.goto(url + run_url(info.run_id) + "/metrics")
        metrics = page.inner_text("#stratified")
        assert "12 results, 12 with a trace" in metrics
        assert "safety" in metrics and " of 0 cases" not in metrics
        assert errors == [] and outside == []
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()


def _run_of_kind(run_id: str, day: str, agent: str, seconds: float, status: str = "pass", **settings):
    """A run of cases a and b as the store keeps it; ``settings``: its flags (only=..., target=...)."""
    import dataclasses

    from runs_support import result, run

    made = run([result("a", seconds=seconds), result("b", status)], run_id=run_id)
    target = str(settings.pop("target", "agent:answer"))
    manifest = dataclasses.replace(made.manifest, agent_model=agent, target=target, settings=settings,
                                   started_at=f"{day}T09:00:00+00:00", ended_at=f"{day}T09:01:00+00:00")
    return dataclasses.replace(made, manifest=manifest)


@pytest.fixture
def mixed_runs(tmp_path):
    """Two whole runs by two agents, a run of one case (--only) and a `tracegrade grade` run between them."""
    from view_support import record

    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, _run_of_kind("20261201-090000-aa0001", "2026-12-01", "openai-agent:answer", 1.0))
    record(store, _run_of_kind("20261202-090000-bb0002", "2026-12-02", "agent:answer", 2.5, only=["a"]))
    record(store, _run_of_kind("20261203-090000-cc0003", "2026-12-03", "recorded:traces.jsonl", 1.0,
                               target="recorded:traces.jsonl"))
    record(store, _run_of_kind("20261204-090000-dd0004", "2026-12-04", "anthropic-agent:answer", 1.0, "fail"))
    url, server, thread = serve(create_view_app(store))
    yield url
    server.should_exit = True
    thread.join(timeout=10)
    store.close()


def test_the_viewers_small_things_as_a_user_meets_them(browser, mixed_runs):  # noqa: F811
    """Issue 34's viewer items: whole seconds, the other runs' agents, history's links and kinds,
    a compare problem in the form's words, and one error for a missing previous run."""
    url = mixed_runs
    page, outside, errors = watched(browser, url)
    page.goto(url + "/runs/20261204-090000-dd0004/cases/a")
    assert "· 1 s ·" in page.inner_text("main")
    others = page.inner_text("#other-runs-table")
    assert "openai-agent:answer" in others and "agent" in others.split("\n", 1)[0]
    page.goto(url + "/history")
    charted = page.inner_text("main")
    assert "Runs charted: all cases" in charted
    assert page.locator("#not-charted tr.row").count() == 2
    assert "a selection of cases" in page.inner_text("#not-charted") and "recorded traces" in charted
    label = page.locator("#history-charts svg.chart text").all_text_contents()
    assert "dd0004" in label  # the chart's label for the newest run: it leads to the run
    response = page.goto(url + "/runs/dd0004")
    assert response is not None and response.status == 200 and page.url.endswith("/runs/20261204-090000-dd0004")
    page.goto(url + "/runs/20261202-090000-bb0002/cases/a")
    assert "· 2.5 s ·" in page.inner_text("main")
    assert errors == [] and outside == []


def test_a_changed_dataset_on_the_compare_page_points_at_the_checkbox(browser, tmp_path):  # noqa: F811
    from runs_support import result, run
    from view_support import record

    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("a")], run_id="base", version="v1"))
    url, server, thread = serve(create_view_app(store))
    try:
        page, outside, errors = watched(browser, url)
        response = page.goto(url + "/runs/previous")  # one run only: no previous one, said once
        assert response is not None and response.status == 404
        assert page.content().count("no finished run before the latest") == 1
        errors.clear()  # the 404 itself is a console error
        record(store, run([result("a")], run_id="cand", version="v2"))
        page.goto(url + "/compare?baseline=base&candidate=cand")
        problem = page.inner_text("#problem")
        assert "--allow-dataset-change" not in problem and 'tick "allow a changed dataset"' in problem
        page.check("input[name=allow_dataset_change]")
        page.click("#choose button[type=submit]")
        page.wait_for_selector("#verdict")
        assert errors == [] and outside == []
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()


def press(page, key: str) -> None:
    """A key pressed in the label queue, once the answer it leads to is shown (the page swaps it in place)."""
    before = page.evaluate("document.documentElement.dataset.shown")
    page.keyboard.press(key)
    page.wait_for_function(f"document.documentElement.dataset.shown !== '{before}' && "
                           "document.documentElement.dataset.waiting === '0'")


def test_answers_labelled_by_keyboard_in_the_queue_are_what_calibrate_reads_from_the_store(browser, view,  # noqa: F811
                                                                                              tmp_path):
    """Issue 35: a person labels answers in the queue by keys alone (g, b, s, n, →, a note, Esc),
    the labels are in the store, and `tracegrade calibrate --from-store` judges exactly those."""
    import concurrent.futures
    import json

    from judge_rubrics import SCALE_RUBRIC
    from tracegrade.cli import build_parser
    from tracegrade.cli.calibrate import run_calibration
    from tracegrade.judge.scoring import Judge
    from tracegrade.models.scripted import ScriptedModel
    from view_support import scores_for

    url, _, _ = view
    page, outside, errors = watched(browser, url)
    page.goto(url + run_url(CANDIDATE))
    page.click("#label-queue")
    assert "g good" in page.inner_text("#keys") and "n or → next" in page.inner_text("#keys")
    given: dict[tuple[str, str], str] = {}

    def current() -> tuple[str, str]:
        return page.input_value("#to-label input[name=case_id]"), page.inner_text("#metric")

    for key in ("g", "b", "s", "n", "g", "ArrowRight", "b", "g"):
        item = current()
        press(page, key)
        if key in ("g", "b"):
            given[item] = {"g": "good", "b": "bad"}[key]
        assert current() != item  # labelled, skipped or passed over: another answer is shown
    assert "2 passed over" in page.inner_text("#progress")
    noted = current()
    page.fill("#to-label input[name=note]", "says 30 days, the policy says 14")
    page.keyboard.press("Escape")  # out of the note: the keys label again
    press(page, "b")
    given[noted] = "bad"
    progress = page.inner_text("#progress")
    assert "6 labelled" in progress and "1 skipped" in progress  # six labels and a skip
    screenshot(page, "view-label.png", full_page=True)
    assert errors == [] and outside == []

    out = tmp_path / "calibration.json"
    args = build_parser().parse_args(["calibrate", "--from-store", CANDIDATE, "--db", "sqlite:///.tracegrade/runs.db",
                                      "--no-breaks", "--min-labels", "1", "--json", str(out)])
    judge = Judge(ScriptedModel(scores_for, model_id="judge-model"), rubric=SCALE_RUBRIC)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # WHY a thread: Playwright's loop runs on this one
        pool.submit(run_calibration, args, judge).result()
    measured = {m["metric"]: (m["good"], m["bad"]) for m in json.loads(out.read_text())["metrics"]}
    for metric in {m for _, m in given} | set(measured):
        verdicts = [v for (_, m), v in given.items() if m == metric]
        assert measured.get(metric, (0, 0)) == (verdicts.count("good"), verdicts.count("bad")), metric
    store = open_store("sqlite:///.tracegrade/runs.db")
    try:
        [note] = [g.note for g in store.labels([CANDIDATE]) if (g.case_id, g.metric) == noted]
    finally:
        store.close()
    assert note == "says 30 days, the policy says 14"


def test_the_queue_shows_the_evidence_beside_the_answer_and_u_changes_the_last_label(browser, view):  # noqa: F811
    """Labelling 20 answers: the evidence is read beside the answer without scrolling, and a key
    pressed by mistake is put right with u (the answer shown again, its label pressed), by keys alone."""
    url, _, _ = view
    page, outside, errors = watched(browser, url)
    page.goto(url + run_url(CANDIDATE) + "/label")
    answer, evidence = page.locator("section#answer").bounding_box(), page.locator("section#evidence").bounding_box()
    assert evidence["x"] >= answer["x"] + answer["width"]  # beside, not below
    assert evidence["y"] < page.viewport_size["height"]  # on the first screen
    assert "u change the last label" in page.inner_text("#keys")

    def current() -> tuple[str, str]:
        return page.input_value("#to-label input[name=case_id]"), page.inner_text("#metric")

    first = current()
    press(page, "g")
    assert current() != first and page.inner_text("#last-verdict") == "good" and first[0] in page.inner_text("#last")
    press(page, "u")
    assert current() == first and "Your label: good" in page.inner_text("#again")
    assert page.locator('#to-label button[value="good"][aria-pressed="true"]').count() == 1
    press(page, "b")
    assert current() != first and page.inner_text("#last-verdict") == "bad"
    assert "1 labelled" in page.inner_text("#progress")  # changed, not a second label
    head = current()
    for key in ("u", "n"):  # shown again, then left as it is: back where the walk was, nothing passed over
        press(page, key)
    assert current() == head and "passed over" not in page.inner_text("#progress")
    store = open_store("sqlite:///.tracegrade/runs.db")
    try:
        assert [(g.case_id, g.metric, g.verdict) for g in store.labels([CANDIDATE])] == [(*first, "bad")]
    finally:
        store.close()
    assert errors == [] and outside == []


class SlowLabels:
    """The run store, each label taking a while to store: keys pressed meanwhile must wait their turn,
    not be lost. Records what was stored, in order."""

    def __init__(self, store, seconds: float) -> None:
        self._store, self._seconds, self.saved = store, seconds, []

    def __getattr__(self, name):
        return getattr(self._store, name)

    def save_label(self, label) -> None:
        import time

        time.sleep(self._seconds)
        self._store.save_label(label)
        self.saved.append((label.case_id, label.metric, label.verdict))


@pytest.fixture
def slow_queue(tmp_path):
    from runs_support import run
    from tracegrade.core.results import CaseResult, MetricScore
    from tracegrade.core.trace import Reply
    from view_support import record

    def answer(i: int) -> CaseResult:
        metrics = (MetricScore("correctness", float(1 + i % 5), 4.0, "scale", low=1.0, high=5.0),
                   MetricScore("relevance", (i % 10) / 10, 0.5, "probability"))
        return CaseResult(f"c{i:02d}", "pass", question=f"question {i}?", reply=Reply(answer=f"answer {i}"),
                          metrics=metrics)

    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([answer(i) for i in range(12)], run_id="r1"))
    slow = SlowLabels(store, 0.25)
    url, server, thread = serve(create_view_app(slow, annotator="ann"))
    yield url, slow
    server.should_exit = True
    thread.join(timeout=10)
    store.close()


def test_keys_pressed_faster_than_labels_are_stored_are_each_sent_in_order(browser, slow_queue):  # noqa: F811
    """Issue 47: a key pressed while the previous label was still being stored was lost (1 of 10 in
    a quick script). The page queues the presses and sends them in order, each to the next answer."""
    url, slow = slow_queue
    page, outside, errors = watched(browser, url)
    page.goto(url + "/runs/r1/label")
    keys = "gbggbsbggbbg"
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(60)  # far quicker than a label is stored
    page.wait_for_function("document.documentElement.dataset.waiting === '0'", timeout=20_000)
    assert [verdict for _, _, verdict in slow.saved] == [{"g": "good", "b": "bad", "s": "skip"}[k] for k in keys]
    assert len({(case, metric) for case, metric, _ in slow.saved}) == len(keys)  # each press its own answer
    progress = page.inner_text("#progress")
    assert progress.startswith(f"{24 - len(keys)} left · {len(keys) - 1} labelled by ann · 1 skipped"), progress
    assert errors == [] and outside == []


def test_the_login_page_behind_the_token_gate_has_no_console_error(browser, tmp_path):  # noqa: F811
    """Issue 47: behind the token gate the login page's favicon answered 401 (a console error)."""
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    url, server, thread = serve(create_view_app(store, token="view-token-0123456789"))
    try:
        page, outside, errors = watched(browser, url)
        favicons: list[int] = []
        page.on("response", lambda r: favicons.append(r.status) if r.url.endswith("/favicon.ico") else None)
        page.goto(url + "/")
        assert page.url == url + "/login"
        page.wait_for_timeout(500)  # the browser asks for the icon after the page
        assert errors == [] and outside == [] and 401 not in favicons
        page.fill("input[name=token]", "view-token-0123456789")
        with page.expect_navigation():
            page.click("button[type=submit]")
        assert page.url == url + "/" and errors == []
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        store.close()
