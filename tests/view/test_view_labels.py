"""Labelling in `tracegrade view`, through the app's routes: the CSRF token on every POST,
the token gate, a person's label replacing their own, the queue's order, skip and next,
redaction, and the labels file. The browser test (test_view_browser.py) presses the keys."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from runs_support import run
from tracegrade.core.results import CaseResult, MetricScore
from tracegrade.core.trace import Reply
from tracegrade.store.runstore import open_store
from tracegrade.view.app import create_view_app
from tracegrade.view import labelqueue
from tracegrade.view.labelqueue import Candidate, ordered
from view_support import record

HOST = "http://localhost"
# (case, relevance P(yes), correctness 1..5): relevance passes at 0.5, correctness at 4.
VALUES = (("far", 0.99, 1.0), ("near", 0.52, 3.0), ("nearest", 0.5, 5.0), ("mid", 0.3, 4.0))
EMAIL = "ann.lee@example.com"


def answered(case_id: str, relevance: float, correctness: float) -> CaseResult:
    reply = Reply(answer=f"answer {case_id}, mail {EMAIL}", context="SOURCE: policy.md\n30 days")
    metrics = (MetricScore("relevance", relevance, 0.5, "probability"),
               MetricScore("correctness", correctness, 4.0, "scale", low=1.0, high=5.0),
               MetricScore("faithfulness", None, 0.5, "probability", "no evidence"))
    return CaseResult(case_id, "pass", question=f"question {case_id}?", reply=reply, metrics=metrics)


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    record(store, run([answered(*v) for v in VALUES], run_id="r1"))
    yield store
    store.close()


@pytest.fixture
def client(store):
    return TestClient(create_view_app(store, annotator="ann"), base_url=HOST)


def form_of(page: str) -> dict[str, str]:
    """The hidden fields of the page's first label form (its CSRF token among them)."""
    first = page[page.index('<form method="post"'):]
    first = first[:first.index("</form>")]
    return {k: unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', first)}


def shown(page: str, ident: str) -> str:
    return unescape(re.search(rf'id="{ident}"[^>]*>([^<]*)<', page).group(1))


def test_a_label_without_this_sessions_token_is_refused_and_changes_nothing(client, store):
    fields = form_of(client.get("/runs/r1/label").text)
    for token, why in (("", "no form token was sent"), ("0" * 64, "the form token is not this session's")):
        refused = client.post("/labels", data={**fields, "csrf": token, "verdict": "good"}, follow_redirects=False)
        assert refused.status_code == 403 and why in unescape(refused.text) and "Reload the page" in refused.text
    stranger = TestClient(client.app, base_url=HOST)  # another browser: its own session cookie
    stranger.get("/")
    refused = stranger.post("/labels", data={**fields, "verdict": "good"}, follow_redirects=False)
    assert refused.status_code == 403
    other_port = client.post("/labels", data={**fields, "verdict": "good"}, headers={"Origin": "http://localhost:9999"},
                             follow_redirects=False)  # same site to the cookie, another server: refused
    assert other_port.status_code == 403 and "http://localhost:9999" in unescape(other_port.text)
    assert store.labels() == []
    taken = client.post("/labels", data={**fields, "verdict": "good"}, headers={"Origin": HOST},
                        follow_redirects=False)
    assert taken.status_code == 303 and taken.headers["location"] == fields["back"]
    assert [(g.case_id, g.metric, g.annotator, g.verdict) for g in store.labels()] == \
        [(fields["case_id"], fields["metric"], "ann", "good")]


def test_labels_never_go_through_a_get(client, store):
    fields = form_of(client.get("/runs/r1/label").text)
    assert client.get("/labels", params={**fields, "verdict": "good"}).status_code == 405
    assert store.labels() == []


def test_a_persons_new_label_replaces_their_old_one_and_the_case_page_shows_it(client, store):
    page = client.get("/runs/r1/cases/near").text
    assert page.count('<form method="post" action="/labels"') == 3  # one per metric, the unscored one too
    fields = form_of(page)
    for verdict, note in (("good", "first look"), ("bad", "wrong date")):
        assert client.post("/labels", data={**fields, "verdict": verdict, "note": note, "annotator": "ann"},
                           follow_redirects=False).status_code == 303
    client.post("/labels", data={**fields, "verdict": "good", "annotator": "bob"})
    assert sorted((g.annotator, g.verdict, g.note) for g in store.labels()) == [("ann", "bad", "wrong date"),
                                                                             ("bob", "good", "")]
    page = client.get("/runs/r1/cases/near").text
    row = page[page.index(f'data-metric="{fields["metric"]}"'):]
    assert '<td class="mine">bad</td>' in row[:400] and "bob good" in row[:4000]
    assert re.search(r'value="bad" class="verdict bad" aria-keyshortcuts="b" aria-pressed="true"', row)


def test_the_token_gate_holds_for_the_queue_and_the_labels(store):
    gated = TestClient(create_view_app(store, token="view-token-0123456789", annotator="ann"), base_url=HOST)
    assert gated.get("/runs/r1/label", headers={"accept": "text/html"}, follow_redirects=False).status_code == 303
    assert gated.post("/labels", data={"verdict": "good"}, follow_redirects=False).status_code == 401
    assert gated.get("/labels.json").status_code == 401
    bearer = {"authorization": "Bearer view-token-0123456789"}
    fields = form_of(gated.get("/runs/r1/label", headers=bearer).text)
    token = fields.pop("csrf")  # sent as the header a script would use instead of the form field
    assert gated.post("/labels", data={**fields, "verdict": "bad"}, headers={**bearer, "X-CSRF-Token": token},
                      follow_redirects=False).status_code == 303
    assert [g.verdict for g in store.labels()] == ["bad"]


def test_the_queue_puts_each_metrics_threshold_region_first_the_metrics_in_turn():
    items = [Candidate(case, 0, "relevance", rel, 0.5, position=i) for i, (case, rel, _) in enumerate(VALUES)] + \
        [Candidate(case, 0, "correctness", cor, 4.0, 1.0, 5.0, position=i) for i, (case, _, cor) in enumerate(VALUES)]
    order = [(c.metric, c.case_id) for c in ordered(items, done=set())]
    assert order == [("correctness", "mid"), ("relevance", "nearest"), ("correctness", "near"),
                     ("relevance", "near"), ("correctness", "nearest"), ("relevance", "mid"),
                     ("correctness", "far"), ("relevance", "far")]
    assert [c.case_id for c in ordered(items, {("mid", 0, "correctness")}, "correctness")] == ["near", "nearest", "far"]
    # a label given: the other metric's turn next, not the same metric's next nearest
    assert [(c.metric, c.case_id) for c in ordered(items, {("mid", 0, "correctness")})][:2] == \
        [("relevance", "nearest"), ("correctness", "near")]


class Counted(Candidate):
    """A candidate that counts how often the queue measures its distance to the threshold."""

    measured = 0

    @property
    def distance(self) -> float:
        Counted.measured += 1
        return super().distance


def full_sort(items, done, metric=""):
    """The queue's order as its rule says it, sorted whole: per metric by distance then place,
    the metrics in turn, each turn counting the labels the metric already has."""
    given = {m: sum(1 for key in done if key[2] == m) for m in {i.metric for i in items}}
    turns = []
    for name in {i.metric for i in items if not metric or i.metric == metric}:
        found = sorted((i for i in items if i.metric == name and i.key not in done),
                       key=lambda c: (c.distance, c.position, c.repeat))
        turns += [(place + given[name], name, item) for place, item in enumerate(found)]
    return [item for _, _, item in sorted(turns, key=lambda turn: turn[:2])]


def test_the_queue_ranks_a_run_once_and_each_press_only_walks_to_its_item():
    """bench/serve/label_queue.py: on a 10,000-answer run each key press sorted all 50,000 items again
    (1.4 s a press); now they are ranked once and a press walks to the item it shows."""
    import random

    draw = random.Random(35)
    items = [Counted(f"c{i:05d}", 0, metric, round(draw.random(), 2), 0.5, position=i)
             for i in range(2_000) for metric in ("correctness", "faithfulness", "relevance")]
    Counted.measured = 0
    ranked = labelqueue.rank(items)
    assert Counted.measured == len(items)  # each item measured once, when the run is ranked
    done: set = set()
    for press in range(20):
        shown = ranked.at(done, "", press % 3)  # a label, or a press of next now and then
        done.add(shown.key)
    assert Counted.measured == len(items)  # the presses measured nothing again
    assert ranked.left(done, "") == len(items) - 20 and ranked.left(done, "relevance") == 2_000 - sum(
        key[2] == "relevance" for key in done)
    for metric in ("", "faithfulness"):
        walked = list(ranked.walk(done, metric))
        assert walked == full_sort(items, done, metric) and len(walked) == ranked.left(done, metric)
        assert ranked.at(done, metric, len(walked)) is None


def test_the_queue_walks_the_unlabelled_answers_good_skip_and_next(client, store):
    turns = {"mode": "turns"}  # the metrics in turn
    answer = client.get("/runs/r1/label", params=turns)
    # WHY asserted: under no-referrer a browser's form POST says Origin: null, which is refused
    assert answer.headers["referrer-policy"] == "same-origin"
    first = answer.text
    assert (shown(first, "metric"), shown(first, "judge-value")) == ("correctness", "4.00")  # mid: on the threshold
    assert shown(first, "progress").startswith("8 left")  # two scored metrics of four answers; not the unscored
    assert "g good" in shown(first, "keys") and "n or → next" in shown(first, "keys")
    assert EMAIL not in first and "answer mid" in first  # the answer as the view shows every page: redacted
    client.post("/labels", data={**form_of(first), "verdict": "good"})
    second = client.get("/runs/r1/label", params=turns).text
    assert shown(second, "metric") == "relevance" and shown(second, "progress").startswith("7 left · 1 labelled")
    client.post("/labels", data={**form_of(second), "verdict": "skip"})
    third = client.get("/runs/r1/label", params=turns).text
    passed = client.get(re.search(r'id="next" href="([^"]+)"', third).group(1).replace("&amp;", "&")).text
    assert form_of(passed)["metric"] != form_of(third)["metric"] and "1 passed over" in shown(passed, "progress")
    assert shown(client.get("/runs/r1/label", params={"metric": "relevance"}).text, "progress").startswith("3 left")
    exported = client.get("/labels.json", params={"run": "r1"})
    assert exported.headers["content-disposition"] == 'attachment; filename="labels.json"'
    [item] = json.loads(exported.text)["items"]  # the skip is no label
    assert item["id"] == "r1:mid" and item["labels"][0]["scores"] == {"correctness": "good"}
    assert EMAIL not in exported.text


def test_every_label_walked_leaves_a_page_that_says_how_to_calibrate(client, store):
    for _ in range(8):
        client.post("/labels", data={**form_of(client.get("/runs/r1/label").text), "verdict": "bad"})
    done = client.get("/runs/r1/label").text
    assert "No unlabelled answer left for ann" in done and "tracegrade calibrate --from-store r1" in done
    assert "8 labelled by ann" in shown(done, "progress")
    assert shown(client.get("/runs/r1/label", params={"annotator": "bob"}).text, "progress").startswith("8 left")


def test_a_bad_label_is_refused_with_the_reason_and_back_stays_on_this_site(client, store):
    fields = form_of(client.get("/runs/r1/label").text)
    cases = ((dict(metric="tone"), 400, "no metric 'tone'"), (dict(case_id="nope"), 404, "no case 'nope'"),
             (dict(verdict="maybe"), 400, "good, bad, skip"), (dict(annotator="x" * 65), 400, "annotator"))
    for change, status, problem in cases:
        answer = client.post("/labels", data={**fields, "verdict": "good", **change}, follow_redirects=False)
        assert answer.status_code == status and problem in unescape(answer.text)
    assert store.labels() == []
    away = client.post("/labels", data={**fields, "verdict": "good", "back": "//evil.example/x"},
                       follow_redirects=False)
    assert away.headers["location"] == f"/runs/r1/cases/{fields['case_id']}"


PERSONAL_NOTE = "told ann.lee@example.com on +1 415 555 0100, card 4111 1111 1111 1111"
PERSONAL = ("ann.lee@example.com", "415 555 0100", "4111 1111 1111 1111")


def test_a_note_stored_raw_is_masked_on_every_way_out(tmp_path, monkeypatch, capsys):
    """Issue 47: with TRACEGRADE_RAW_DATA=1 a note's e-mail, phone and card number showed on the
    case page and in /labels.json, and `tracegrade labels` printed them with or without it."""
    from tracegrade.cli import main

    monkeypatch.setenv("TRACEGRADE_RAW_DATA", "1")
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:  # raw, from the environment
        record(store, run([answered(*v) for v in VALUES], run_id="r1"))
        client = TestClient(create_view_app(store, annotator="ann"), base_url=HOST)
        fields = form_of(client.get("/runs/r1/cases/near").text)
        client.post("/labels", data={**fields, "verdict": "bad", "note": PERSONAL_NOTE, "annotator": "ann"})
        assert store.labels()[0].note == PERSONAL_NOTE  # kept raw in the store, as asked
        pages = [client.get("/runs/r1/cases/near").text,
                 client.get("/runs/r1/label", params={"again": f"{fields['metric']}:0:near"}).text,
                 client.get("/labels.json", params={"run": "r1"}).text]
    assert "[REDACTED_EMAIL]" in pages[0] and "told" in pages[1] and "told" in pages[2]  # the note is there, masked
    for variable in ("1", None):
        if variable is None:
            monkeypatch.delenv("TRACEGRADE_RAW_DATA")
        assert main(["labels", "r1", "--db", url]) == 0
        pages.append(capsys.readouterr().out)
        assert "told" in pages[-1]
    for page in pages:
        assert not [p for p in PERSONAL if p in unescape(page)]


def test_an_annotator_name_is_printable_text(client, store):
    """Issue 47: a name with control characters was stored and printed raw by calibrate (it set
    the terminal's title and cleared the screen)."""
    fields = form_of(client.get("/runs/r1/label").text)
    for name in ("ann\x1b]0;pwned\x07", "ann\x1b[2J", "\u202eann", "ann\nbob"):
        refused = client.post("/labels", data={**fields, "verdict": "good", "annotator": name}, follow_redirects=False)
        assert refused.status_code == 400 and "printable" in unescape(refused.text), repr(name)
    assert store.labels() == []
    assert client.post("/labels", data={**fields, "verdict": "good", "annotator": "Zoë O'Brien"},
                       follow_redirects=False).status_code == 303


def test_every_bad_field_of_a_label_is_a_400_naming_it(client, store):
    """Issue 47: ``repeat="²"`` (a digit to str.isdigit, not to int) answered 500."""
    fields = form_of(client.get("/runs/r1/label").text)
    cases = (("repeat", "²"), ("repeat", "9" * 30), ("repeat", "-1"), ("repeat", "1e3"), ("run_id", " "),
             ("case_id", "\x00"), ("metric", "correctness\x00"), ("note", "a\x00b"), ("verdict", " "),
             ("annotator", "ann\x1b[2J"))
    for name, value in cases:
        answer = client.post("/labels", data={**fields, "verdict": "good", name: value}, follow_redirects=False)
        assert answer.status_code == 400 and f"field '{name}'" in unescape(answer.text), (name, value)
    assert store.labels() == []
    assert client.post("/labels", data={**fields, "verdict": "good", "note": "line one\nline two"},
                       follow_redirects=False).status_code == 303


def test_a_stored_threshold_that_was_not_a_number_leaves_every_page_working(tmp_path):
    """Issue 47: a non-finite threshold (stored as null: JSON has no NaN) answered 500 on the run
    page and the queue."""
    nan, inf = float("nan"), float("inf")
    metrics = (MetricScore("relevance", 0.6, nan, "probability"),
               MetricScore("correctness", 3.0, inf, "scale", low=-inf, high=nan),
               MetricScore("helpfulness", 0.2, 0.5, "probability"))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record(store, run([CaseResult("x", "pass", question="q?", reply=Reply(answer="a"), metrics=metrics)],
                          run_id="r1"))
        client = TestClient(create_view_app(store, annotator="ann"), base_url=HOST)
        for path in ("/runs/r1", "/runs/r1/cases/x", "/runs/r1/label", "/runs/r1/label?metric=relevance"):
            assert client.get(path).status_code == 200, path
        row = client.get("/runs/r1").text
        assert "helpfulness" in row  # below its threshold, the one that is a number
        queued = client.get("/runs/r1/label", params={"metric": "relevance"}).text
        assert "its threshold is not a number" in queued
        client.post("/labels", data={**form_of(queued), "verdict": "good"})
        assert [g.metric for g in store.labels()] == ["relevance"]


def test_the_counts_say_what_the_keys_did(client, store):
    """Issue 47: after s the page counted the skip as labelled; after n "8 left" became "7 left",
    though the answer stays in the queue (docs/judge.md)."""
    page = client.get("/runs/r1/label").text
    assert shown(page, "progress") == "8 left · 0 labelled by ann"
    client.post("/labels", data={**form_of(page), "verdict": "good"})
    page = client.get("/runs/r1/label").text
    client.post("/labels", data={**form_of(page), "verdict": "skip"})
    page = client.get("/runs/r1/label").text
    assert shown(page, "progress") == "6 left · 1 labelled by ann · 1 skipped"
    passed = client.get(re.search(r'id="next" href="([^"]+)"', page).group(1).replace("&amp;", "&")).text
    assert shown(passed, "progress") == "6 left · 1 labelled by ann · 1 skipped · 1 passed over"


def test_twenty_labels_in_the_fill_mode_can_calibrate_a_metric(tmp_path):
    """Issue 47: the documented flow, "label 20 answers", spread its presses over every metric (3-4
    each): none reached the 10 good and 10 bad calibration needs to let it gate. The queue's default
    mode fills one metric until it can gate; the metrics in turn remain a choice."""
    from tracegrade.judge.stored_labels import labelled_items

    def answer(i: int) -> CaseResult:
        metrics = (MetricScore("correctness", float(1 + i % 5), 4.0, "scale", low=1.0, high=5.0),
                   MetricScore("relevance", (i % 10) / 10, 0.5, "probability"),
                   MetricScore("completeness", (i % 7) / 7, 0.5, "probability", gates=False))
        return CaseResult(f"c{i:02d}", "pass", question=f"question {i}?", reply=Reply(answer=f"answer {i}"),
                          metrics=metrics)

    def label_twenty(client, mode: str) -> list[str]:
        shown_metrics = []
        for _ in range(20):
            page = client.get("/runs/r1/label", params={"mode": mode, "annotator": mode}).text
            fields = form_of(page)
            judged = float(shown(page, "judge-value"))
            threshold = {"correctness": 4.0, "relevance": 0.5, "completeness": 0.5}[fields["metric"]]
            shown_metrics.append(fields["metric"])
            # this person agrees with the judge's side of the threshold
            client.post("/labels", data={**fields, "verdict": "good" if judged >= threshold else "bad"})
        return shown_metrics

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        record(store, run([answer(i) for i in range(40)], run_id="r1"))
        client = TestClient(create_view_app(store, annotator="ann"), base_url=HOST)
        assert label_twenty(client, "fill") == ["correctness"] * 20  # a gating metric first, by name
        page = client.get("/runs/r1/label", params={"annotator": "fill"}).text
        assert "Filling relevance until it can gate: 0 good and 0 bad" in unescape(re.sub("<[^>]+>", "", page))
        assert len(set(label_twenty(client, "turns"))) == 3
        for person, gates in (("fill", True), ("turns", False)):
            items, _ = labelled_items(store, None, reference=person)
            verdicts = [i.verdict("correctness") for i in items if i.label_by(person) and i.verdict("correctness")]
            assert (verdicts.count("good") >= 10 and verdicts.count("bad") >= 10) is gates, person
