"""What `tracegrade view`'s label queue costs a person labelling answers by keyboard.

    python bench/serve/label_queue.py [--answers 30] [--labels 20] [--passes 3] [--undos 1] [--json FILE]

1. Records one run of ``--answers`` answers with judge scores into a fresh
   SQLite store, the way the view's tests record theirs (tests/view_support.py:
   the golden dataset's cases, copied until there are enough, a scripted agent
   whose replies carry a trace and ~2 KB of evidence, a scripted judge on five
   1-5 metrics, through the real runner). What is measured is the viewer, not
   the judge, so the judge is scripted.
2. Starts ``tracegrade view`` as a user would: its own process on a real socket,
   with ``TRACEGRADE_VIEW_TOKEN`` set, so the token gate, its login form and the
   CSRF guard are all in the path.
3. In headless Chromium (Playwright, as tests/view/test_view_browser.py drives it) logs
   in, opens the run's label queue (timed: the first open of the queue in a fresh
   server, to the page ready for a key), then labels ``--labels`` answers by
   keyboard, a person's mix of g (good), b (bad) and s (skip), with ``--passes``
   presses of n or → (leave it for later) among them, and ``--undos`` times a g
   put right at once (u: that answer again, then b). Each key press is timed from the
   press until the next answer is shown and ready for the next key: the new page's
   DOMContentLoaded (its key handler is attached then) with another answer or
   metric in the form. The browser's navigation timing splits each press into the
   POST and its redirect (g, b, s), the GET of the next page, and the page's parse.
4. Runs ``tracegrade labels RUN --out FILE`` and checks the file holds exactly the
   good and bad labels given, a changed one counted as its last verdict (skips are
   stored, not exported: read from the store).

Prints a table: per key, and all presses, p50 / p95 / max / total milliseconds.
What is measured is the tool's part: key to the next answer ready. A person's
reading time is not measured; it is the larger part of labelling. Note the
machine's load (``uptime``) beside the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
sys.path[:0] = [str(BENCH), str(ROOT / "tests")]

from view_pages import child_env, free_port, wait_up  # noqa: E402

CONTEXT = "SOURCE: return-policy.md\n" + "Products can be returned within 30 days of delivery. " * 40  # ~2 KB
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# A person's mix: mostly good and bad, now and then a skip; "n" is spread in by --passes.
LABEL_KEYS = "gbggbgsgbbgggbgsbggb"
NAVIGATION = """() => { const t = performance.getEntriesByType('navigation')[0];
  return {redirect: t.redirectEnd - t.redirectStart, get: t.responseEnd - (t.redirectEnd || t.fetchStart),
          parse: t.domContentLoadedEventEnd - t.responseEnd, ready: t.domContentLoadedEventEnd,
          bytes: t.transferSize}; }"""


def write_dataset(path: Path, answers: int) -> None:
    """The golden dataset's cases copied (ids numbered) until there are ``answers``."""
    data = json.loads((ROOT / "evals" / "golden-dataset.json").read_text())
    base = data["cases"]
    cases = [{**base[i % len(base)], "id": f"{base[i % len(base)]['id']}-{i:04d}"} for i in range(answers)]
    path.write_text(json.dumps({**data, "cases": cases}, indent=1))


