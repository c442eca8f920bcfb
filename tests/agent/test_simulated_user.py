"""Conversations with a simulated user (agent/simulated.py, issue 36): a booking desk that
asks for the reference before it acts (examples/travel/desk.py), graded on the five
scenarios of evals/travel/simulated.json with a scripted customer, so every run is the
same; pass^k from known outcomes; a user that fails, breaks its role or never ends
leaves the trial unscored; bad scenarios are load errors naming the field.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Sequence

import pytest

from places import ROOT
sys.path.insert(0, str(ROOT))  # the example agent lives in examples/, beside src/, as a user's agent would

from examples.travel.desk import answer, desk  # noqa: E402
from tracegrade import evaluate  # noqa: E402
from tracegrade.core.errors import DatasetError, ModelError  # noqa: E402
from tracegrade.core.results import CaseResult  # noqa: E402
from tracegrade.core.trace import Reply, Usage  # noqa: E402
from tracegrade.agent import simulated  # noqa: E402
from tracegrade.case.schema import GoldenCase  # noqa: E402
from tracegrade.case.dataset import load_dataset  # noqa: E402
from tracegrade.models.base import ChatOptions, ChatResponse, Message  # noqa: E402
from tracegrade.models.scripted import ScriptedModel  # noqa: E402
from tracegrade.report import repeats  # noqa: E402
from tracegrade.run.runner import RunSettings  # noqa: E402

DATASET = ROOT / "evals" / "travel" / "simulated.json"


def customer(messages: Sequence[Message], options: ChatOptions) -> str:
    """A deterministic customer that plays any scenario of the dataset from its prompt:
    opens with its goal, gives what it knows when asked, answers the desk's yes/no
    question as the scenario says, and says done once the desk has answered."""
    scenario = messages[0].content
    knows = dict(re.findall(r"^- (\w+): (.+)$", scenario, re.M))
    last = messages[-1].content
    if len(messages) == 2:
        return "Hi, I want to cancel my booking."
    if "booking reference" in last:
        return f"It is {knows['bookingReference']}."
    if "Shall I cancel" in last:
        return knows["confirmCancel"].capitalize() + "."
    return "Thanks, that is all.\n[DONE]"


def run_of(tmp_path: Path, target, user_model, repeat: int = 1, cases=DATASET, name: str = "runs"):
    return evaluate(cases, target, judge=None, user_model=user_model, store=f"sqlite:///{tmp_path / (name + '.db')}",
                    out=tmp_path / name, settings=RunSettings(repeat=repeat, concurrency=1))


def by_case(results: Sequence[CaseResult]) -> dict[str, list[CaseResult]]:
    grouped: dict[str, list[CaseResult]] = {}
    for r in results:
        grouped.setdefault(r.case_id, []).append(r)
    return grouped


def test_the_desk_passes_every_scenario_and_the_conversation_is_in_the_trace(tmp_path):
    run = run_of(tmp_path, desk, ScriptedModel(customer))
    results = {r.case_id: r for r in run.results}
    assert {k: r.status for k, r in results.items()} == dict.fromkeys(results, "pass"), \
        {k: (r.error, r.failed_checks()) for k, r in results.items()}
    opened = results["cancel-asks-ref"].reply
    assert [(m.role, m.content) for m in opened.turns] == [
        ("user", "Hi, I want to cancel my booking."),
        ("assistant", "I can help with that. What is your booking reference? It looks like BK-1234."),
        ("user", "It is BK-2041."),
        ("assistant", opened.turns[3].content),
        ("user", "Yes, cancel it."),
        ("assistant", opened.turns[5].content),
        ("user", "Thanks, that is all.\n[DONE]"),
    ]
    assert "Shall I cancel BK-2041?" in opened.turns[3].content
    assert [(c.name, c.turn) for c in opened.tool_calls] == [("get_booking", 2), ("cancel_booking", 3)]
    assert opened.state == {"cancelled": ["BK-2041"]}
    ends = {k: next(c for c in r.checks if c.name == "conversationEnd").code for k, r in results.items()}
    assert ends == {"cancel-asks-ref": "done", "status-question": "done", "changes-mind": "done",
                    "wants-human": "handover", "cancel-with-ref": "done"}


def test_the_hasty_desk_fails_the_scenarios_where_it_acts_too_soon(tmp_path):
    from examples.travel.desk import hasty

    run = run_of(tmp_path, hasty, ScriptedModel(customer))
    statuses = {r.case_id: r.status for r in run.results}
    assert statuses == {"cancel-asks-ref": "fail", "status-question": "pass", "changes-mind": "fail",
                        "wants-human": "pass", "cancel-with-ref": "fail"}
    failed = {r.case_id: {c.name for c in r.failed_checks()} for r in run.results}
    assert "forbiddenCalls" in failed["changes-mind"] and "expectedState" in failed["changes-mind"]
    assert "expectedCalls" in failed["cancel-with-ref"]


def test_repeat_4_reports_pass_hat_k_from_known_outcomes(tmp_path):
    """cancel-with-ref meets the hasty desk on its 2nd and 4th trial: 2 passes of 4.
    pass^k of that case = C(2,k)/C(4,k): 1/2, 1/6, 0, 0; the other four always pass."""
    openings: Counter[str] = Counter()

    async def sometimes_hasty(case: GoldenCase) -> Reply:
        if not case.history:
            openings[case.id] += 1
        hasty = case.id == "cancel-with-ref" and openings[case.id] in (2, 4)
        return answer(case, hasty=hasty)

    run = run_of(tmp_path, sometimes_hasty, ScriptedModel(customer), repeat=4)
    statuses = {k: [r.status for r in rs] for k, rs in by_case(run.results).items()}
    assert statuses["cancel-with-ref"] == ["pass", "fail", "pass", "fail"]
    assert all(s == ["pass"] * 4 for k, s in statuses.items() if k != "cancel-with-ref")
    written = json.loads(next((tmp_path / "runs").rglob("results.json")).read_text())["manifest"]["totals"]["passHatK"]
    assert written["cases"]["cancel-with-ref"] == pytest.approx([1 / 2, 1 / 6, 0, 0])
    assert written["cases"]["wants-human"] == [1, 1, 1, 1]
    assert written["run"] == pytest.approx({"1": (4 + 1 / 2) / 5, "2": (4 + 1 / 6) / 5, "3": 4 / 5, "4": 4 / 5})
    block = repeats.render(run)
    assert "pass^1 0.90   pass^2 0.83   pass^3 0.80   pass^4 0.80" in block
    assert re.search(r"cancel-with-ref .* 0\.50 0\.17 0\.00 0\.00$", block, re.M)


def test_compare_and_history_carry_pass_hat_k_for_runs_of_repeats(tmp_path):
    from tracegrade.compare.comparison import compare_runs
    from tracegrade.report.history import latest_vs_previous

    openings: Counter[str] = Counter()

    async def hasty_every_other(case: GoldenCase) -> Reply:
        openings[case.id] += not case.history
        return answer(case, hasty=case.id == "cancel-with-ref" and openings[case.id] % 2 == 0)

    careful = run_of(tmp_path, desk, ScriptedModel(customer), repeat=2, name="careful")
    sloppy = run_of(tmp_path, hasty_every_other, ScriptedModel(customer), repeat=2, name="sloppy")
    rows = {row.name: (row.baseline, row.candidate) for row in compare_runs(careful, sloppy).metrics}
    assert rows["pass^1"] == pytest.approx((1.0, (4 + 1 / 2) / 5))
    assert rows["pass^2"] == pytest.approx((1.0, 4 / 5))
    assert re.search(r"pass\^2 +1\.00 +0\.80 ", latest_vs_previous(sloppy, careful))


def test_a_scripted_user_makes_the_run_the_same_every_time(tmp_path):
    turns = [[(r.case_id, [m.content for m in r.reply.turns]) for r in run_of(tmp_path, desk, ScriptedModel(customer),
                                                                             name=name).results]
             for name in ("one", "two")]
    assert turns[0] == turns[1]


def test_the_user_model_is_asked_at_temperature_0_with_a_seed_and_the_scenario(tmp_path):
    user = ScriptedModel(customer)
    run_of(tmp_path, desk, user, cases=load_dataset(DATASET).select(["cancel-asks-ref"]).cases)
    messages, options = user.calls[0]
    assert options.temperature == 0 and options.seed != 0
    assert "BK-2041" in messages[0].content and "[DONE]" in messages[0].content
    # the desk never sees the scenario: only the messages
    assert all(m.role in ("user", "assistant") for m in user.calls[-1][0][1:])


def one_case(**user) -> list[dict]:
    return [{"id": "c", "question": "Please cancel booking BK-2041.",
             "user": {"goal": "Cancel BK-2041.", "knows": {"bookingReference": "BK-2041", "confirmCancel": "yes"},
                      **user}}]


@pytest.mark.parametrize(("script", "reason"), [
    ([ModelError("the endpoint said 503 after 4 attempts")],
     "simulated user: the user model failed: ModelError: the endpoint said 503 after 4 attempts"),
    # the item is named, and redacted like every error text when it is a secret
    (["Yes. My card is 4111 1111 1111 1111."], "user turn 2 says '[REDACTED_CARD]' (mustNotSay)"),
    (["Agent: I have cancelled your booking BK-2041."],
     "user turn 2 answers for the agent (writes an 'Agent:' line); speaks as the agent ('I have cancelled your')"),
    (["Yes.", "   "], "user turn 3 is empty"),
    # the local 1.5B model did this with ShopNest: the agent's answer sent back as the customer's
    (lambda messages, options: messages[-1].content + "\n[DONE]",
     "user turn 2 repeats the agent's last answer word for word"),
])
def test_a_user_that_fails_or_leaves_its_role_leaves_the_case_unscored(tmp_path, script, reason):
    run = run_of(tmp_path, desk, ScriptedModel(script), cases=one_case(mustNotSay=["4111 1111 1111 1111"], maxTurns=3))
    [result] = run.results
    assert (result.status, result.checks) == ("unscored", ())
    assert reason in result.error
    if "failed" not in reason:  # the conversation is kept, with a turn that broke the role last
        assert result.reply.turns[0].content == "Please cancel booking BK-2041."
        assert result.reply.turns[-1].role == "user"
        assert len([m for m in result.reply.turns if m.role == "user"]) == (3 if "empty" in reason else 2)


def test_a_user_model_that_times_out_leaves_the_case_unscored(tmp_path, monkeypatch):
    async def slow(messages, options):
        await asyncio.sleep(5)
        return ChatResponse(text="late")

    monkeypatch.setattr(simulated, "USER_TIMEOUT_S", 0.05)
    [result] = run_of(tmp_path, desk, ScriptedModel(slow), cases=one_case()).results
    assert result.status == "unscored" and "the user model timed out after 0.05 s" in result.error


@pytest.mark.parametrize("script", [
    ["Which booking was it again?", ModelError("HTTP 500")],  # the user model fails at its second turn
    ["Which booking was it again?", ""],  # the user model writes nothing at its second turn
])
def test_an_unscored_trial_keeps_the_conversation_its_opening_and_the_agents_spend(tmp_path, script):
    # found by a newcomer's run on a 500ing user model: the agent's turns so far, the opening
    # message and the agent's tokens (its cost, its --budget) were dropped from unscored trials
    async def paid(case):
        return Reply(answer=f"Answer {len(case.history) // 2 + 1}: which reference?",
                     usage=Usage(input_tokens=100, output_tokens=10))

    case = {"id": "c", "user": {"goal": "Cancel BK-2041.", "maxTurns": 2}}
    [result] = run_of(tmp_path, paid, ScriptedModel(script), cases=[case]).results
    assert result.status == "unscored"
    assert result.question == "Which booking was it again?"
    assert [m.role for m in result.reply.turns][:2] == ["user", "assistant"]
    answered = len([m for m in result.reply.turns if m.role == "assistant"])
    assert answered == 1
    assert result.agent_tokens == (100 * answered, 10 * answered)


def test_a_user_model_still_silent_at_the_cases_timeout_leaves_it_unscored_not_an_agent_timeout(tmp_path):
    # found by a cold run with --timeout 5 and a hanging user model: "agent timed out", exit 1,
    # though the agent had not even been asked
    async def hangs(messages, options):
        await asyncio.sleep(30)
        return ChatResponse(text="late")

    async def slow_desk(case):
        await asyncio.sleep(30)
        return Reply(answer="late")

    case = {"id": "c", "user": {"goal": "Cancel BK-2041."}}
    settings = RunSettings(concurrency=1, timeout_s=0.2)
    [silent] = evaluate([case], desk, judge=None, user_model=ScriptedModel(hangs), store=f"sqlite:///{tmp_path / 'a.db'}",
                        out=tmp_path / "a", settings=settings).results
    assert silent.status == "unscored"
    assert silent.error == "simulated user: the user model had not answered when the case's 0.2 s (--timeout) ran out"
    [slow] = evaluate([case], slow_desk, judge=None, user_model=ScriptedModel(["Hi."]), store=f"sqlite:///{tmp_path / 'b.db'}",
                      out=tmp_path / "b", settings=settings).results
    assert (slow.status, slow.error) == ("error", "agent timed out after 0.2 s")  # the agent's own slowness stays its own


def test_a_target_that_takes_only_the_question_is_told_once_it_cannot_follow_the_conversation(tmp_path):
    # found by a cold run: `def answer(question: str)` saw no earlier turn, asked again for what the
    # user had said, and every trial ran out of turns as if the user were to blame, with no word why
    from tracegrade.agent.capture.target import QuestionOnlyWarning

    def forgetful(question: str) -> str:
        return "Which booking?"

    def follows(case) -> str:
        return "Which booking?" if not case.history else "Cancelled."

    cases = [{"id": f"c{n}", "question": "Cancel my booking.", "followUps": ["BK-1."]} for n in range(3)]
    with pytest.warns(QuestionOnlyWarning, match="'.*forgetful' takes the question only") as warned:
        run_of(tmp_path, forgetful, None, cases=cases)
    assert len([w for w in warned if w.category is QuestionOnlyWarning]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", QuestionOnlyWarning)
        run_of(tmp_path, follows, None, cases=cases, name="follows")


def test_an_unscored_trial_counts_as_not_passed_in_pass_hat_k_and_is_shown_beside_it(tmp_path):
    trials = iter(["Yes.", "Thanks.\n[DONE]", "Agent: done.", "Yes.", "Thanks.\n[DONE]"])
    run = run_of(tmp_path, desk, ScriptedModel(lambda m, o: next(trials)), cases=one_case(), repeat=3)
    assert [r.status for r in run.results] == ["pass", "unscored", "pass"]
    totals = json.loads(next((tmp_path / "runs").rglob("results.json")).read_text())["manifest"]["totals"]
    # 2 passes of 3 trials: C(2,k)/C(3,k), never 1 while a trial is unscored
    assert totals["passHatK"]["cases"]["c"] == pytest.approx([2 / 3, 1 / 3, 0])
    assert totals["passHatK"]["unscored"] == {"c": 1}
    block = repeats.render(run)
    assert "pass^1 0.67   pass^2 0.33   pass^3 0.00  (1 unscored trial counted as not passed)" in block
    assert re.search(r"^  c .* 0\.67 0\.33 0\.00  \(1 unscored\)$", block, re.M)


def test_a_user_who_opens_writes_the_first_message(tmp_path):
    case = {"id": "c", "user": {"goal": "Ask about BK-3307.", "knows": {"bookingReference": "BK-3307"}}}
    user = ScriptedModel(["When does BK-3307 leave?", "Thanks.\n[DONE]"])
    [result] = run_of(tmp_path, desk, user, cases=[case]).results
    assert result.status == "pass"
    assert result.question == "When does BK-3307 leave?"  # reports and the view show what the user opened with
    assert [m.content for m in result.reply.turns][:2] == [
        "When does BK-3307 leave?", "BK-3307 is flight LH456 from BER to FCO on 12 June 2026 (basic fare). Anything else?"]
    assert user.calls[0][0][-1].content.startswith("(The conversation starts.")


@pytest.mark.parametrize(("user", "message"), [
    ({"goal": "x", "mustnotsay": ["a"]}, "field 'user.mustnotsay': unknown key (did you mean 'mustNotSay'?)"),
    ({"goal": "x", "maxTurn": 3}, "field 'user.maxTurn': unknown key (did you mean 'maxTurns'?)"),
    ({"persona": "someone"}, "field 'user.goal': required, but missing"),
    ({"goal": "x", "maxTurns": 0}, "field 'user.maxTurns': Input should be greater than or equal to 1"),
    ({"goal": "x", "knows": ["BK-1"]}, "field 'user.knows': Input should be a valid dictionary"),
    ({"goal": "x", "mustNotSay": "secret"}, "field 'user.mustNotSay': Input should be a valid tuple"),
])
def test_a_bad_scenario_is_a_load_error_naming_the_field(tmp_path, user, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"id": "c", "question": "hi", "user": user}]))
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert f"{path}: case 'c': {message}" in str(raised.value)


@pytest.mark.parametrize(("case", "message"), [
    ({"id": "c"}, "field 'question': required, but missing"),
    ({"id": "c", "user": {"goal": "x"}, "followUps": ["and?"]},
     "field 'followUps': a case with a simulated `user` cannot also script `followUps`"),
])
def test_a_case_needs_a_question_or_a_user_and_not_both_a_user_and_a_script(tmp_path, case, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([case]))
    with pytest.raises(DatasetError, match=re.escape(message)):
        load_dataset(path)


def test_the_cli_plays_the_dataset_with_the_user_model_flag(tmp_path, monkeypatch, capsys):
    """--user-model reaches evaluate(user_model=...): a spec that cannot load leaves each case unscored."""
    from tracegrade.cli import main

    monkeypatch.chdir(ROOT)
    code = main(["run", str(DATASET), "--target", "examples.travel.desk:desk", "--checks-only", "--quiet",
                 "--only", "wants-human", "--only", "cancel-with-ref", "--user-model", "nonsense:x",
                 "--db", f"sqlite:///{tmp_path / 'r.db'}", "--out", str(tmp_path / "out")])
    results = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    assert results["manifest"]["settings"]["userModel"] == "nonsense:x"
    outcome = {r["case_id"]: (r["status"], r["error"]) for r in results["results"]}
    # wants-human ends at the desk's first answer (a handover): the user model is never asked
    assert outcome["wants-human"] == ("pass", "")
    assert outcome["cancel-with-ref"][0] == "unscored"
    assert "unknown model spec 'nonsense:x'" in outcome["cancel-with-ref"][1]
    assert code == 2  # no case failed, one was left unscored


def test_a_short_turn_like_the_agents_is_no_echo_but_its_whole_answer_is():
    from tracegrade.case.scenario import UserScenario, role_breaks

    user = UserScenario(goal="return shoes")
    answer = "I'm sorry, I cannot help with that order. Please try again later."
    assert role_breaks(user, "Yes.", last_answer="Yes.") == []
    assert role_breaks(user, "i'm sorry,  I cannot help with that order. Please try again later.\n[DONE]",
                       last_answer=answer) == ["repeats the agent's last answer word for word"]


@pytest.mark.parametrize(("turn", "broken"), [
    ("I have booked a flight with you and want to cancel it.", False),
    ("Can I talk to an agent: a real one?", False),
    ("My reference is BK-2041, please cancel it.", False),
    ("Assistant: Your booking is cancelled.", True),
    ("**Agent**: how can I help?", True),
    ("I've just refunded your ticket.", True),
    ("my card number is 4111  1111 1111 1111", True),
])
def test_what_counts_as_leaving_the_role(turn, broken):
    from tracegrade.case.scenario import UserScenario, role_breaks

    user = UserScenario(goal="cancel", must_not_say=("4111 1111 1111 1111",))
    assert bool(role_breaks(user, turn)) is broken


@pytest.mark.parametrize(("answer", "handover"), [
    ("I am transferring you to a human colleague now.", True),
    ("Let me connect you with a live agent.", True),
    ("I'll hand you over to our baggage specialist.", True),
    ("I cannot transfer money between bookings.", False),
    ("A person may travel with one bag.", False),
])
def test_what_counts_as_a_handover(answer, handover):
    from tracegrade.case.scenario import hands_over

    assert hands_over(answer) is handover


def test_the_case_page_shows_the_conversation_with_the_calls_under_each_answer(tmp_path):
    from tracegrade.view import case_page

    run = run_of(tmp_path, desk, ScriptedModel(customer), cases=load_dataset(DATASET).select(["cancel-asks-ref"]).cases)
    page = case_page.render(run.manifest.run_id, run.results[0], ())
    rows = re.findall(r"<tr><td>(user|assistant)</td><td><pre>.*?</pre></td><td>(.*?)</td></tr>",
                      page[page.index("<h3>Conversation</h3>"):], re.S)
    assert rows == [("user", ""), ("assistant", ""), ("user", ""), ("assistant", "get_booking"),
                    ("user", ""), ("assistant", "cancel_booking"), ("user", "")]


def test_grade_of_a_recorded_conversation_asks_no_user_model(tmp_path, monkeypatch):
    """A recorded Reply is the whole conversation: `tracegrade grade` checks it as it is,
    never plays it again (an unknown --user-model would leave the case unscored if it did)."""
    from tracegrade.cli import main

    [played] = run_of(tmp_path, desk, ScriptedModel(customer),
                      cases=load_dataset(DATASET).select(["cancel-asks-ref"]).cases).results
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"caseId": "cancel-asks-ref", **played.reply.to_wire()}) + "\n")
    monkeypatch.setenv("TRACEGRADE_USER_MODEL", "nonsense:x")
    code = main(["grade", str(traces), "--dataset", str(DATASET), "--checks-only", "--quiet",
                 "--db", f"sqlite:///{tmp_path / 'g.db'}", "--out", str(tmp_path / "graded")])
    [graded] = json.loads(next((tmp_path / "graded").rglob("results.json")).read_text())["results"]
    assert (code, graded["status"], graded["error"]) == (0, "pass", "")
    assert [m["content"] for m in graded["reply"]["turns"]] == [m.content for m in played.reply.turns]


# Replay (--replay-users RUN, agent/replay.py): the stored user turns are sent again while the
# agent's replies match; the first reply that differs is marked and the live user goes on.

def refusing(messages: Sequence[Message], options: ChatOptions) -> str:
    raise ModelError("the live user model was asked")


def stored_run(tmp_path: Path, case_id: str = "cancel-asks-ref"):
    return run_of(tmp_path, desk, ScriptedModel(customer), cases=load_dataset(DATASET).select([case_id]).cases,
                  name="stored")


def replayed(tmp_path: Path, target, user_model, stored, name: str = "replayed", case_id: str = "cancel-asks-ref"):
    return evaluate(load_dataset(DATASET).select([case_id]).cases, target, judge=None, user_model=user_model,
                    store=f"sqlite:///{tmp_path / 'stored.db'}", out=tmp_path / name,
                    settings=RunSettings(concurrency=1), replay_users=stored.manifest.run_id)


def test_a_replay_against_the_same_agent_sends_the_stored_turns_and_never_asks_the_user_model(tmp_path):
    stored = stored_run(tmp_path)
    user = ScriptedModel(refusing)
    [result] = replayed(tmp_path, desk, user, stored).results
    assert user.calls == []
    assert [m.content for m in result.reply.turns] == [m.content for m in stored.results[0].reply.turns]
    assert result.status == "pass" and result.user_tokens == (0, 0)
    assert (result.replay.diverged_at, result.replay.user_turns, result.replay.note) == (None, 4, "")
    assert result.replay.describe() == f"the same to the end: user turns 1-4 as stored in {stored.manifest.run_id}"


def test_an_agent_that_changes_at_turn_2_is_marked_there_and_the_live_user_goes_on(tmp_path):
    stored = stored_run(tmp_path)

    async def reworded(case: GoldenCase) -> Reply:  # the same calls; other words in its second answer
        reply = answer(case)
        if len(case.history) == 2:
            return reply.model_copy(update={"answer": "Good news: " + reply.answer})
        return reply

    user = ScriptedModel(customer)
    run = replayed(tmp_path, reworded, user, stored)
    [result] = run.results
    mark = result.replay
    assert (mark.diverged_at, mark.user_turns) == (2, 2)
    # the calls were the same; the answers are shown from where they part
    assert mark.differs.startswith("answer: stored 'BK-2041 is flight TP123"), mark.differs
    assert "now 'Good news: BK-2041 is flight" in mark.differs
    said = [m.content for m in result.reply.turns if m.role == "user"]
    # turns 1-2 as stored; from the divergence on, the live (scripted) user wrote the rest
    assert said[:2] == [m.content for m in stored.results[0].reply.turns if m.role == "user"][:2]
    assert said[2:] == ["Yes, cancel it.", "Thanks, that is all.\n[DONE]"] and len(user.calls) == 2
    assert result.status == "pass"
    assert result.user_tokens == (20, 10)
    written = json.loads(next((tmp_path / "replayed").rglob("results.json")).read_text())
    assert written["manifest"]["settings"]["replayUsers"] == stored.manifest.run_id
    assert written["results"][0]["replay"]["diverged_at"] == 2
    from tracegrade.report import console, replay

    assert "  replay     diverged at agent turn 2: answer: stored" in console.case_block(result)
    assert re.search(r"REPLAY of run \S+: 0 the same to the end, 1 diverged, 0 played live or ran out\n"
                     r"  cancel-asks-ref #0  diverged at agent turn 2", replay.render(run))


def test_a_call_that_differs_is_a_divergence_even_when_the_words_are_the_same(tmp_path):
    stored = stored_run(tmp_path)

    async def other_booking(case: GoldenCase) -> Reply:
        reply = answer(case)
        calls = tuple(c.model_copy(update={"arguments": {"bookingId": "BK-9999"}}) if c.name == "get_booking" else c
                      for c in reply.tool_calls)
        return reply.model_copy(update={"tool_calls": calls})

    [result] = replayed(tmp_path, other_booking, ScriptedModel(customer), stored).results
    assert result.replay.diverged_at == 2
    assert result.replay.differs == ("calls: stored get_booking(bookingId='BK-2041'), "
                                     "now get_booking(bookingId='BK-9999')")


def test_a_changed_case_or_one_the_run_did_not_play_is_played_live_with_the_reason(tmp_path):
    stored = stored_run(tmp_path)
    [other] = replayed(tmp_path, desk, ScriptedModel(customer), stored, case_id="status-question").results
    assert other.replay.note == f"run {stored.manifest.run_id} has no conversation of this case: played live"
    changed = load_dataset(DATASET).select(["cancel-asks-ref"]).cases[0]
    changed = changed.model_copy(update={"category": "edited"})
    [result] = evaluate([changed], desk, judge=None, user_model=ScriptedModel(customer),
                        store=f"sqlite:///{tmp_path / 'stored.db'}", replay_users=stored.manifest.run_id).results
    assert result.replay.note == f"the case changed since run {stored.manifest.run_id}: played live"
    assert result.status == "pass" and result.user_tokens == (40, 20)  # four turns, all live


def test_the_budget_counts_the_user_models_tokens(tmp_path):
    """Each scripted user turn reports 10 tokens in and 5 out; at $1 a token, $15 a turn."""
    from tracegrade.stats.pricing import Price, PriceTable
    from tracegrade.report import costs

    prices = PriceTable({"scripted": Price(1e6, 1e6)})
    run = evaluate(DATASET, desk, judge=None, user_model=ScriptedModel(customer), budget_usd=40,
                   store=f"sqlite:///{tmp_path / 'b.db'}",
                   settings=RunSettings(concurrency=1, prices=prices))
    # the first case's user wrote its third turn at $45: past the budget inside the conversation, so the
    # trial stopped there (unscored, its spend kept) and no other case ran
    assert run.status == "stopped" and [r.case_id for r in run.results] == ["cancel-asks-ref"]
    [result] = run.results
    assert (result.status, result.user_tokens, result.user_cost_usd, result.agent_cost_usd) == (
        "unscored", (30, 15), 45.0, 0.0)
    assert result.error == ("budget: the run's --budget of $40.0000 was reached during the conversation "
                            "($45.0000 spent, $45.0000 of it by this trial), at user turn 3")
    block = costs.render(run)
    assert "user 30 in / 15 out" in block and "user $45.0000" in block and "total $45.0000" in block


def test_the_cli_replays_the_latest_run_and_prints_where_it_diverged(tmp_path, monkeypatch, capsys):
    from tracegrade.cli import main

    monkeypatch.chdir(ROOT)
    flags = ["--checks-only", "--quiet", "--only", "cancel-asks-ref", "--db", f"sqlite:///{tmp_path / 'r.db'}",
             "--out", str(tmp_path / "out")]
    monkeypatch.setattr("tracegrade.agent.user_model.UserModel.complete",
                        lambda self, messages, options=None: ScriptedModel(customer).complete(messages, options))
    assert main(["run", str(DATASET), "--target", "examples.travel.desk:desk", *flags]) == 0
    first = capsys.readouterr()
    assert main(["run", str(DATASET), "--target", "examples.travel.desk:hasty", "--replay-users", "latest",
                 *flags]) == 1
    out = capsys.readouterr().out
    assert re.search(r"REPLAY of run \S+: 0 the same to the end, 1 diverged", out), first
    assert ("cancel-asks-ref #0  diverged at agent turn 2: calls: stored get_booking(bookingId='BK-2041'), "
            "now cancel_booking(bookingId='BK-2041'); answer: stored 'BK-2041 is flight") in out, out


def test_the_case_page_shows_the_replay_and_the_answer_where_it_diverged(tmp_path):
    from tracegrade.view import case_page

    stored = stored_run(tmp_path)
    [result] = replayed(tmp_path, examples_hasty(), ScriptedModel(customer), stored).results
    page = case_page.render(result.replay.run_id, result, ())
    assert "diverged at agent turn 2: calls: stored get_booking(bookingId=&#x27;BK-2041&#x27;)" in page
    rows = re.findall(r"<tr><td>assistant</td><td><pre>.*?</pre></td><td>(.*?)</td></tr>", page, re.S)
    assert rows[1] == "cancel_booking (diverged from the stored reply here)"
    assert "simulated user tokens 10 / 5" in page  # the live user's one turn after the divergence


def examples_hasty():
    from examples.travel.desk import hasty

    return hasty


SHOPNEST = ROOT / "evals" / "shopnest-simulated.json"


def shopnest_rules(messages: Sequence[Message], options: ChatOptions) -> ChatResponse:
    """ShopNest's model, scripted to its system prompt's rules: an order id in the customer's
    message -> getOrderStatus with it; none -> ask for it; a tool result -> answer from it."""
    from tracegrade.models.base import ModelToolCall

    if messages[-1].role == "tool":
        return ChatResponse(text=messages[-1].content + " Returns are accepted within 30 days of delivery.")
    ids = re.findall(r"ORD-\d+", next(m.content for m in reversed(messages) if m.role == "user"))
    if ids:
        return ChatResponse(tool_calls=(ModelToolCall("getOrderStatus", {"orderId": ids[-1]}, id="call-1"),))
    return ChatResponse(text="I can help with that. What is your order id?")


def shopnest_customer(messages: Sequence[Message], options: ChatOptions) -> str:
    """Plays both ShopNest scenarios from the prompt: the id only when asked; the grinder, then the shoes."""
    knows = dict(re.findall(r"^- (\w+): (.+)$", messages[0].content, re.M))
    last = messages[-1].content
    if "coffeeGrinderOrder" in knows:
        if len(messages) == 2:
            return f"Can I return my coffee grinder, order {knows['coffeeGrinderOrder']}?"
        if knows["coffeeGrinderOrder"] in last:
            return f"Sorry, I meant my running shoes, order {knows['runningShoesOrder']}. Can I return those instead?"
        return "Thanks, that is all.\n[DONE]"
    if len(messages) == 2:
        return "Can I still return my running shoes?"
    return f"It is {knows['orderId']}." if "order id" in last else "Thanks, that is all.\n[DONE]"


def test_shopnests_simulated_customers_are_graded_on_the_whole_conversation(tmp_path):
    """evals/shopnest-simulated.json against the real ShopNest agent code on a model scripted to its rules."""
    from conftest import hashing_embedder
    from shopnest.agent import ShopNestAgent
    from shopnest.knowledge import KnowledgeBase, load_policies
    from shopnest.target import agent_target

    agent = ShopNestAgent(ScriptedModel(shopnest_rules), KnowledgeBase(load_policies(), hashing_embedder))
    run = run_of(tmp_path, agent_target(agent), ScriptedModel(shopnest_customer), cases=SHOPNEST)
    results = {r.case_id: r for r in run.results}
    assert {k: r.status for k, r in results.items()} == {"return-id-when-asked": "pass", "return-changes-item": "pass"}, \
        {k: (r.error, r.failed_checks()) for k, r in results.items()}
    asked = results["return-id-when-asked"].reply
    assert [(c.name, c.arguments, c.turn) for c in asked.tool_calls] == [("getOrderStatus", {"orderId": "ORD-102"}, 2)]
    changed = results["return-changes-item"].reply
    assert [(c.arguments["orderId"], c.turn) for c in changed.tool_calls] == [("ORD-103", 1), ("ORD-102", 2)]
