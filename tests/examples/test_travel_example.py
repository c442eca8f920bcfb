"""The travel example: the scripted agent passes all 30 cases; each flaw of the
broken variant fails exactly the cases it should, for the named reasons.

The expected failures below are derived from what each flaw does and from the
rules of docs/trajectory.md (one check's code is its first failure), not
copied from a run.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from places import ROOT
sys.path.insert(0, str(ROOT))  # the example agent lives in examples/, beside src/, as a user's agent would

from examples.travel.agent import FLAWS, broken, make_agent, scripted  # noqa: E402
from tracegrade.checks.builtin import run_checks  # noqa: E402
from tracegrade.agent.conversation import play  # noqa: E402
from tracegrade.case.dataset import load_dataset  # noqa: E402

DATASET = load_dataset(ROOT / "evals" / "travel" / "dataset.json")

# flaw -> case -> {check: first failure code}
EXPECTED: dict[str, dict[str, dict[str, str]]] = {
    "passengers_as_text": {
        "trv-search-02": {"toolSchema": "wrong_argument_type", "expectedCalls": "wrong_argument_type"},
        "trv-round-02": {"toolSchema": "wrong_argument_type", "expectedCalls": "wrong_argument_type"},
        "trv-book-02": {"toolSchema": "wrong_argument_type", "expectedCalls": "wrong_argument_type"},
    },
    # The tool refuses the call (status error): the case names the cause, the missing argument.
    "forgets_card": {
        "trv-book-01": {"toolSchema": "missing_argument", "expectedCalls": "missing_argument",
                        "answerText": "missing_text", "answerDecision": "wrong_decision",
                        "expectedState": "wrong_state_value"},
        "trv-book-05": {"toolSchema": "missing_argument", "expectedCalls": "missing_argument"},
        "trv-mt-01": {"toolSchema": "missing_argument", "expectedCalls": "missing_argument",
                      "answerText": "missing_text", "answerDecision": "wrong_decision",
                      "expectedState": "wrong_state_value"},
    },
    # The hotel search refuses the unknown argument, so no hotel is found or booked.
    "hotel_currency": {
        "trv-hotel-01": {"toolSchema": "unknown_argument", "expectedCalls": "unexpected_argument",
                         "answerText": "missing_text"},
        "trv-hotel-02": {"toolSchema": "unknown_argument", "expectedCalls": "unexpected_argument",
                         "answerText": "missing_text", "expectedState": "wrong_state_value"},
        "trv-hotel-03": {"toolSchema": "unknown_argument", "expectedCalls": "unexpected_argument",
                         "answerText": "missing_text", "expectedState": "wrong_state_value"},
        "trv-mt-03": {"toolSchema": "unknown_argument", "expectedCalls": "unexpected_argument"},
        "trv-mt-04": {"toolSchema": "unknown_argument", "expectedCalls": "unexpected_argument",
                      "answerText": "missing_text", "expectedState": "wrong_state_value"},
    },
    "acts_on_questions": {
        "trv-refund-02": {"unexpectedCalls": "unexpected_write", "expectedState": "wrong_state_value"},
        "trv-refund-03": {"unexpectedCalls": "unexpected_write", "expectedState": "wrong_state_value"},
        "trv-mt-03": {"unexpectedCalls": "unexpected_write", "expectedState": "wrong_state_value"},
    },
    "always_refundable": {
        "trv-refund-02": {"answerDecision": "wrong_decision"},
        "trv-mt-03": {"answerDecision": "wrong_decision"},
    },
    # The repeat meets the expected call again ("at least"), so it is no unexpected write;
    # it is a duplicate write, and the state holds two stays.
    "retries_hotel": {
        "trv-hotel-02": {"duplicateCalls": "duplicate_call", "expectedState": "wrong_state_value"},
        "trv-hotel-03": {"duplicateCalls": "duplicate_call", "expectedState": "wrong_state_value"},
        "trv-mt-04": {"duplicateCalls": "duplicate_call", "expectedState": "wrong_state_value"},
    },
    "writes_first": {"trv-change-01": {"callOrder": "order"}},
    "sequential_searches": {"trv-round-01": {"callOrder": "not_parallel"}, "trv-round-02": {"callOrder": "not_parallel"}},
    "per_person_total": {
        "trv-search-02": {"answerText": "missing_text"},
        "trv-round-02": {"answerText": "missing_text"},
        "trv-book-02": {"answerText": "missing_text"},
    },
    # "Business" is no cabin the tool knows: the search finds nothing.
    "capital_cabin": {
        "trv-search-02": {"toolSchema": "wrong_argument_value", "expectedCalls": "wrong_argument_value",
                          "answerText": "missing_text"},
        "trv-search-03": {"toolSchema": "wrong_argument_value", "expectedCalls": "wrong_argument_value",
                          "answerText": "missing_text"},
        "trv-search-04": {"toolSchema": "wrong_argument_value", "expectedCalls": "wrong_argument_value",
                          "answerText": "missing_text"},
        "trv-book-02": {"toolSchema": "wrong_argument_value", "expectedCalls": "wrong_argument_value",
                        "answerText": "missing_text", "answerDecision": "wrong_decision",
                        "expectedState": "wrong_state_value"},
    },
    # The wrong booking is expectedCalls' near miss: named there once, not again as an unexpected write.
    "first_result": {
        "trv-mt-01": {"expectedCalls": "wrong_argument_value",
                      "answerText": "missing_text", "expectedState": "wrong_state_value"},
    },
    # Without the lookup the agent tries another customer's booking: denied, but the
    # case counts attempts, and says nothing it can read as a decision.
    "skips_lookup": {
        "trv-cancel-01": {"expectedCalls": "missing_call"},
        "trv-cancel-02": {"expectedCalls": "missing_call"},
        # The forbidden cancel is forbiddenCalls' finding only, not an unexpected write as well.
        "trv-cancel-03": {"expectedCalls": "missing_call", "forbiddenCalls": "forbidden_call",
                          "answerDecision": "no_decision"},
        "trv-cancel-04": {"expectedCalls": "missing_call"},
    },
}


def failures(agent) -> dict[str, dict[str, str]]:
    """case -> {check: code} of the failing checks, running each case as tracegrade does."""
    async def ask(case):
        return agent(case)

    async def every():
        return [await play(ask, case) for case in DATASET.cases]

    replies = asyncio.run(every())
    found = {}
    for case, reply in zip(DATASET.cases, replies):
        failed = {r.name: r.code for r in run_checks(case, reply) if not r.passed}
        if failed:
            found[case.id] = failed
    return found


def test_the_dataset_has_30_cases_over_six_tools_or_more():
    assert len(DATASET.cases) == 30
    tools = DATASET.cases[0].tools
    assert len(tools) >= 6 and any(t.writes for t in tools) and any(not t.writes for t in tools)
    assert all(t.parameters is not None for t in tools)


def test_the_scripted_agent_passes_every_case():
    assert failures(scripted) == {}


def test_every_flaw_is_described_and_has_expected_failures():
    assert EXPECTED.keys() == FLAWS.keys()


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_each_flaw_fails_the_right_cases_for_the_named_reasons(flaw):
    assert failures(make_agent(frozenset({flaw}))) == EXPECTED[flaw]


def _union() -> dict[str, dict[str, set[str]]]:
    """Every failure some flaw causes, by case and check."""
    union: dict[str, dict[str, set[str]]] = {}
    for per_case in EXPECTED.values():
        for case_id, checks in per_case.items():
            for check, code in checks.items():
                union.setdefault(case_id, {}).setdefault(check, set()).add(code)
    return union


def test_the_broken_agent_fails_for_reasons_among_its_flaws():
    found, union = failures(broken), _union()
    assert found.keys() == union.keys()
    for case_id, checks in found.items():
        for check, code in checks.items():
            assert code in union[case_id].get(check, set()), (case_id, check, code)


def test_the_dataset_file_is_what_its_builder_writes():
    result = subprocess.run([sys.executable, "evals/travel/build_dataset.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True, env=_env())
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("target", ["scripted", "broken"])
def test_the_cli_runs_the_example(target, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tracegrade.cli", "run", str(ROOT / "evals" / "travel" / "dataset.json"),
         "--target", f"examples.travel.agent:{target}", "--checks-only", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, env=_env())
    failing = len(_union()) if target == "broken" else 0
    assert result.returncode == (1 if failing else 0), result.stdout[-2000:] + result.stderr[-2000:]
    assert f"passed {30 - failing}" in result.stdout and f"failed {failing}" in result.stdout


def _env() -> dict[str, str]:
    import os

    path = os.pathsep.join([str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}
