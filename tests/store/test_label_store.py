"""Labels given in the view, in the run store (store/labelrows.py) and exported as the labels
file `tracegrade calibrate` reads (judge/stored_labels.py): on SQLite and a real Postgres,
across reopening, and read by `calibrate --from-store` and `tracegrade labels`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from runs_support import run
from test_store import postgres_server, store_url  # noqa: F401  (the SQLite / Postgres store fixtures)
from tracegrade.cli import build_parser, main
from tracegrade.cli.calibrate import run_calibration
from tracegrade.core.errors import ConfigError, DatasetError
from tracegrade.core.results import CaseResult, MetricScore
from tracegrade.core.trace import Reply, ToolCall
from tracegrade.judge.labels import load_labels
from tracegrade.judge.scoring import Judge
from tracegrade.judge.stored_labels import label_file, labelled_items, runs_labelled
from tracegrade.models.scripted import ScriptedModel
from tracegrade.store.labelrows import AnswerLabel
from tracegrade.store.runstore import open_store
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS
from view_support import record

CALL = ToolCall(name="getOrderStatus", arguments={"orderId": "ORD-1"}, argument="ORD-1",
                result="Order ORD-1 is SHIPPED.")


def answered(case_id: str, answer: str, repeat: int = 0) -> CaseResult:
    reply = Reply(answer=answer, context=f"SOURCE: policy.md\nabout {case_id}", tool_calls=(CALL,))
    metrics = tuple(MetricScore(m, 3.0, 4.0, "scale", low=1.0, high=5.0) for m in SEED_METRICS)
    return CaseResult(case_id, "pass", question=f"question {case_id}?", reply=reply, metrics=metrics, repeat=repeat)


def stored(url: str):
    """A store with run r1 of three answers (c has a second repetition)."""
    store = open_store(url)
    record(store, run([answered("a", "answer a"), answered("b", "answer b"), answered("c", "answer c"),
                       answered("c", "answer c again", repeat=1)], run_id="r1"))
    return store


def label(case_id: str, metric: str, verdict: str, who: str = "ann", note: str = "", repeat: int = 0) -> AnswerLabel:
    return AnswerLabel("r1", case_id, repeat, metric, who, verdict, note, golden_answer=f"reference {case_id}")


def test_labels_survive_reopening_and_a_newer_label_replaces_the_persons_older_one(store_url):  # noqa: F811
    with stored(store_url) as store:
        store.save_label(label("a", "correctness", "good", note="first"))
        store.save_label(label("a", "correctness", "bad", note="second thoughts"))  # the same person: replaced
        store.save_label(label("a", "correctness", "good", who="bob"))  # another person: kept beside it
        store.save_label(label("c", "relevance", "skip", repeat=1))
    with open_store(store_url) as store:  # a restart: a new connection to the same database
        kept = {(g.case_id, g.repeat, g.metric, g.annotator): (g.verdict, g.note) for g in store.labels(["r1"])}
        assert store.labels(["another-run"]) == []
    assert kept == {("a", 0, "correctness", "ann"): ("bad", "second thoughts"),
                    ("a", 0, "correctness", "bob"): ("good", ""), ("c", 1, "relevance", "ann"): ("skip", "")}


def test_a_label_must_be_good_bad_or_skip_and_name_its_person():
    with pytest.raises(ValueError, match="good, bad, skip"):
        label("a", "correctness", "fine")
    with pytest.raises(ValueError, match="annotator"):
        label("a", "correctness", "good", who=" ")


def test_a_note_is_redacted_before_it_is_stored(tmp_path):
    with stored(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_label(label("a", "correctness", "bad", note="the customer ann.lee@example.com was told wrong"))
        [given] = store.labels()
    assert "ann.lee@example.com" not in given.note and "was told wrong" in given.note


def test_the_export_is_the_labels_file_calibrate_reads_built_from_the_stored_answers(tmp_path):
    with stored(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_label(label("a", "correctness", "good", note="right"))
        store.save_label(label("a", "faithfulness", "bad", note="the date is not in the policy"))
        store.save_label(label("a", "correctness", "bad", who="bob"))
        store.save_label(label("c", "relevance", "good", repeat=1))
        store.save_label(label("b", "relevance", "skip"))  # skipped: not an item
        data = label_file(store, runs_labelled(store, "r1"), reference="ann")
        items, version = labelled_items(store, None, reference="ann")
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(data))
    loaded, _ = load_labels(path)
    assert loaded == items and len(version) == 12
    by_id = {item.id: item for item in loaded}
    assert sorted(by_id) == ["r1:a", "r1:c#2"]
    a = by_id["r1:a"]
    assert (a.case_id, a.question, a.answer, a.golden_answer) == ("a", "question a?", "answer a", "reference a")
    assert a.evidence.context == "SOURCE: policy.md\nabout a" and a.evidence.tool_calls == (CALL,)
    assert [g.annotator for g in a.labels] == ["ann", "bob"]
    assert a.labels[0].scores == {"correctness": "good", "faithfulness": "bad"}
    assert a.labels[0].rationale == "correctness: right; faithfulness: the date is not in the policy"
    assert a.labels[1].verdict("correctness") == "bad" and by_id["r1:c#2"].answer == "answer c again"


def test_an_export_with_nothing_labelled_says_where_to_label(tmp_path):
    with stored(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.save_label(label("b", "relevance", "skip"))
        with pytest.raises(DatasetError, match="label answers in `tracegrade view`"):
            label_file(store, ["r1"])


def _judge_saying(value: int) -> Judge:
    def reply(messages, options):
        return json.dumps({**{m: value for m in SEED_METRICS}, "reason": "scripted"})

    return Judge(ScriptedModel(reply, "scripted-judge"), SCALE_RUBRIC)


def test_calibrate_from_the_store_judges_exactly_the_labelled_answers(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with stored(url) as store:
        for case_id, verdict in (("a", "good"), ("b", "bad"), ("c", "good")):
            store.save_label(label(case_id, "correctness", verdict))
    out = tmp_path / "cal.json"
    args = build_parser().parse_args(["calibrate", "--from-store", "r1", "--db", url, "--no-breaks",
                                      "--min-labels", "1", "--json", str(out)])
    run_calibration(args, _judge_saying(4))
    err = capsys.readouterr().err
    assert "3 answers labelled in tracegrade view" in err and "not stored" in err  # not the shipped pair
    result = json.loads(out.read_text())
    [correctness] = [m for m in result["metrics"] if m["metric"] == "correctness"]
    assert (correctness["good"], correctness["bad"]) == (2, 1)
    assert [m for m in result["metrics"] if m["metric"] == "relevance"][0]["good"] == 0
    with pytest.raises(Exception, match="give one"):
        run_calibration(build_parser().parse_args(["calibrate", "--from-store", "--labels", str(out), "--db", url]),
                        _judge_saying(4))


def test_tracegrade_labels_writes_the_file_calibrate_reads(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with stored(url) as store:
        store.save_label(label("b", "helpfulness", "bad", note="vague"))
    assert main(["labels", "r1", "--db", url, "--out", str(tmp_path / "out" / "labels.json")]) == 0
    [item], _ = load_labels(tmp_path / "out" / "labels.json")
    assert item.id == "r1:b" and item.verdict("helpfulness") == "bad"
    assert main(["labels", "no-such-thing", "--db", url]) == 2
    assert "names no run and no dataset" in capsys.readouterr().err


def test_a_dataset_named_as_the_file_declares_it_is_told_the_name_the_store_knows(tmp_path, capsys):
    # found by a cold run: reports show the file's declared name, the store knows the file's base name
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    recorded = run([answered("a", "answer a")], run_id="r1")
    with open_store(url) as store:
        record(store, replace(recorded, manifest=replace(recorded.manifest, settings={"datasetName": "shop-support"})))
        store.save_label(label("a", "correctness", "good"))
    assert main(["labels", "shop-support", "--db", url]) == 2
    assert "a dataset is named by its file's base name, here 'golden.json'" in capsys.readouterr().err
    assert main(["labels", "golden.json", "--db", url, "--out", str(tmp_path / "labels.json")]) == 0
    assert main(["labels", "nothing-like-it", "--db", url]) == 2
    assert "(its datasets, by file base name: 'golden.json')" in capsys.readouterr().err


@pytest.mark.live
def test_the_real_calibrate_command_reads_the_stored_labels_with_the_local_judge(tmp_path, capsys):
    """`tracegrade calibrate --from-store` as a person runs it: the shipped local judge (slow: opt in, -m live)."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with stored(url) as store:
        store.save_label(label("a", "correctness", "good"))
        store.save_label(label("b", "correctness", "bad"))
    out = tmp_path / "cal.json"
    main(["calibrate", "--from-store", "r1", "--db", url, "--no-breaks", "--min-labels", "1", "--json", str(out)])
    assert "2 answers labelled in tracegrade view" in capsys.readouterr().err
    [correctness] = [m for m in json.loads(out.read_text())["metrics"] if m["metric"] == "correctness"]
    assert (correctness["good"], correctness["bad"]) == (1, 1)


