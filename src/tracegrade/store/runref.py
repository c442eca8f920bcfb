"""Names for runs on the command line: a run id (or a unique prefix of one),
``latest``, ``previous``, or a results.json file.

``latest`` is the most recent finished run in the store; ``previous`` is the
finished run before it on the same dataset, so ``compare previous latest``
means "the last run against the one before it". Interrupted and budget-stopped
runs are skipped by these two names but can be named by id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tracegrade.core.errors import ConfigError
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
        return pick_name(ref, [(i.run_id, i.dataset) for i in finished_runs(store)], store.url)
    return pick_prefix(ref, store.run_ids(ref), store.url)


def pick_name(ref: str, finished: Sequence[tuple[str, str]], where: str) -> str:
    """``latest`` or ``previous`` among finished runs ``(run_id, dataset)``, newest first.

        >>> pick_name("previous", [("r3", "a"), ("r2", "b"), ("r1", "a")], "here")
        'r1'
    """
    if not finished:
        raise ConfigError(f"no finished run in {where}")
    if ref == "latest":
        return finished[0][0]
    same = [run_id for run_id, dataset in finished if dataset == finished[0][1]]
    if len(same) < 2:
        raise ConfigError(f"no finished run before the latest ({same[0]}) on {finished[0][1]} in {where}")
    return same[1]


def pick_prefix(ref: str, ids: Sequence[str], where: str) -> str:
    """The id ``ref`` is, else the one id it starts; an exact id wins even when it
    starts others too ("r1" among r1 and r10)."""
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) != 1:
        raise ConfigError(f"{'no run' if not matches else f'{len(matches)} runs'} matching {ref!r} in {where}"
                          + (" (ambiguous)" if matches else ""))
    return matches[0]


def from_folders(ref: str, runs_dir: Path) -> Run:
    """The run ``ref`` names among the ``results.json`` files under ``runs_dir``
    (finished runs), with the same meaning of latest/previous as in the store."""
    ids = sorted((p.parent.name for p in Path(runs_dir).glob("*/results.json")), reverse=True)
    if ref in NAMES:
        runs = [(i, Run.read(Path(runs_dir) / i / "results.json").manifest.dataset) for i in ids]
        chosen = pick_name(ref, runs, str(runs_dir))
    else:
        chosen = pick_prefix(ref, ids, str(runs_dir))
    return Run.read(Path(runs_dir) / chosen / "results.json")


def load(ref: str, store: RunStore | None) -> Run:
    """The run ``ref`` names; ``store`` may be None when every ref is a file."""
    if is_file_ref(ref):
        if not Path(ref).is_file():
            raise ConfigError(f"results file {ref} not found")
        return Run.read(ref)
    if store is None:
        raise ConfigError(f"{ref!r} names a stored run but no store is open")
    return store.load_run(resolve_id(store, ref))
