"""The pytest plugin, run by a real pytest (pytester): one item per case, failures
named, the run stored; the tracegrade_case fixture.

The first run is a pytest process of its own, started as a user's is; the others run
in this process (``runpytest_inprocess``: a new config and plugin manager, the plugin
found through its entry point as in a new process). WHY: a child pytest spent ~2.5 s
of CPU, most of it importing what this process has imported already (13 of them: 35 s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracegrade.store.runstore import open_store

pytestmark = pytest.mark.slow  # pytest runs inside pytest

pytest_plugins = ["pytester"]
TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS.parent / "evals" / "golden-dataset.json"


def test_each_case_is_an_item_and_a_wrong_call_fails_with_its_check(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    result = pytester.runpytest_subprocess("--tracegrade", str(GOLDEN), "--target", "support:one_wrong_argument",
                                           "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=11, failed=1)
    result.stdout.fnmatch_lines(["*case tool-status-01: FAIL*", "*check toolArgument: wrong_argument*ORD-102*"])
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        [info] = store.runs(limit=5)
        assert info.status == "finished"
        stored = store.load_run(info.run_id)
    assert len(stored.results) == 12
    assert [r.case_id for r in stored.results if not r.passed] == ["tool-status-01"]


def test_the_case_fixture_is_parametrised_over_the_dataset(pytester, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))  # support.py, for the test files written below
    pytester.makepyfile(test_mine="""
        from support import golden_reply, one_wrong_argument
        from tracegrade import assert_checks_pass

        def test_golden(tracegrade_case):
            assert_checks_pass(tracegrade_case, golden_reply(tracegrade_case))

        def test_broken(tracegrade_case, tracegrade_check):
            tracegrade_check(tracegrade_case, one_wrong_argument(tracegrade_case))
    """)
    result = pytester.runpytest_inprocess("--tracegrade", str(GOLDEN), "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=23, failed=1)
    result.stdout.fnmatch_lines(["*test_broken*tool-status-01*", "*check toolArgument: wrong_argument*"])


def test_the_fixture_without_a_dataset_is_a_usage_error(pytester):
    pytester.makepyfile(test_mine="def test_x(tracegrade_case):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*tracegrade_case fixture needs --tracegrade DATASET*"])


def test_an_async_case_test_runs_with_tracegrade_alone_and_reads_the_ini_options(pytester, monkeypatch):
    """The README's async form: no pytest-asyncio; the dataset from pytest's ini options."""
    monkeypatch.syspath_prepend(str(TESTS))  # support.py, for the test files written below
    pytester.makeini(f"[pytest]\ntracegrade_dataset = {GOLDEN}\n")
    pytester.makepyfile(test_mine="""
        import asyncio
        from tracegrade import assert_checks_pass
        from support import golden_reply, one_wrong_argument

        async def test_golden(tracegrade_case):
            await asyncio.sleep(0)
            assert_checks_pass(tracegrade_case, golden_reply(tracegrade_case))

        async def test_broken(tracegrade_case):
            await asyncio.sleep(0)
            assert_checks_pass(tracegrade_case, one_wrong_argument(tracegrade_case))
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-p", "no:asyncio")
    result.assert_outcomes(passed=12 + 11, failed=1)


def test_the_target_and_capture_come_from_the_ini_options(pytester, tmp_path, monkeypatch):
    """A target that returns only its answer string, named in the ini file."""
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    pytester.makepyfile(agent="""
        def answer(question: str) -> str:
            return "Sunny in " + question.rstrip("?").split()[-1]
    """)
    pytester.makefile(".json", cases='[{"id": "a", "question": "Weather in Oslo?", "answerMustInclude": ["Oslo"]},'
                                     ' {"id": "b", "question": "Weather in Rome?", "answerMustInclude": ["Paris"]}]')
    pytester.makeini("[pytest]\ntracegrade_dataset = cases.json\ntracegrade_target = agent:answer\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*case b: FAIL*"])


