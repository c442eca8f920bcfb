"""Shared fixtures. Fakes are plain functions; the real embedding model is
loaded once per session, offline."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import PurePosixPath
from typing import Sequence

import numpy as np
import pytest

# The embedding model ships inside a package; a test must never reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
# WHY one OpenMP thread (torch reads it when first imported, child processes inherit it):
# `make test` runs two workers on two cores, and torch's pool of two threads spins whenever
# the other worker holds a core (the MiniLM files beside a busy core: 40 -> 27 s, 24 -> 16 s of CPU).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# WHY: --doctest-modules imports every module under tests/; a target module that
# loads the local model at import (joining 1.1 GB of weights on a cold cache)
# is for subprocess runs only, and has no doctests.
collect_ignore = ["fault_target.py"]

_DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9]+")


def hashing_embedder(texts: Sequence[str]) -> np.ndarray:
    """A cheap, deterministic stand-in for MiniLM: bag of words hashed into
    256 buckets, each row L2-normalised (an all-zero row stays zero)."""
    rows = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
            rows[row, bucket % _DIMENSIONS] += 1.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


@pytest.fixture
def fake_embedder():
    """The hashing embedder, as a fixture for tests that want one by name."""
    return hashing_embedder


@pytest.fixture(scope="session")
def minilm_knowledge():
    """The real knowledge base: the shipped policies embedded with all-MiniLM-L6-v2."""
    from shopnest.knowledge import KnowledgeBase, load_policies, minilm_embedder

    return KnowledgeBase(load_policies(), minilm_embedder())


# WHY one thread for the real model in tests: `make test` runs two workers on two cores, and a
# llama.cpp runtime on two threads spins at its barriers whenever the other worker holds a core
# (its calls took 1.5-3x as long beside a busy core, for ~40% more CPU). The answers are the same.
REAL_MODEL_THREADS = 1


@pytest.fixture(scope="session")
def real_scorer():
    """ik_llama.cpp's next-token scorer on the real weights the suite joins, loaded once per
    worker for test_next_token.py and test_runtime_choice.py (one worker runs both: the
    scheduler below). WHY shared: a load repacks 1 GB of weights, ~3 s of CPU a time."""
    from tracegrade.models.next_token import NextTokenScorer
    from tracegrade.models.weights import default_model_path

    scorer = NextTokenScorer(default_model_path(), threads=REAL_MODEL_THREADS)
    yield scorer
    scorer.close()


@pytest.fixture(scope="session")
def real_xllamacpp():
    """xllamacpp's runtime on the same weights, started once per worker (~4 s); a test hands it
    to ``LocalModel(..., server=real_xllamacpp)``."""
    from tracegrade.models.local import LocalModel
    from tracegrade.models.weights import MODEL_ID, default_model_path

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRACEGRADE_THREADS", str(REAL_MODEL_THREADS))  # read when the runtime starts
        return LocalModel(default_model_path(), MODEL_ID)._ensure_server()


@pytest.fixture(scope="session")
def scipy_stats():
    """scipy.stats, for the tests that check our statistics against it (test_agreement.py,
    test_pairstats.py: one worker, the scheduler below). WHY not imported at the top of those
    modules: every worker collects every module, and scipy.stats costs ~2 s of CPU to import."""
    from scipy import stats

    return stats


@pytest.fixture(autouse=True)
def evidence_ranked_by_words(request, monkeypatch):
    """The judge picks long evidence's passages by shared words, not the embeddings model,
    in every test but those marked ``embeddings``: for a scripted judge, which ignores what
    it is shown. WHY: the model costs seconds of CPU an answer on a busy machine, and its
    first use in a process ~7 s more (torch's import and the model's load), which each of
    the suite's workers paid in whichever scripted-judge test ranked first.
    tests/judge/test_judge_evidence.py tests the model's ranking (marked)."""
    if request.node.get_closest_marker("embeddings"):
        return
    from tracegrade.judge import relevant

    monkeypatch.setattr(relevant, "default_rank", lambda: relevant.lexical_rank)


@pytest.fixture
def fake_knowledge():
    """The shipped policies behind the hashing embedder: real files, no torch."""
    from shopnest.knowledge import KnowledgeBase, load_policies

    return KnowledgeBase(load_policies(), hashing_embedder)


@pytest.fixture(autouse=True)
def _isolated_stores(tmp_path_factory, monkeypatch):
    """WHY: a test must never write runs or spans into the checkout's own
    .tracegrade/ (a user's `latest` would become a test run). Tests that need a
    particular store set these again themselves."""
    home = tmp_path_factory.mktemp("tracegrade-state")
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{home / 'runs.db'}")
    monkeypatch.setenv("TRACEGRADE_SPANS_DB", str(home / "spans.db"))


@pytest.fixture
def otel_globals_restored():
    """For a test that runs ``capture=("otel",)`` in this process: OpenTelemetry's global
    tracer provider and capture's span processor put back to none after it. WHY: the
    provider is set once per process, and later tests in the same worker (test_telemetry's)
    rely on none being set; which tests share a worker depends on the order files go out."""
    from opentelemetry import trace
    from opentelemetry.util._once import Once

    import tracegrade.agent.capture.otel as capture_otel

    yield
    trace._TRACER_PROVIDER = None
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    capture_otel._processor = None


# WHY: two installed plugins unrelated to tracegrade (langsmith's, from the framework
# examples' extra, and hypothesis's) cost a child pytest 2-5 s of imports at each start;
# a test of our plugin runs a dozen child pytests. The loop scope: pytest-asyncio warns of its
# default in every run without it, and a run inside this process adds the warning to the suite's.
CHILD_PYTEST_ADDOPTS = "-p no:langsmith_plugin -p no:hypothesispytest -o asyncio_default_fixture_loop_scope=function"


@pytest.fixture
def pytester(pytester, monkeypatch):
    """pytest's own ``pytester``, its child runs without the two unrelated plugins."""
    monkeypatch.setenv("PYTEST_ADDOPTS", CHILD_PYTEST_ADDOPTS)
    return pytester


def pytest_collection_modifyitems(config, items):
    """The files holding a ``slow`` test first, each file's tests in their own order.

    WHY: ``make test`` hands whole files to two workers in the order collected
    (``--dist loadfile --no-loadscope-reorder``), the next file to whichever worker is
    free. The long files first and the many short ones after them leave the two
    workers finishing together; the other way round, a worker that took a 30 s file
    last finishes alone (xdist's own order, most tests first, put the long files,
    which have few tests, last)."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


# Files that load the same heavy model or library, each set run by one worker, one file after
# the other. WHY: a worker pays for a model once (the session fixtures above; torch's import and
# MiniLM's load for the embeddings files), and the two real-weights files never run at once, each
# runtime spinning its two threads on the two cores the other worker is using; scipy (with
# scikit-learn) and anthropic's SDK, ~2 s of CPU each to import, are imported by one worker only.
SHARED_MODEL_FILES = {
    "test_next_token.py": "the real weights", "test_runtime_choice.py": "the real weights",
    "test_retrieval.py": "MiniLM", "test_judge_evidence.py": "MiniLM",
    "test_agreement.py": "scipy", "test_pairstats.py": "scipy",
    "test_capture.py": "anthropic", "test_models.py": "anthropic",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` as xdist does it, each set of SHARED_MODEL_FILES one unit of work."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedModelFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return SHARED_MODEL_FILES.get(PurePosixPath(path).name, path)

    return SharedModelFiles(config, log)
