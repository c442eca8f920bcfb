"""tracegrade: evaluate tool-using LLM agents by what they did, not only by what they said.

    >>> import tracegrade
    >>> run = tracegrade.evaluate("evals/golden.json", "mypkg.agent:answer", judge=None)  # doctest: +SKIP
    >>> run.pass_rate, [r.case_id for r in run.results if not r.passed]  # doctest: +SKIP

The public names below load on first use, so ``import tracegrade`` (and the
CLI's ``--help``) stays fast however much the package holds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> (module, attribute)
_EXPORTS = {
    "evaluate": ("tracegrade.run.evaluate", "evaluate"),
    "evaluate_async": ("tracegrade.run.evaluate", "evaluate_async"),
    "write_outputs": ("tracegrade.outputs.files", "write_outputs"),
    "Evaluation": ("tracegrade.run.recording", "Evaluation"),
    "RunSettings": ("tracegrade.run.runner", "RunSettings"),
    "Dataset": ("tracegrade.case.dataset", "Dataset"),
    "Case": ("tracegrade.case.schema", "GoldenCase"),
    "GoldenCase": ("tracegrade.case.schema", "GoldenCase"),
    "load_dataset": ("tracegrade.case.dataset", "load_dataset"),
    "Reply": ("tracegrade.core.trace", "Reply"),
    "ToolCall": ("tracegrade.core.trace", "ToolCall"),
    "Step": ("tracegrade.core.trace", "Step"),
    "Usage": ("tracegrade.core.trace", "Usage"),
    "Check": ("tracegrade.checks.plugins", "Check"),
    "Target": ("tracegrade.agent.plugins", "Target"),
    "CheckResult": ("tracegrade.core.results", "CheckResult"),
    "CaseResult": ("tracegrade.core.results", "CaseResult"),
    "Manifest": ("tracegrade.core.results", "Manifest"),
    "Run": ("tracegrade.core.results", "Run"),
    "Scores": ("tracegrade.core.results", "Scores"),
    "Unscored": ("tracegrade.core.results", "Unscored"),
    "Judge": ("tracegrade.judge.scoring", "Judge"),
    "load_model": ("tracegrade.models", "load_model"),
    "RunStore": ("tracegrade.store.runstore", "RunStore"),
    "open_store": ("tracegrade.store.runstore", "open_store"),
    "TracegradeError": ("tracegrade.core.errors", "TracegradeError"),
    "write_results_json": ("tracegrade.outputs.json_report", "write"),
    "write_junit": ("tracegrade.outputs.junit", "write"),
    "write_summary_markdown": ("tracegrade.outputs.markdown", "write"),
    "write_html": ("tracegrade.report.html", "write"),
    "render_console": ("tracegrade.report.console", "render"),
    "assert_checks_pass": ("tracegrade.pytest_plugin", "assert_checks_pass"),
    "capture_reply": ("tracegrade.agent.capture.reply", "capture_reply"),
    "Captured": ("tracegrade.agent.capture.reply", "Captured"),
}

__all__ = [  # a literal list: type checkers read it (mypy --strict exports only what it names)
    "__version__",
    "evaluate", "evaluate_async", "write_outputs", "Evaluation", "RunSettings", "Dataset", "Case",
    "GoldenCase", "load_dataset", "Reply", "ToolCall", "Step", "Usage", "Check", "Target", "CheckResult",
    "CaseResult", "Manifest", "Run", "Scores", "Unscored", "Judge", "load_model", "RunStore", "open_store",
    "TracegradeError", "write_results_json", "write_junit", "write_summary_markdown", "write_html",
    "render_console", "assert_checks_pass", "capture_reply", "Captured",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'tracegrade' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what type checkers and IDEs see (`X as X`: an explicit re-export, for mypy --strict)
    from tracegrade.core.errors import TracegradeError as TracegradeError
    from tracegrade.core.results import CaseResult as CaseResult, CheckResult as CheckResult, Manifest as Manifest, Run as Run, Scores as Scores, Unscored as Unscored
    from tracegrade.core.trace import Reply as Reply, Step as Step, ToolCall as ToolCall, Usage as Usage
    from tracegrade.case.dataset import Dataset as Dataset, load_dataset as load_dataset
    from tracegrade.case.schema import GoldenCase as GoldenCase
    from tracegrade.case.schema import GoldenCase as Case
    from tracegrade.outputs.files import write_outputs as write_outputs
    from tracegrade.run.evaluate import evaluate as evaluate, evaluate_async as evaluate_async
    from tracegrade.agent.capture.reply import Captured as Captured, capture_reply as capture_reply
    from tracegrade.run.recording import Evaluation as Evaluation
    from tracegrade.agent.plugins import Target as Target
    from tracegrade.checks.plugins import Check as Check
    from tracegrade.run.runner import RunSettings as RunSettings
    from tracegrade.judge.scoring import Judge as Judge
    from tracegrade.models import load_model as load_model
    from tracegrade.pytest_plugin import assert_checks_pass as assert_checks_pass
    from tracegrade.report.console import render as render_console
    from tracegrade.report.html import write as write_html
    from tracegrade.outputs.json_report import write as write_results_json
    from tracegrade.outputs.junit import write as write_junit
    from tracegrade.outputs.markdown import write as write_summary_markdown
    from tracegrade.store.runstore import RunStore as RunStore, open_store as open_store