def record(folder: Path, answers: int) -> tuple[str, str]:
    """The run, recorded in ``folder``'s store as tests/view_support.py records its runs; (db URL, run id)."""
    import dataclasses

    from judge_rubrics import SCALE_RUBRIC
    from tracegrade.core.results import Manifest, Run
    from tracegrade.case.dataset import load_dataset
    from tracegrade.judge.scoring import Judge
    from tracegrade.models.scripted import ScriptedModel
    from tracegrade.run.evaluate import dataset_record
    from tracegrade.run.runner import RunSettings, run_cases
    from tracegrade.stats.tally import tally
    from tracegrade.store.runstore import open_store
    from view_support import in_thread, reply_for, scores_for
    from view_support import record as save

    dataset_file = Path("evals") / "label-bench.json"
    write_dataset(folder / dataset_file, answers)
    here = Path.cwd()
    os.chdir(folder)  # WHY: the manifest records the file as the run found it, from the folder the view serves
    try:
        dataset = load_dataset(dataset_file)

        async def target(case: Any) -> Any:
            return reply_for(case, frozenset()).model_copy(update={"context": CONTEXT})

        judge = Judge(ScriptedModel(scores_for, model_id="judge-model"), rubric=SCALE_RUBRIC)
        results = in_thread(run_cases(dataset.cases, target, judge, RunSettings(concurrency=4)))
        results = tuple(dataclasses.replace(r, seconds=1.5) for r in results)
        run_id = "20261202-090000-label1"
        manifest = Manifest(run_id, dataset.name, dataset.version, len(results), "shopnest", "qwen2.5-1.5b-instruct",
                            "judge-model", "rubric0hash", started_at="2026-12-02T09:00:00+00:00",
                            ended_at="2026-12-02T09:04:10+00:00", totals=tally(results).totals(),
                            settings=dataset_record(dataset_file))
        db = f"sqlite:///{folder / 'runs.db'}"
        with open_store(db) as store:
            save(store, Run(manifest, results))
        return db, run_id
    finally:
        os.chdir(here)


