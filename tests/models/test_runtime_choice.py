"""The judge's one-token runtime picked by a probe, cached per machine: the choice with fake
timings, and once on the real weights (the file written, then read back instead of probing)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tracegrade.models import local, runtime_choice
from tracegrade.models.base import ChatOptions, Message
from tracegrade.models.local import LocalModel
from tracegrade.models.runtime_choice import IK, XLLAMACPP, choose, faster, machine_key
from tracegrade.models.weights import MODEL_ID, default_model_path

CPU = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 avx512f\n"


@pytest.mark.parametrize("seconds, picked", [
    ({IK: 0.30, XLLAMACPP: 0.50}, IK),
    ({IK: 0.50, XLLAMACPP: 0.30}, XLLAMACPP),
    ({IK: 0.49, XLLAMACPP: 0.50}, XLLAMACPP),  # within the margin: not worth a second runtime
])
def test_the_faster_runtime_is_picked(seconds, picked):
    assert faster(seconds) == picked


def test_a_machine_is_probed_once_then_read_from_the_cache(tmp_path):
    cache, probes = tmp_path / "choice.json", []

    def probe():
        probes.append(1)
        return {IK: 0.5, XLLAMACPP: 0.3}

    first = choose(probe, cache, "machine-a")
    again = choose(probe, cache, "machine-a")
    assert (first.runtime, first.cached) == (XLLAMACPP, False) and (again.runtime, again.cached) == (XLLAMACPP, True)
    assert len(probes) == 1 and json.loads(cache.read_text())["machine-a"]["seconds"] == {IK: 0.5, XLLAMACPP: 0.3}
    other = choose(lambda: {IK: 0.2, XLLAMACPP: 0.3}, cache, "machine-b")  # another CPU: measured, both kept
    assert other.runtime == IK and set(json.loads(cache.read_text())) == {"machine-a", "machine-b"}


def test_a_broken_cache_file_is_measured_over_and_an_unwritable_one_costs_only_the_probe(tmp_path):
    cache = tmp_path / "choice.json"
    cache.write_text("{not json")
    assert choose(lambda: {IK: 0.2, XLLAMACPP: 0.3}, cache, "m").runtime == IK
    assert json.loads(cache.read_text())["m"]["runtime"] == IK
    blocked = tmp_path / "file" / "choice.json"
    (tmp_path / "file").write_text("a file where the directory would be")
    assert choose(lambda: {IK: 0.2, XLLAMACPP: 0.3}, blocked, "m").cached is False


def test_the_key_changes_with_the_cpu_and_the_runtime_versions():
    versions = {IK: "0.1.5", XLLAMACPP: "2026.10"}
    key = machine_key(CPU, versions)
    assert key == machine_key(CPU, dict(versions))
    assert key != machine_key(CPU.replace(" avx512f", ""), versions)
    assert key != machine_key(CPU.replace("AMD EPYC", "Intel Xeon"), versions)
    assert key != machine_key(CPU, {**versions, IK: "0.1.6"})
    assert key != machine_key(CPU, versions, ik_load="mapped")


def test_the_setting_forces_a_runtime_and_auto_is_the_default(monkeypatch):
    monkeypatch.delenv("TRACEGRADE_NEXT_TOKEN", raising=False)
    assert local.next_token_runtime() == "auto"
    monkeypatch.setenv("TRACEGRADE_NEXT_TOKEN", "ik")
    assert local.next_token_runtime() is True
    monkeypatch.setenv("TRACEGRADE_NEXT_TOKEN", "xllamacpp")
    assert local.next_token_runtime() is False


class Lent:
    """The worker's scorer lent to a LocalModel: its answers, and a close that is only counted.
    WHY: the test checks which runtime is kept; the scorer loaded once serves the whole file set."""

    def __init__(self, scorer):
        self.scorer, self.closed = scorer, 0

    def top_tokens(self, messages, count):
        return self.scorer.top_tokens(messages, count)

    def close(self):
        self.closed += 1


@pytest.mark.slow  # the real weights, in two runtimes
def test_on_the_real_weights_the_choice_is_written_then_read_back(tmp_path, monkeypatch, capsys, real_scorer,
                                                                  real_xllamacpp):
    weights = default_model_path()  # WHY first: the weights live in the cache directory changed below
    monkeypatch.setenv("TRACEGRADE_CACHE_DIR", str(tmp_path))
    # WHY one round of a short question: this checks the choice is written and read back; the
    # rounds only steady the choice on a shared machine (two runtimes, a warm-up each, a call a
    # round), and the probe's 60-token question (a judge's) takes xllamacpp ~3 s on one thread here.
    monkeypatch.setattr(local, "PROBE_ROUNDS", 1)
    monkeypatch.setattr(local, "PROBE_QUESTION", Message("user", "Is 2+3 equal to 5?"))
    lent: list[Lent] = []
    monkeypatch.setattr(local, "NextTokenScorer", lambda path, *args: lent.append(Lent(real_scorer)) or lent[-1])
    question = [Message("system", "Answer with Yes or No."), Message("user", "Is 2+3 equal to 5?")]
    ask = ChatOptions(max_tokens=1, logprobs=20)
    model = LocalModel(weights, MODEL_ID, server=real_xllamacpp, next_token="auto")
    assert asyncio.run(model.complete(question, ask)).top_logprobs
    entry = next(iter(json.loads((tmp_path / runtime_choice.CACHE_FILE).read_text()).values()))
    assert entry["runtime"] in (IK, XLLAMACPP) and entry["seconds"][IK] > 0 and entry["seconds"][XLLAMACPP] > 0
    assert "measured now" in capsys.readouterr().err and not list(tmp_path.glob("*.gguf"))
    assert (model._scorer is lent[0]) is (entry["runtime"] == IK) and lent[0].closed == (entry["runtime"] == XLLAMACPP)

    def no_probe(self, scorer):
        raise AssertionError("probed again on a machine already measured")

    monkeypatch.setattr(LocalModel, "_probe", no_probe)
    again = LocalModel(weights, MODEL_ID, server=real_xllamacpp, next_token="auto")
    assert asyncio.run(again.complete(question, ask)).top_logprobs
    assert (again._scorer is not None) is (entry["runtime"] == IK)
    assert "measured on this machine before" in capsys.readouterr().err
    assert len(lent) == 2 and lent[1].closed == (entry["runtime"] == XLLAMACPP)
