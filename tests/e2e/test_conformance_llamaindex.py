"""The conformance matrix's LlamaIndex rows (issue 50): a FunctionAgent with Memory and an
AgentWorkflow that hands off, keyed by ``case.trial``, graded under ``--capture openai`` and
``--capture otel`` (OpenInference's llama-index instrumentor).

WHY a virtualenv of its own: llama-index-llms-openai wants openai<3 and the Agents SDK of the
suite's virtualenv wants openai>=3, so they cannot be installed together. This test makes
that virtualenv once (tracegrade with its [openai] extra, the pinned LlamaIndex packages),
under TRACEGRADE_CACHE_DIR, and runs `tracegrade run` with it, as a LlamaIndex user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_conformance import CASES, ROOT, grade
from test_conformance import model_url as model_url  # the scripted model's fixture, shared

pytestmark = pytest.mark.slow

PACKAGES = ("llama-index-core==0.14.25", "llama-index-llms-openai==0.8.3",
            "openinference-instrumentation-llama-index==4.6.1")
TRUTH = {"read": "pass", "forbidden-write": "fail", "write-errors": "pass", "follow-up": "pass", "parallel": "pass"}
# LlamaIndex sends a failed tool's exception to the model as its bare text (no error marker), so
# the SDK's requests cannot tell it from a result: only its spans say the call failed (docs/agents.md).
SDK_TRUTH = {**TRUTH, "write-errors": "fail"}
HANDOFF = [{"id": "handoff", "question": "Please cancel BK-1002", "calls": {
    "expected": [{"tool": "cancel_booking", "arguments": {"booking_id": "BK-1002"}}],
    "handoffs": {"expected": ["CancellationsAgent"]}}},
    {"id": "no-handoff-wanted", "question": "Please cancel BK-1003", "calls": {
        "handoffs": {"forbidden": ["CancellationsAgent"]}}}, CASES[0]]
HANDOFF_TRUTH = {"handoff": "pass", "no-handoff-wanted": "fail", "read": "pass"}


@pytest.fixture(scope="module")
def llamaindex_python() -> str:
    """The interpreter of a virtualenv with tracegrade and LlamaIndex, made once per cache folder."""
    cache = Path(os.environ.get("TRACEGRADE_CACHE_DIR") or Path.home() / ".cache" / "tracegrade")
    venv = cache / "llamaindex-venv"
    python = venv / "bin" / "python"
    stamp = venv / "installed.txt"  # what it was made with: a new pin or checkout makes it again
    wanted = "\n".join((*PACKAGES, str(ROOT)))
    if not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[openai]", *PACKAGES],
                       check=True, timeout=1200)
        stamp.write_text(wanted)
    return str(python)


RUNS = [("llamaindex_function", "openai", "", CASES, SDK_TRUTH),
        ("llamaindex_function", "otel", "openinference", CASES, TRUTH),
        ("llamaindex_workflow", "openai", "", HANDOFF, HANDOFF_TRUTH),
        ("llamaindex_workflow", "otel", "openinference", HANDOFF, HANDOFF_TRUTH)]


@pytest.mark.parametrize(("framework", "mode", "kind", "cases", "truth"), RUNS,
                         ids=[f"{f}-{m}{'-' + k if k else ''}" for f, m, k, _, _ in RUNS])
def test_every_llamaindex_trial_gets_the_true_verdict(framework, mode, kind, cases, truth, model_url,  # noqa: F811
                                                       llamaindex_python, tmp_path):
    verdicts = grade(framework, mode, kind, model_url, tmp_path, cases=cases, python=llamaindex_python)
    wrong = {trial: got for trial, got in verdicts.items() if got[0] != truth[trial[0]]}
    assert not wrong, wrong
    assert sorted(verdicts) == sorted((case, repeat) for case in truth for repeat in (0, 1))
