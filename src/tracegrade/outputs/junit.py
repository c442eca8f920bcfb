"""JUnit XML, one testcase per case, for CI systems."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape
from pathlib import Path
from typing import TextIO

from tracegrade.core.results import CaseResult, Manifest, Run
from tracegrade.core.verdict import failing_metrics
from tracegrade.outputs import streamed
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
        self._rows.write(testcase_xml(result, self._dataset))

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


def testcase_xml(result: CaseResult, dataset: str) -> str:
    """One ``<testcase>`` element, as ElementTree writes it.

    WHY by hand: ElementTree's writer cost ~40 us a case, most of a large
    run's JUnit file; the escaping is ElementTree's own for attribute values."""
    head = (f'<testcase classname={_attr(f"{dataset}.{result.split}")} name={_attr(result.case_id)} '
            f'time="{result.seconds:.3f}"')
    if result.status == "error":
        return f"{head}><error message={_attr(result.error)} /></testcase>"
    if result.status != "pass":
        return f"{head}><failure message={_attr(_failure_message(result))} /></testcase>"
    return f"{head} />"


# What ElementTree escapes in an attribute value besides & < >.
_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}


def _attr(value: str) -> str:
    return '"' + escape(value, _ATTRIBUTE_ENTITIES) + '"'


def _failure_message(result: CaseResult) -> str:
    failed = [f"{c.name}: {c.detail}" for c in result.failed_checks()]
    failed += [f"{m.name} {m.value:.2f} < {m.threshold:g}" for m in failing_metrics(result.metrics)]
    if result.scores and not result.metrics:  # stored before metrics carried thresholds
        failed += [f"{m} {v:g}" for m, v in result.scores.items()]
    return "; ".join(failed) or result.error
