"""A run's component metrics, stratified table and flags: the text `tracegrade run`
prints at its end (report.stratified), from the stored run.

The component metrics need each case's expectations, which live in the dataset
file, not in the store: the file the manifest names is read when it is there
with the same version; without it the page says so and shows what it can."""

from __future__ import annotations

from pathlib import Path

from tracegrade.core.errors import TracegradeError
from tracegrade.core.results import Run
from tracegrade.eval.dataset import GoldenCase, load_dataset
from tracegrade.metrics import run_metrics
from tracegrade.report import stratified
from tracegrade.store.runstore import RunInfo
from tracegrade.view.shell import e, layout, run_url, section


def render(info: RunInfo, run: Run) -> str:
    cases, note = dataset_cases(info)
    text = stratified.render(run_metrics(run.results, cases))
    body = (f'<p class="muted">{e(note)}</p>' if note else "") + section(
        "Component metrics, stratified table, flags", f"<pre id=\"stratified\">{e(text)}</pre>", "metrics")
    return layout(f"Metrics of {info.run_id}", body, crumbs=[("runs", "/"), (info.run_id, run_url(info.run_id)),
                                                             ("metrics", run_url(info.run_id) + "/metrics")])


def dataset_cases(info: RunInfo) -> tuple[list[GoldenCase], str]:
    """The run's dataset cases when its file is here at the run's version, else none and why."""
    path = Path(info.dataset)
    if not path.is_file():
        return [], (f"the dataset file {info.dataset} is not here (the view runs in another folder?): "
                    "metrics that need the cases' expectations show '-'")
    try:
        dataset = load_dataset(path)
    except TracegradeError as exc:
        return [], f"the dataset file could not be read: {exc}"
    if dataset.version != info.dataset_version:
        return [], (f"the dataset file {info.dataset} has changed since this run (version {dataset.version}, "
                    f"the run's {info.dataset_version}): metrics that need the cases' expectations show '-'")
    return list(dataset.cases), ""
