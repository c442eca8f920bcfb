"""JUnit XML, one testcase per case, for CI systems."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tracegrade.core.results import CaseResult, Run
from tracegrade.eval.verdict import failing_metrics


def to_xml(run: Run) -> str:
    results = run.results
    suite = ET.Element(
        "testsuite",
        name=f"tracegrade {run.manifest.dataset}",
        tests=str(len(results)),
        failures=str(sum(r.status in ("fail", "unscored") for r in results)),
        errors=str(sum(r.status == "error" for r in results)),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    for result in results:
        suite.append(_testcase(result, run.manifest.dataset))
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="unicode", xml_declaration=True)


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


def write(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_xml(run), encoding="utf-8")
    return path
