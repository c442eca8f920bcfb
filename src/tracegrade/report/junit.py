"""JUnit XML, one testcase per case, for CI systems."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.eval.verdict import failing_metrics
from tracegrade.report import streamed
from tracegrade.stats.tally import RunTally


def to_xml(run: Run, summary: RunTally | None = None) -> str:
    return streamed.to_text(Writer, run, summary)


def write(run: Run, path: Path, summary: RunTally | None = None) -> Path:
    return streamed.to_file(Writer, run, path, summary)


class Writer:
    """The XML fed one case at a time (``add``), written whole by ``finish``: the
    suite's counts from the run's tally, then the testcases in run order.

    WHY streamed, not one ElementTree: a tree of 100,000 testcases held tens of
    MB only to be serialised once."""

    def __init__(self, manifest: Manifest) -> None:
        self._dataset, self._rows = manifest.dataset, streamed.Rows()

    def add(self, result: CaseResult) -> None:
        self._rows.write(ET.tostring(_testcase(result, self._dataset), encoding="unicode"))

    def finish(self, ending: streamed.Ending, out: TextIO) -> None:
        summary, counts = ending.summary, ending.summary.statuses
        suite = ET.Element("testsuite", name=f"tracegrade {ending.manifest.dataset}", tests=str(summary.cases),
                           failures=str(counts["fail"] + counts["unscored"]), errors=str(counts["error"]),
                           time=f"{sum(summary.seconds):.3f}")
        empty = ET.tostring(suite, encoding="unicode", xml_declaration=True)  # '<?xml ...?>\n<testsuite ... />'
        if not self._rows.count:
            out.write(empty)
            return
        out.write(empty.removesuffix(" />") + ">")
        self._rows.copy_to(out)
        out.write("</testsuite>")


def _testcase(result: CaseResult, dataset: str) -> ET.Element:
    case = ET.Element("testcase", classname=f"{dataset}.{result.split}", name=result.case_id, time=f"{result.seconds:.3f}")
    if result.status == "error":
        ET.SubElement(case, "error", message=result.error)
    elif result.status != "pass":
        ET.SubElement(case, "failure", message=_failure_message(result))
    return case


def _failure_message(result: CaseResult) -> str:
    failed = [f"{c.name}: {c.detail}" for c in result.failed_checks()]
    failed += [f"{m.name} {m.value:.2f} < {m.threshold:g}" for m in failing_metrics(result.metrics)]
    if result.scores and not result.metrics:  # stored before metrics carried thresholds
        failed += [f"{m} {v:g}" for m, v in result.scores.items()]
    return "; ".join(failed) or result.error