def key_plan(labels: int, passes: int, undos: int) -> list[str]:
    """``labels`` label keys (g, b, s) with ``passes`` presses of n (or →) spread among them, and
    ``undos`` times a g pressed by mistake put right: u, then b."""
    keys = [LABEL_KEYS[i % len(LABEL_KEYS)] for i in range(labels)]
    goods = [i for i, key in enumerate(keys) if key == "g"]
    for k in reversed(range(min(undos, len(goods)))):
        at = goods[(k + 1) * len(goods) // (undos + 1)]
        keys[at + 1:at + 1] = ["u", "b"]
    for k in range(passes):
        keys.insert((k + 1) * len(keys) // (passes + 1), "n" if k % 2 == 0 else "ArrowRight")
    return keys


def final_labels(plan: list[str]) -> dict[str, int]:
    """How many of each verdict the store holds after ``plan``: a label after u replaces the one before it."""
    given: list[str] = []
    for key in plan:
        if key == "u":
            given.pop()
        elif key in "gbs":
            given.append(key)
    return {k: given.count(k) for k in "gbs"}


def shown(page: Any) -> tuple[str, str]:
    """The answer and metric the queue shows now."""
    return page.input_value("#to-label input[name=case_id]"), page.inner_text("#metric")


def press(page: Any, key: str) -> dict[str, Any]:
    """One key, timed from the press to the next answer shown with its key handler attached."""
    before = shown(page)
    start = time.perf_counter()
    with page.expect_navigation(wait_until="domcontentloaded"):
        page.keyboard.press(key)
    seconds = time.perf_counter() - start
    if shown(page) == before:
        raise SystemExit(f"key {key}: the queue still shows {before}")
    timing = page.evaluate(NAVIGATION)
    # WHY: what the navigation's own clock leaves out: the key through Playwright to the page, the form's submit.
    return {"key": key, "ms": seconds * 1000, **timing, "before": seconds * 1000 - timing["ready"]}


def label_in_browser(url: str, token: str, run_id: str, plan: list[str],
                     screenshot: Path | None = None) -> tuple[float, float, list[dict[str, Any]]]:
    """Log in, open the queue, press ``plan``; (login ms, queue open ms, each press)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url + "/login", wait_until="domcontentloaded")
            start = time.perf_counter()
            page.fill("input[name=token]", token)
            with page.expect_navigation(wait_until="domcontentloaded"):
                page.keyboard.press("Enter")
            login = time.perf_counter() - start
            start = time.perf_counter()
            page.goto(f"{url}/runs/{run_id}/label", wait_until="domcontentloaded")
            opened = time.perf_counter() - start
            shown(page)  # the first answer is there
            presses = [press(page, key) for key in plan]
            if screenshot:
                page.screenshot(path=str(screenshot))  # the viewport: what a person sees without scrolling
            return login * 1000, opened * 1000, presses
        finally:
            browser.close()


def exported(folder: Path, db: str, run_id: str) -> dict[str, int]:
    """``tracegrade labels RUN --out FILE``: the good and bad labels in the file, and the skips in the store."""
    from tracegrade.store.runstore import open_store

    out = folder / "labels.json"
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "labels", run_id, "--db", db, "--out", str(out)],
                          cwd=folder, env=child_env(), capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"tracegrade labels failed: {done.stderr[-2000:]}")
    verdicts = [v for item in json.loads(out.read_text())["items"] for person in item["labels"]
                for v in person["scores"].values()]
    with open_store(db) as store:
        skips = sum(label.verdict == "skip" for label in store.labels([run_id]))
    return {"g": verdicts.count("good"), "b": verdicts.count("bad"), "s": skips}


def row(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{name:<22}{len(values):>6}{statistics.median(values):>9.0f}{p95:>9.0f}{max(values):>9.0f}"
            f"{sum(values):>10.0f}")


def table(presses: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'key press (ms)':<22}{'n':>6}{'p50':>9}{'p95':>9}{'max':>9}{'total':>10}"]
    groups = [("g good", ["g"]), ("b bad", ["b"]), ("s skip", ["s"]), ("n / → next", ["n", "ArrowRight"]),
              ("u change the last", ["u"]), ("all", ["g", "b", "s", "n", "ArrowRight", "u"])]
    for name, keys in groups:
        if found := [p["ms"] for p in presses if p["key"] in keys]:
            lines.append(row(name, found))
    labelled = [p for p in presses if p["key"] in "gbs"]
    lines.append("")
    lines.append(f"{'label press, parts (ms)':<22}{'n':>6}{'p50':>9}{'p95':>9}{'max':>9}{'total':>10}")
    for part, name in (("before", "key to the request"), ("redirect", "POST + its redirect"),
                       ("get", "GET next answer"), ("parse", "parse to ready")):
        lines.append(row(name, [p[part] for p in labelled]))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=30, help="answers in the recorded run (default 30; each "
                        "has five judge metrics, so five queue items)")
    parser.add_argument("--labels", type=int, default=20, help="answers labelled by g, b or s (default 20)")
    parser.add_argument("--passes", type=int, default=3, help="presses of n or → among them (default 3)")
    parser.add_argument("--undos", type=int, default=1, help="times a g pressed by mistake is put right: u, "
                        "then b (default 1; the b is a press of its own, not one of --labels)")
    parser.add_argument("--json", type=Path, help="also write every press and the totals here")
    parser.add_argument("--screenshot", type=Path, help="save the queue as the last press left it (the viewport) here")
    args = parser.parse_args()
    if args.labels + args.passes + args.undos > 5 * args.answers:
        parser.error("more key presses than the queue has items (five per answer)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "evals").mkdir()
        start = time.perf_counter()
        db, run_id = record(folder, args.answers)
        print(f"recorded {args.answers} answers in {time.perf_counter() - start:.1f} s", flush=True)
        port, token = free_port(), secrets.token_urlsafe(24)
        view = subprocess.Popen([sys.executable, "-m", "tracegrade.cli", "view", "--db", db, "--port", str(port)],
                                cwd=folder, env={**child_env(), "TRACEGRADE_VIEW_TOKEN": token},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_up(port, view)
            plan = key_plan(args.labels, args.passes, args.undos)
            login, opened, presses = label_in_browser(f"http://127.0.0.1:{port}", token, run_id, plan,
                                                      args.screenshot)
        finally:
            view.terminate()
            view.wait(timeout=30)
        counts = exported(folder, db, run_id)
    given = final_labels(plan)
    print(f"log in: {login:.0f} ms · open the queue (first, fresh server): {opened:.0f} ms")
    print("\n".join(table(presses)))
    print(f"labels given g/b/s: {given['g']}/{given['b']}/{given['s']} · in `tracegrade labels` (good/bad) and "
          f"the store (skip): {counts['g']}/{counts['b']}/{counts['s']} · "
          f"{'OK' if counts == given else 'MISMATCH'}")
    if args.json:
        args.json.write_text(json.dumps({"answers": args.answers, "login_ms": login, "open_ms": opened,
                                         "presses": presses, "given": given, "stored": counts}, indent=1) + "\n")
    if counts != given:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
