"""Names for runs on the command line: a run id (or a unique prefix of one),
``latest``, ``previous``, or a results.json file.

``latest`` is the most recent finished run in the store; ``previous`` is the
finished run before it on the same dataset, so ``compare previous latest``
means "the last run against the one before it". Interrupted and budget-stopped
runs are skipped by these two names but can be named by id.
"""

from __future__ import annotations

from pathlib import Path

from tracegrade.core.errors import ConfigError
from tracegrade.report import json_report
from tracegrade.core.results import Run
from tracegrade.store.runstore import RunInfo, RunStore

NAMES = ("latest", "previous")
_SCAN = 500  # how far back latest/previous look


def is_file_ref(ref: str) -> bool:
    return ref.endswith(".json") or Path(ref).is_file()


def finished_runs(store: RunStore, dataset: str | None = None) -> list[RunInfo]:
    return [i for i in store.runs(limit=_SCAN, dataset=dataset) if i.status == "finished"]


def resolve_id(store: RunStore, ref: str) -> str:
    if ref in NAMES:
        finished = finished_runs(store)
        if not finished:
            raise ConfigError(f"no finished run in {store.url}")
        if ref == "latest":
            return finished[0].run_id
        same = finished_runs(store, finished[0].dataset)
        if len(same) < 2:
            raise ConfigError(f"no finished run before the latest ({same[0].run_id}) on {same[0].dataset}")
        return same[1].run_id
    ids = store.run_ids(ref)
    if len(ids) != 1:
        raise ConfigError(f"{'no run' if not ids else f'{len(ids)} runs'} matching {ref!r} in {store.url}")
    return ids[0]


def load(ref: str, store: RunStore | None) -> Run:
    """The run ``ref`` names; ``store`` may be None when every ref is a file."""
    if is_file_ref(ref):
        if not Path(ref).is_file():
            raise ConfigError(f"results file {ref} not found")
        return json_report.read(Path(ref))
    if store is None:
        raise ConfigError(f"{ref!r} names a stored run but no store is open")
    return store.load_run(resolve_id(store, ref))
