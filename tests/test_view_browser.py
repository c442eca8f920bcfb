"""`tracegrade view` in real headless Chromium (Debian's ``chromium``, driven by
Playwright as test_browser.py drives the dashboard), served by uvicorn on a
real socket: runs → run → case → compare, the filters, the timeline, the
keys, the production pages, no console error, nothing fetched from the
network, and a foreign Host refused on the wire. Screenshots go to docs/img/."""

from __future__ import annotations

import http.client
import shutil
from pathlib import Path

import pytest

from test_browser import IMAGES, browser, new_page, serve  # noqa: F401  (browser: the shared fixture)
from tracegrade.store.runstore import open_store
from tracegrade.view.app import create_view_app
from tracegrade.view.shell import run_url
from view_support import BASELINE, BROKEN, CANDIDATE, DATASET, calibration, in_thread, two_runs


@pytest.fixture
def view(tmp_path, monkeypatch, fake_knowledge):
    from tracegrade.observe.telemetry import open_telemetry
    from traffic import record_traffic

    monkeypatch.chdir(tmp_path)  # the default store, relative: what a user sees on the landing page
    (tmp_path / "evals").mkdir()  # the dataset where the runs name it: the case page shows the reference
    shutil.copy(DATASET, tmp_path / "evals" / DATASET.name)
    store = open_store("sqlite:///.tracegrade/runs.db")
    base, cand = two_runs(store)
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
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(IMAGES / "view-runs.png"))

    page.click(f"text={CANDIDATE}")
    page.wait_for_url(url + run_url(CANDIDATE))
    assert page.locator("#cases-table tr.case").count() == len(cand.results)
    page.screenshot(path=str(IMAGES / "view-run.png"), full_page=True)

    page.select_option("select[name=status]", "failed")
    page.click("form.filters button[type=submit]")
    assert "status=failed" in page.url
    statuses = page.locator("#cases-table tr.case").evaluate_all("rows => rows.map(r => r.dataset.status)")
    assert statuses and "pass" not in statuses and len(statuses) == sum(r.status != "pass" for r in cand.results)
    page.select_option("select[name=code]", "wrong_argument")
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
    page.screenshot(path=str(IMAGES / "view-case.png"), full_page=True)

    page.click("#other-runs-table >> text=diff against this run")
    changed = page.locator("#calls-diff tr.changed")
    assert changed.count() == 1 and "ORD-999" in changed.inner_text()

    page.goto(url + "/")
    page.click("#compare-form button[type=submit]")  # newest as candidate, the one before as baseline
    page.wait_for_selector("#verdict")
    assert "BLOCK" in page.inner_text("#verdict")
    assert "tool-status-01" in page.inner_text("#regressions")
    page.screenshot(path=str(IMAGES / "view-compare.png"), full_page=True)
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
    page.screenshot(path=str(IMAGES / "view-history.png"), full_page=True)
    page.click("nav >> text=Calibration")
    assert page.locator("#calibration-table tbody tr").count() > 0
    page.click("nav >> text=Production")
    page.wait_for_selector("#summary")  # the monitor's own page, no login: the view let the request in
    assert page.locator("tr.trace").count() == 40
    page.screenshot(path=str(IMAGES / "view-production.png"))
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
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name in ("view-runs.png", "view-run.png", "view-case.png", "view-compare.png"):
        assert f"docs/img/{name}" in readme