def test_a_name_stored_with_control_characters_is_read_back_as_escapes(tmp_path, capsys):
    """A name stored before names were checked: read, exported and printed, never as raw control characters."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with stored(url) as store:
        store.save_label(label("a", "correctness", "good"))
        store._do(lambda run: run("UPDATE answer_labels SET annotator = ?", ("ann\x1b]0;pwned\x07",)))
        [given] = store.labels()
    assert given.annotator == "ann\\x1b]0;pwned\\x07"
    assert main(["labels", "r1", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "ann\\\\x1b]0;pwned\\\\x07" in out  # JSON escapes the backslash


def test_the_reference_annotator_is_the_one_named_never_the_first_name_in_order(tmp_path, capsys):
    """Issue 47: the name that sorted first became the reference annotator, so any labeller chose it."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with stored(url) as store:
        store.save_label(label("a", "correctness", "good"))
        store.save_label(label("a", "correctness", "bad", who="0aaa"))  # sorts first
        store.save_label(label("b", "correctness", "bad", who="0aaa"))  # only 0aaa labelled b
        store.save_label(label("c", "correctness", "good", who="bob"))
        store.save_label(label("c", "correctness", "bad", who="0aaa"))  # c: neither is ann
    out = tmp_path / "cal.json"
    flags = ["calibrate", "--from-store", "r1", "--db", url, "--no-breaks", "--min-labels", "1", "--json", str(out)]
    with pytest.raises(ConfigError, match=r"2 answer\(s\) were labelled by more than one person.*--reference NAME.*"
                                          r"0aaa \(3 answers\), ann \(1 answers\), bob \(1 answers\)"):
        run_calibration(build_parser().parse_args(flags), _judge_saying(4))
    run_calibration(build_parser().parse_args([*flags, "--reference", "ann"]), _judge_saying(4))
    assert "c left out" not in capsys.readouterr().err
    [correctness] = [m for m in json.loads(out.read_text())["metrics"] if m["metric"] == "correctness"]
    assert (correctness["good"], correctness["bad"]) == (1, 1)  # a: ann's good; b: 0aaa's, its one label; c: out
    with pytest.raises(ConfigError, match="no label by 'carol'"):
        run_calibration(build_parser().parse_args([*flags, "--reference", "carol"]), _judge_saying(4))
    assert main(["labels", "r1", "--db", url]) == 2
    assert "--reference NAME" in capsys.readouterr().err
    assert main(["labels", "r1", "--db", url, "--reference", "0aaa"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert [[g["annotator"] for g in item["labels"]] for item in exported["items"]] == \
        [["0aaa", "ann"], ["0aaa"], ["0aaa", "bob"]]


def test_a_labels_file_with_a_control_character_in_a_name_is_refused_by_calibrate(tmp_path):
    items = [{"id": "i1", "caseId": "c", "question": "q?", "evidence": {}, "answer": "a",
              "labels": [{"annotator": "ann\x1b]0;pwned\x07", "scores": {"correctness": "good"}, "rationale": "r"}]}]
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"items": items}))
    args = build_parser().parse_args(["calibrate", "--labels", str(path), "--no-breaks", "--db",
                                      f"sqlite:///{tmp_path / 'runs.db'}"])
    with pytest.raises(DatasetError, match=r"item 'i1': annotator 'ann\\x1b\]0;pwned\\x07' holds a control"):
        run_calibration(args, _judge_saying(4))
    items[0]["id"], items[0]["labels"][0]["annotator"] = "i1\x1b[2J", "ann"
    path.write_text(json.dumps({"items": items}))
    with pytest.raises(DatasetError, match=r"item 'i1\\x1b\[2J': its id holds a control"):
        run_calibration(args, _judge_saying(4))


