"""A run's component metrics, stratified table and flags: the text `tracegrade run`
prints at its end (report.stratified), from the stored run.

The component metrics need each case's expectations, which live in the dataset
file, not in the store: the file the manifest names is read when it is there
with the same version; without it the page says so and shows what it can."""

from __future__ import annotations

import functools
from pathlib import Path

from tracegrade.core.errors import TracegradeError
from tracegrade.core.results import Run
from tracegrade.case.schema import GoldenCase
from tracegrade.case.dataset import load_dataset
from tracegrade.metrics import run_metrics
from tracegrade.metrics.stratify import Threshold
from tracegrade.report import stratified
from tracegrade.run.evaluate import parse_thresholds
from tracegrade.store.runstore import RunInfo
from tracegrade.view.shell import e, layout, run_url, section


def render(info: RunInfo, run: Run) -> str:
    cases, note = dataset_cases(info)
    text = stratified.render(run_metrics(run.results, cases, flag_thresholds(info)))
    body = (f'<p class="muted">{e(note)}</p>' if note else "") + section(
        "Component metrics, stratified table, flags", f"<pre id=\"stratified\">{e(text)}</pre>", "metrics")
    return layout(f"Metrics of {info.run_id}", body, crumbs=[("runs", "/"), (info.run_id, run_url(info.run_id)),
                                                             ("metrics", run_url(info.run_id) + "/metrics")])


def flag_thresholds(info: RunInfo) -> dict[str, Threshold]:
    """The thresholds the run flagged its groups at (its --flag-threshold), as its FLAGS section did."""
    given = info.manifest.settings.get("flagThresholds") or ()
    return parse_thresholds([str(t) for t in given] if isinstance(given, list) else [])


DATASET_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
REFERENCE_FILE_BYTES = 4 * 2**20


def dataset_cases(info: RunInfo) -> tuple[list[GoldenCase], str]:
    """The run's dataset cases when its file is here at the run's version, else none and why."""
    path = dataset_file(info)
    if path is None:
        return [], (f"the dataset file {info.dataset} is not here (looked for {' and '.join(_places(info))}): "
                    "metrics that need the cases' expectations show '-'")
    try:
        return _read(str(path), path.stat().st_mtime_ns, info.dataset, info.dataset_version)
    except OSError:
        return [], (f"the dataset file {info.dataset} could not be read: metrics that need the cases' "
                    "expectations show '-'")


def dataset_file(info: RunInfo) -> Path | None:
    """The run's dataset file: where the run found it (absolute), as given from the folder it ran in,
    then the base name of runs stored before paths were; None when none is here.

    WHY only dataset files under the folder the view serves from: the paths come from the store,
    which a shared database lets others write."""
    here = Path.cwd().resolve()
    for place in _places(info):
        path = Path(place).resolve()
        if path.suffix.lower() in DATASET_SUFFIXES and path.is_relative_to(here) and path.is_file():
            return path
    return None


def _places(info: RunInfo) -> list[str]:
    settings = info.manifest.settings
    given = [settings.get("datasetPath"), settings.get("datasetFile"), info.dataset]
    return list(dict.fromkeys(p for p in given if isinstance(p, str) and p))


def reference(info: RunInfo, case_id: str) -> tuple[str | None, str]:
    """The case's reference answer from the run's dataset file (as ``dataset_cases`` finds
    it), or None and why not. WHY a size bound: a case page must stay quick, and reading
    a 100,000-case file took 7 s (bench/results/view-pages-10k.txt); the metrics page
    reads any size."""
    path = dataset_file(info)
    try:
        size = path.stat().st_size if path else 0
    except OSError:
        size = 0
    if size > REFERENCE_FILE_BYTES:
        return None, f"the dataset file is over {REFERENCE_FILE_BYTES // 2**20} MB: a case page does not read it"
    cases, why = dataset_cases(info)
    found = next((c.golden_answer for c in cases if c.id == case_id), None)
    return found, why or ("" if found else "the case has no reference answer in the dataset file")


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int, name: str, version: str) -> tuple[list[GoldenCase], str]:
    """WHY cached by modification time: a case page asks for its reference on every view."""
    return _load(Path(path), name, version)


def _load(path: Path, name: str, version: str) -> tuple[list[GoldenCase], str]:
    if not path.is_file():
        return [], f"the dataset file {name} is not a file"
    try:
        dataset = load_dataset(path)
    except TracegradeError as exc:
        return [], f"the dataset file could not be read: {exc}"
    if dataset.version != version:
        return [], (f"the dataset file {name} has changed since this run (version {dataset.version}, "
                    f"the run's {version}): metrics that need the cases' expectations show '-'")
    return list(dataset.cases), ""
