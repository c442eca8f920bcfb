"""The view computes a run's metrics once: a second request reads what the first
computed, four at once wait for one computation, and a changed run or dataset
file is computed again (view/memo.py, the metrics route of view/app.py)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from runs_support import result, run
from support import serving
from tracegrade.store.runstore import open_store
from tracegrade.view.app import create_view_app
from tracegrade.view.memo import Memo
from view_support import record


class CountingStore:
    """The run store, counting (and slowing) each whole-run read: what the metrics page costs."""

    def __init__(self, store) -> None:
        self._store = store
        self.loads = 0
        self._lock = threading.Lock()

    def load_run(self, run_id: str, *args, **kwargs):
        with self._lock:
            self.loads += 1
        time.sleep(0.3)  # long enough for requests sent together to overlap
        return self._store.load_run(run_id, *args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._store, name)


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([result("c-1"), result("c-2", "fail")], run_id="r1"))
    counting = CountingStore(store)
    with serving(create_view_app(counting)) as url:
        yield url, counting, store
    store.close()


def test_a_second_request_for_a_finished_runs_metrics_does_not_compute_again(served):
    url, counting, _ = served
    first = httpx.get(f"{url}/runs/r1/metrics", headers={"Host": "localhost"}, timeout=30)
    second = httpx.get(f"{url}/runs/r1/metrics", headers={"Host": "localhost"}, timeout=30)
    assert first.status_code == second.status_code == 200
    assert first.text == second.text and "STRATIFIED" in first.text
    assert counting.loads == 1


def test_four_requests_at_once_compute_the_metrics_once(served):
    url, counting, _ = served

    def fetch(_: int) -> int:
        return httpx.get(f"{url}/runs/r1/metrics", headers={"Host": "localhost"}, timeout=30).status_code

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(fetch, range(4))) == [200] * 4
    assert counting.loads == 1


def test_a_run_still_recording_is_computed_again_when_a_case_arrives(served):
    url, counting, store = served
    from tracegrade.core.results import Manifest

    live = Manifest("r2", "golden.json", "v1", 3, "t", "agent-m", None, None, started_at="2026-11-30T00:00:00+00:00")
    store.start_run(live)
    store.save_cases("r2", [(result("c-1"), 0)])
    httpx.get(f"{url}/runs/r2/metrics", headers={"Host": "localhost"}, timeout=30)
    httpx.get(f"{url}/runs/r2/metrics", headers={"Host": "localhost"}, timeout=30)
    store.save_cases("r2", [(result("c-2"), 1)])
    httpx.get(f"{url}/runs/r2/metrics", headers={"Host": "localhost"}, timeout=30)
    assert counting.loads == 2


def write_dataset(folder, questions: list[str]) -> str:
    """A dataset file the metrics page reads (under the folder the view serves from); its version."""
    import json

    from tracegrade.case.dataset import load_dataset

    path = folder / "golden.json"
    path.write_text(json.dumps([{"id": f"c-{i + 1}", "question": q} for i, q in enumerate(questions)]))
    return load_dataset(path).version


def test_with_its_dataset_file_here_the_metrics_are_kept_until_the_file_changes(served, tmp_path, monkeypatch):
    from tracegrade.view import metrics_page

    url, counting, store = served
    load = metrics_page._load

    def slow_load(*args):
        time.sleep(0.3)  # WHY: four requests then read the file at once, as with a 23 MB dataset
        return load(*args)

    monkeypatch.setattr(metrics_page, "_load", slow_load)
    version = write_dataset(tmp_path, ["one?", "two?"])
    record(store, run([result("c-1"), result("c-2")], run_id="r3", version=version))

    def fetch(_: int = 0) -> str:
        page = httpx.get(f"{url}/runs/r3/metrics", headers={"Host": "localhost"}, timeout=30)
        assert page.status_code == 200
        return page.text

    with ThreadPoolExecutor(4) as pool:
        pages = list(pool.map(fetch, range(4)))
    fetch()
    assert counting.loads == 1 and "changed since this run" not in pages[0]
    time.sleep(0.01)  # a new modification time
    write_dataset(tmp_path, ["one?", "two, edited?"])
    assert "changed since this run" in fetch()
    assert counting.loads == 2


def test_a_value_that_failed_to_compute_is_not_kept():
    memo: Memo[int] = Memo(size=2)

    def broken() -> int:
        raise RuntimeError("store gone")

    with pytest.raises(RuntimeError):
        memo.get("k", broken)
    assert memo.get("k", lambda: 7) == 7


def test_a_value_no_longer_fresh_is_computed_again():
    memo: Memo[str] = Memo(size=2)
    memo.get("k", lambda: "old")
    assert memo.get("k", lambda: "new", fresh=lambda value: value != "old") == "new"
    assert memo.get("k", lambda: "newer") == "new"


def test_only_the_last_keys_are_kept():
    memo: Memo[str] = Memo(size=2)
    for key in "abc":
        memo.get(key, lambda key=key: key)
    assert memo.get("a", lambda: "again") == "again"  # evicted: computed again
    assert memo.get("c", lambda: "again") == "c"
