"""`compare` says which changed verdicts are the agent's own run-to-run noise:
cases that also changed between stored runs of the baseline's unchanged setup."""

from __future__ import annotations

import json
from dataclasses import replace

from runs_support import result, run
from tracegrade.cli import main
from tracegrade.compare.noise import noise_note, same_setup, unstable_cases
from tracegrade.store.runstore import open_store


def _store(url: str, *runs) -> None:
    with open_store(url) as store:
        for index, r in enumerate(runs):
            store.start_run(r.manifest)
            for position, case in enumerate(r.results):
                store.save_case(r.manifest.run_id, case, position)
            store.finish_run(replace(r.manifest, ended_at=f"2026-11-30T0{index}:00:00+00:00"), "finished")


def test_a_change_on_a_case_that_flips_by_itself_is_called_noise(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    first = run([result("a", "pass"), result("b", "pass")], run_id="20261130-000001-aaaaaa", judge=None)
    second = run([result("a", "fail"), result("b", "pass")], run_id="20261130-000002-bbbbbb", judge=None)
    third = run([result("a", "pass"), result("b", "pass")], run_id="20261130-000003-cccccc", judge=None)
    other = run([result("a", "fail"), result("b", "fail")], run_id="20261130-000004-dddddd", judge=None)
    other = replace(other, manifest=replace(other.manifest, prompt_version="terse"))
    _store(url, first, second, third, other)
    out = tmp_path / "verdict.json"
    main(["compare", "20261130-000003", "20261130-000004", "--db", url, "--json", str(out)])
    notes = json.loads(out.read_text())["notes"]
    noise = [n for n in notes if "own noise" in n]
    # a flipped between the baseline's own runs; b never did, so b's change is not called noise
    assert len(noise) == 1 and ": a also changed verdict between 3 runs" in noise[0]


def test_no_note_without_runs_of_the_same_setup():
    assert noise_note(["a"], set(), 0) is None
    assert unstable_cases([]) == set()


def test_a_different_prompt_is_a_different_setup():
    a = run([result("a")]).manifest
    assert same_setup(a, replace(a, run_id="other", started_at="later"))
    assert not same_setup(a, replace(a, prompt_version="terse"))
