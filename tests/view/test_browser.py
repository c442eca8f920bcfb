"""The dashboard and the HTML report in real headless Chromium (Debian's
``chromium``, driven by Playwright): the key numbers appear, the filters and
actions work, nothing is fetched from the network. With UPDATE_SCREENSHOTS=1 the
screenshots in docs/img/ (the README shows them) are taken again."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from opentelemetry.sdk.trace.id_generator import IdGenerator

from places import ROOT
from tracegrade.case.dataset import load_dataset
from tracegrade.judge.scoring import Judge
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.models.scripted import ScriptedModel
from tracegrade.view.monitor.app import create_monitor_app
from tracegrade.view.monitor.judging import OnlineJudge
from tracegrade.view.monitor.metrics import RequestTrace, summarize
from tracegrade.report import html
from tracegrade.core.results import Manifest, Run
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.observe.spanstore import SpanStore
from tracegrade.observe.telemetry import open_telemetry
from traffic import PLANTED_EMAIL, record_traffic
from view_support import BROKEN, reply_for, scores_for, in_thread as run_async

pytestmark = pytest.mark.slow  # a real browser

IMAGES = ROOT / "docs" / "img"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: `make test-deps` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def screenshot(page, name: str, full_page: bool = False) -> None:
    """``page`` saved as docs/img/``name`` when UPDATE_SCREENSHOTS=1 renews the docs' pictures.

    WHY only then: every run rewrote the tracked pictures (a checkout showed changes after
    `make test`), and pictures kept in a temporary folder were read by nothing, for ~4 s of
    Chromium's CPU and ~7 s of the two browser files' wall (a full-page one lays the page out
    again). No test compares a picture."""
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(IMAGES / name), full_page=full_page)


def new_page(browser, allowed_prefix: str):
    """A page that records every request outside ``allowed_prefix``."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith((allowed_prefix, "data:", "blob:")) else outside.append(r.url))
    return page, outside


class SeededIds(IdGenerator):
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64)

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128)


def serve(app):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server, thread


# --- the dashboard ---------------------------------------------------------------

MONITOR_TOKEN = "browser-monitor-token-0123"


@pytest.fixture
def dashboard(tmp_path, monkeypatch, fake_knowledge):
    # The default store path, relative: what a user sees in the page header.
    monkeypatch.chdir(tmp_path)
    store_path = Path(".tracegrade/spans.db")
    # Seeded ids: the judge's sample (chosen by trace id) and so the screenshot stay the same.
    telemetry = open_telemetry("shopnest", spans_db=store_path, otlp_endpoint=None, id_generator=SeededIds(7))
    run_async(record_traffic(telemetry.tracer, fake_knowledge))
    telemetry.shutdown()
    store = SpanStore(store_path)
    judge = OnlineJudge(store, lambda: Judge(ScriptedModel(scores_for, model_id="judge"), SCALE_RUBRIC), rate=0.5, batch=100)
    assert run_async(judge.judge_pending()) > 0
    # The judge has run above; served without lifespan, its background loop stays off.
    url, server, thread = serve(create_monitor_app(store, MONITOR_TOKEN, online_judge=judge))
    yield url, store
    server.should_exit = True
    thread.join(timeout=10)


def test_the_dashboard_shows_production_in_chromium(browser, dashboard):
    url, store = dashboard
    traces = [RequestTrace.from_spans(s) for s in store.requests()]
    expected = summarize(traces, store.judgements())
    page, outside = new_page(browser, url)
    page.goto(url + "/")
    assert page.url == url + "/login"  # no session yet
    page.goto(url + f"/login#token={MONITOR_TOKEN}")  # as `tracegrade monitor` prints it
    page.wait_for_url(url + "/")
    assert MONITOR_TOKEN not in page.url and page.locator("#summary").count() == 1

    summary = page.inner_text("#summary")
    for text in ("40", "70%", "10%", f"{expected.p50_ms:.0f} ms", f"{expected.p95_ms:.0f} ms",
                 f"{expected.p99_ms:.0f} ms", "4 / 0", f"{expected.judged} / {expected.quality:.2f}",
                 f"{expected.input_tokens} / {expected.output_tokens}"):
        assert text in summary, text
    charts = page.inner_text("#charts")
    assert "getDeliveryDate" in charts and "deleteAccount" in charts and "llama.cpp" in charts
    assert page.locator("svg.chart").count() == 6
    assert page.locator("tr.trace").count() == 40
    screenshot(page, "monitor.png")

    page.select_option("select[name=prompt_version]", "terse")
    page.click("button[type=submit]")
    assert "prompt_version=terse" in page.url
    assert page.locator("tr.trace").count() == 20
    assert page.locator(".card", has_text="requests").first.locator(".value").inner_text() == "20"

    planted = page.locator("tr.trace", has_text="REDACTED_EMAIL").first
    planted.locator("button.golden").click()
    page.wait_for_selector("#golden:not([hidden])")
    draft = json.loads(page.inner_text("#golden-json"))
    assert draft["case"]["id"].startswith("prod-") and "goldenAnswer" in draft["toFill"]
    assert PLANTED_EMAIL not in page.content()
    assert outside == []


# --- the HTML report -------------------------------------------------------------


@pytest.fixture
def report_file(tmp_path) -> tuple[Path, Run]:
    dataset = load_dataset(ROOT / "evals" / "golden-dataset.json")

    async def target(case):
        return reply_for(case, BROKEN)

    judge = Judge(ScriptedModel(scores_for, model_id="judge-model"), rubric=SCALE_RUBRIC)
    results = run_async(run_cases(dataset.cases, target, judge, RunSettings(concurrency=4)))
    # Fixed times, so the screenshot changes only when the report does.
    results = tuple(dataclasses.replace(r, seconds=1.5 + i / 10) for i, r in enumerate(results))
    manifest = Manifest("20260615-090000-abc123", dataset.name, dataset.version, len(results), "shopnest",
                        "qwen2.5-1.5b-instruct", "judge-model", "rubric0hash", prompt_version="v1",
                        git_commit="0123456789ab", started_at="2026-06-15T09:00:00+00:00",
                        ended_at="2026-06-15T09:04:10+00:00")
    run = Run(manifest, results)
    return html.write(run, tmp_path / "report.html"), run


def test_the_html_report_opens_from_disk_in_chromium(browser, report_file):
    path, run = report_file
    passed = sum(r.status == "pass" for r in run.results)
    failed = [r for r in run.results if r.status == "fail"]
    assert failed and passed
    page, outside = new_page(browser, "file://")
    page.goto(path.as_uri())

    summary = page.inner_text("#summary")
    assert f"{len(run.results)}" in summary and f"{passed / len(run.results):.0%}" in summary
    assert page.locator("#scores svg.chart").count() == len(METRICS)
    assert page.inner_text("#shown") == f"{len(run.results)} of {len(run.results)} cases shown"
    screenshot(page, "report.png")

    page.select_option("#status", "fail")
    assert page.inner_text("#shown") == f"{len(failed)} of {len(run.results)} cases shown"
    splits = {r.split for r in run.results}
    page.select_option("#status", "")
    page.select_option("#split", sorted(splits)[0])
    assert page.inner_text("#shown").startswith(f"{sum(r.split == sorted(splits)[0] for r in run.results)} of")
    page.select_option("#split", "")

    row = page.locator("tr.case", has_text="tool-status-01")
    row.click()
    detail = row.locator("xpath=following-sibling::tr[1]")
    assert detail.is_visible()
    text = detail.inner_text()
    assert "toolArgument" in text and "ORD-999" in text and "scripted verdict" in text
    assert outside == []
