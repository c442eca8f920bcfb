"""The flaky policy: a failed case is re-run and counts as failed only when it fails k of n."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from runs_support import GOLDEN_PATH, good_reply
from tracegrade.case.dataset import load_dataset
from tracegrade.core.errors import ConfigError
from tracegrade.run.flaky import FlakyPolicy, parse_policy
from tracegrade.run.runner import RunSettings, run_cases
from tracegrade.core.trace import Reply

CASES = load_dataset(GOLDEN_PATH).select(["rag-return-01", "tool-status-01", "tool-refund-01", "out-of-scope-01"]).cases
# Per case, whether each successive attempt answers right.
PLAN = {
    "rag-return-01": [False, True, True],    # fail, pass, pass -> pass, flaky
    "tool-status-01": [False, False, True],  # fail, fail -> fail after 2 attempts
    "tool-refund-01": [False, True, False],  # fail, pass, fail -> fail, flaky
    "out-of-scope-01": [True, False, False], # pass first time -> never re-run
}


def planned_target():
    calls: Counter = Counter()

    async def ask(case):
        attempt = calls[case.id]
        calls[case.id] += 1
        return good_reply(case) if PLAN[case.id][attempt] else Reply(answer="")  # empty answer fails
    return ask, calls


def test_failed_cases_are_rerun_until_k_of_n_decides():
    target, calls = planned_target()
    settings = RunSettings(checks_only=True, flaky=FlakyPolicy(2, 3))
    results = {r.case_id: r for r in asyncio.run(run_cases(CASES, target, None, settings))}
    assert calls == {"rag-return-01": 3, "tool-status-01": 2, "tool-refund-01": 3, "out-of-scope-01": 1}
    assert {i: r.status for i, r in results.items()} == {
        "rag-return-01": "pass", "tool-status-01": "fail", "tool-refund-01": "fail", "out-of-scope-01": "pass"}
    assert results["rag-return-01"].attempts == ("fail", "pass", "pass") and results["rag-return-01"].flaky
    assert results["tool-refund-01"].flaky and not results["tool-status-01"].flaky
    assert results["out-of-scope-01"].attempts == ()
    # A kept result carries the tokens of all its attempts.
    assert results["rag-return-01"].agent_tokens == (2000, 200)


def test_without_a_policy_nothing_is_rerun():
    target, calls = planned_target()
    results = asyncio.run(run_cases(CASES, target, None, RunSettings(checks_only=True)))
    assert set(calls.values()) == {1} and [r.status for r in results].count("fail") == 3


@pytest.mark.parametrize("statuses, decision", [
    (["fail"], None), (["fail", "fail"], "fail"), (["fail", "pass"], None), (["fail", "pass", "pass"], "pass"),
    (["error", "pass", "error"], "fail"), (["fail", "unscored", "pass"], "pass"),
])
def test_decide(statuses, decision):
    assert FlakyPolicy(2, 3).decide(statuses) == decision


def test_one_of_one_never_reruns_and_three_of_five_is_configurable():
    assert FlakyPolicy(1, 1).decide(["fail"]) == "fail"
    assert parse_policy("3/5").decide(["fail", "fail", "pass", "pass"]) is None
    assert parse_policy("3/5").decide(["fail", "fail", "pass", "pass", "fail"]) == "fail"
    for bad in ("3", "4/3", "0/2", "a/b"):
        with pytest.raises(ConfigError):
            parse_policy(bad)