def test_calibrate_from_the_store_uses_the_judge_the_runs_were_scored_with(tmp_path, monkeypatch, capsys):
    """Issue 47: `calibrate --from-store RUN` judged with `local` (and stopped without its extra),
    whatever judge scored the run."""
    from judge_rubrics import SCALE_RUBRIC_TEXT
    from tracegrade.testing.fault_server import FaultServer

    rubric = tmp_path / "rubric.md"
    rubric.write_text(SCALE_RUBRIC_TEXT)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    recorded = run([answered("a", "answer a"), answered("b", "answer b")], run_id="r1")
    settings = {"judgeModel": "openai:fake-judge", "rubric": str(rubric)}
    with open_store(url) as store:
        record(store, replace(recorded, manifest=replace(recorded.manifest, judge_model="fake-judge",
                                                         settings=settings)))
        store.save_label(label("a", "correctness", "good"))
        store.save_label(label("b", "correctness", "bad"))
    monkeypatch.delenv("TRACEGRADE_JUDGE_MODEL", raising=False)
    with FaultServer() as server:
        monkeypatch.setenv("TRACEGRADE_JUDGE_BASE_URL", server.base_url)
        code = main(["calibrate", "--from-store", "r1", "--db", url, "--no-breaks", "--min-labels", "1"])
    err = capsys.readouterr().err
    assert code in (0, 1) and "calibrating judge fake-judge" in err and "openai:fake-judge" in err
    assert f"(rubric {_judge_saying(4).rubric_hash})" in err  # the run's rubric, not the shipped one


def test_a_note_kept_raw_leaves_every_store_masked(store_url):  # noqa: F811
    """Issue 47, on SQLite and Postgres: a store written raw keeps the note; the labels file masks it."""
    with stored(store_url) as store:
        raw = open_store(store_url, raw=True)
        try:
            raw.save_label(label("a", "correctness", "bad", note="told ann.lee@example.com, card 4111 1111 1111 1111"))
        finally:
            raw.close()
        [given] = store.labels()
        assert "ann.lee@example.com" in given.note  # the store holds what it was given
        text = json.dumps(label_file(store, ["r1"]))
    assert "told [REDACTED_EMAIL]" in text and "ann.lee@example.com" not in text and "4111 1111" not in text