def test_the_user_model_flag_plays_a_simulated_user(pytester, tmp_path, monkeypatch):
    """--tracegrade-user-model reaches the run (found by a cold run: pytest had no such flag, so a
    dataset with `user` cases was played by the local model, and the error said `--user-model`)."""
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    monkeypatch.setenv("TRACEGRADE_USER_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: the model fails
    monkeypatch.setenv("TRACEGRADE_MODEL_RETRIES", "0")
    monkeypatch.delenv("TRACEGRADE_USER_MODEL", raising=False)
    pytester.makepyfile(agent="def answer(question: str) -> str:\n    return 'Which booking?'\n")
    pytester.makefile(".json", cases='[{"id": "a", "user": {"goal": "Cancel BK-1."}}]')
    result = pytester.runpytest_inprocess("--tracegrade", "cases.json", "--target", "agent:answer",
                                           "--tracegrade-user-model", "openai:customer-7", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*case a: UNSCORED*", "*the user model failed: ModelError: customer-7*"])


def test_a_failure_message_is_redacted_like_the_store(monkeypatch):
    # Issue 23: what is printed is redacted like what is written.
    from tracegrade.core.results import CaseResult, CheckResult
    from tracegrade.pytest_plugin import failure_message

    monkeypatch.setenv("PLUGIN_TEST_TOKEN", "plugin-Secret-44120v")
    result = CaseResult("c", "fail", checks=(CheckResult("toolArgument", False, "wrong_argument",
                                                          "got plugin-Secret-44120v for ann@example.com"),))
    assert failure_message(result) == ("case c: FAIL\n  check toolArgument: wrong_argument: "
                                       "got [REDACTED_KEY] for [REDACTED_EMAIL]")


# Issue 34: debugging one case must cost one case. A counting agent writes a line per call.
COUNTING_AGENT = """
    import os

    def answer(question: str) -> str:
        with open(os.environ["CALLS_FILE"], "a") as calls:
            calls.write(question + "\\n")
        return "Sunny in " + question.rstrip("?").split()[-1]
"""
CITIES = ("Oslo", "Rome", "Lima", "Kyiv")


def counting_project(pytester, tmp_path, monkeypatch):
    """evals/cities.json (a case per city, the last one failing) and an agent that counts its calls."""
    monkeypatch.setenv("TRACEGRADE_DB", f"sqlite:///{tmp_path / 'runs.db'}")
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("CALLS_FILE", str(calls))
    pytester.makepyfile(agent=COUNTING_AGENT)
    cases = [{"id": f"city-{c.lower()}", "question": f"Weather in {c}?",
              "answerMustInclude": ["Paris" if c == "Kyiv" else c]} for c in CITIES]
    pytester.mkdir("evals")
    (pytester.path / "evals" / "cities.json").write_text(__import__("json").dumps(cases))
    return calls


def asked(calls: Path) -> list[str]:
    return calls.read_text().splitlines() if calls.exists() else []


def test_k_runs_only_the_selected_case_through_the_agent(pytester, tmp_path, monkeypatch):
    calls = counting_project(pytester, tmp_path, monkeypatch)
    result = pytester.runpytest_inprocess("--tracegrade", "evals/cities.json", "--target", "agent:answer",
                                           "-k", "city-rome", "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1, deselected=3)
    assert asked(calls) == ["Weather in Rome?"]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        [info] = store.runs(limit=5)
        assert [r.case_id for r in store.load_run(info.run_id).results] == ["city-rome"]


def test_the_node_id_pytest_prints_can_be_passed_back(pytester, tmp_path, monkeypatch):
    calls = counting_project(pytester, tmp_path, monkeypatch)
    result = pytester.runpytest_inprocess("--tracegrade", "evals/cities.json", "--target", "agent:answer",
                                           "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED evals/cities.json::city-kyiv*"])
    calls.unlink()
    # the node id alone (the dataset from the argument), and beside --tracegrade
    for flags in ((), ("--tracegrade", "evals/cities.json")):
        again = pytester.runpytest_inprocess("evals/cities.json::city-kyiv", *flags, "--target", "agent:answer",
                                              "-p", "no:cacheprovider", "-q")
        again.assert_outcomes(failed=1)
        again.stdout.fnmatch_lines(["*case city-kyiv: FAIL*"])
    assert asked(calls) == ["Weather in Kyiv?", "Weather in Kyiv?"]


def test_deselect_and_last_failed_reach_the_agent_only_for_their_cases(pytester, tmp_path, monkeypatch):
    calls = counting_project(pytester, tmp_path, monkeypatch)
    flags = ("--tracegrade", "evals/cities.json", "--target", "agent:answer", "-q")
    pytester.runpytest_inprocess(*flags).assert_outcomes(passed=3, failed=1)
    assert len(asked(calls)) == 4
    calls.unlink()
    pytester.runpytest_inprocess(*flags, "--lf").assert_outcomes(passed=0, failed=1)
    assert asked(calls) == ["Weather in Kyiv?"]
    calls.unlink()
    deselected = pytester.runpytest_inprocess(*flags, "--deselect", "evals/cities.json::city-oslo",
                                               "--deselect", "evals/cities.json::city-kyiv")
    deselected.assert_outcomes(passed=2, deselected=2)
    assert sorted(asked(calls)) == ["Weather in Lima?", "Weather in Rome?"]


def test_a_dataset_inside_the_collected_folder_is_collected_once(pytester, tmp_path, monkeypatch):
    """pytest walking the folder finds the dataset file itself: its cases are not added twice."""
    calls = counting_project(pytester, tmp_path, monkeypatch)
    result = pytester.runpytest_inprocess(".", "--tracegrade", "evals/cities.json", "--target", "agent:answer",
                                           "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3, failed=1)
    assert len(asked(calls)) == 4


def test_a_failed_assert_checks_pass_points_at_the_users_test_not_tracegrade(pytester, monkeypatch):
    """Issue 34: the failure showed tracegrade's own frame; pytest now shows the test's line only."""
    monkeypatch.syspath_prepend(str(TESTS))  # support.py, for the test files written below
    pytester.makepyfile(test_mine="""
        from support import one_wrong_argument
        from tracegrade import assert_checks_pass
        from tracegrade.case.dataset import load_dataset

        def test_broken():
            case = next(c for c in load_dataset(%r).cases if c.id == "tool-status-01")
            assert_checks_pass(case, one_wrong_argument(case))
    """ % str(GOLDEN))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assert_checks_pass(case, one_wrong_argument(case))*",
                                 "*check toolArgument: wrong_argument*"])
    assert "pytest_plugin.py" not in result.stdout.str()


def test_a_target_that_cannot_load_fails_each_item_with_one_line_and_loads_once(pytester, tmp_path, monkeypatch):
    counting_project(pytester, tmp_path, monkeypatch)
    loads = tmp_path / "loads.txt"
    pytester.makepyfile(broken="""
        with open(%r, "a") as seen:
            seen.write("loaded\\n")
        raise RuntimeError("no API key in this environment")
    """ % str(loads))
    result = pytester.runpytest_inprocess("--tracegrade", "evals/cities.json", "--target", "broken:answer",
                                           "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["tracegrade: target 'broken:answer': loading broken raised RuntimeError: "
                                 "no API key in this environment (at broken.py:3;*"])
    assert "Traceback" not in result.stdout.str()
    assert loads.read_text().splitlines() == ["loaded"]
