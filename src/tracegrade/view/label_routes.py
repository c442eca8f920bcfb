"""The view's label routes: the queue page, the one POST that stores a label, the labels file.

    >>> default_annotator() != ""
    True

``GET /runs/{run}/label`` walks a person's unlabelled answers (``label_page``);
``POST /labels`` stores one label (CSRF-checked by ``csrf.CsrfGuard`` before it
gets here, which also hands over the parsed form) and sends the browser back;
``GET /labels.json?run=RUN`` (or ``?dataset=NAME``, or neither for every run) is
the labels file `tracegrade calibrate --labels` reads.
"""

from __future__ import annotations

import functools
import getpass
import itertools
import json
from typing import Callable, Mapping

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tracegrade.core.errors import ConfigError
from tracegrade.core.redact import redact
from tracegrade.core.results import CaseResult
from tracegrade.case.schema import GoldenCase
from tracegrade.judge import stored_labels
from tracegrade.store.labelrows import NAME_CHARS, AnswerLabel
from tracegrade.store.runstore import RunInfo, RunStore
from tracegrade.view import label_page, labelqueue, metrics_page
from tracegrade.view.label_forms import queue_url
from tracegrade.view.shell import case_url, e, layout

InfoOf = Callable[[RunStore, str], RunInfo]
CaseOf = Callable[[RunStore, str, str, int], "CaseResult | None"]
RUNS_EXPORTED = 500  # runs on one dataset a labels file gathers
REQUIRED = ("run_id", "case_id", "metric", "verdict")  # a label form's fields with no default
REPEAT_DIGITS = 6  # a repetition's number; more is no answer of any run


def default_annotator() -> str:
    """Who labels when the page names no one: the login name, else "me"."""
    try:
        return getpass.getuser()[:NAME_CHARS] or "me"
    except (OSError, KeyError):  # no user name in this environment (a container without one)
        return "me"


def add_label_routes(app: FastAPI, store: RunStore, annotator: str, info_of: InfoOf, case_of: CaseOf) -> None:
    """The routes, over ``store``; ``annotator``: the name a page starts with."""
    default = annotator
    # WHY kept per run content: a queue reads every case's metrics and ranks them; the next item must not again.
    ranked = functools.lru_cache(maxsize=4)(lambda key: labelqueue.rank(labelqueue.candidates(store.case_texts(key[0]))))

    @app.get("/runs/{run_id}/label", response_class=HTMLResponse)
    def queue(request: Request, run_id: str, metric: str = "", annotator: str = "",
              passed: int = Query(0, alias="pass"), last: str = "", again: str = "",
              mode: str = labelqueue.FILL) -> Response:
        """``last``: the item just labelled (shown, u to change it); ``again``: that item shown to relabel;
        ``mode``: over every metric, fill one until it can gate, or the metrics in turn (labelqueue)."""
        info = info_of(store, run_id)
        if info.run_id != run_id:
            return RedirectResponse(queue_url(info.run_id), status_code=307)
        who = _name(annotator) or default
        items = ranked((info.run_id, info.cases_done, info.status))
        mine = {(g.case_id, g.repeat, g.metric): g for g in store.labels([info.run_id]) if g.annotator == who}
        left = items.left(set(mine), metric)
        passed = min(max(passed, 0), left)
        relabel = label_page.parse_ref(again)
        item = items.by_key.get(relabel) if relabel else None
        current = mine.get(item.key) if item else None
        fill = items.filling({key: g.verdict for key, g in mine.items()}) \
            if mode != labelqueue.TURNS and not metric else None
        walk = items.walk_filling(set(mine), fill) if fill else items.walk(set(mine), metric)
        item = item or next(itertools.islice(walk, passed, None), None)
        result = case_of(store, info.run_id, item.case_id, item.repeat) if item else None
        golden = _golden(info, item.case_id) if item else None
        given = label_page.parse_ref(last)
        skipped = sum(1 for g in mine.values() if g.verdict == "skip")
        state = label_page.Queue(info.run_id, sorted(items.by_metric), metric, who, passed, left, len(mine) - skipped,
                                 mine.get(given) if given else None, skipped,
                                 labelqueue.TURNS if mode == labelqueue.TURNS else labelqueue.FILL, fill)
        return HTMLResponse(label_page.render(state, item, result, redact(golden.golden_answer) if golden else "",
                                              redact(golden.expected_behaviour) if golden else "", request.state.csrf,
                                              current))

    @app.post("/labels")
    def label(request: Request) -> Response:
        form: dict[str, str] = getattr(request.state, "form", {})
        bad = bad_field(form)
        if bad:
            return _problem(400, bad)
        repeat = form.get("repeat", "0")
        info = info_of(store, form["run_id"])
        result = case_of(store, info.run_id, form["case_id"], int(repeat))
        if result is None:
            return _problem(404, f"no case {form.get('case_id', '')!r} (repetition {repeat}) in run {info.run_id}")
        metric = form.get("metric", "")
        if metric not in {m.name for m in result.metrics} | set(result.scores or ()):
            return _problem(400, f"the judge has no metric {metric!r} on this answer")
        golden = _golden(info, result.case_id)
        try:
            given = AnswerLabel(info.run_id, result.case_id, result.repeat, metric,
                                form.get("annotator", "").strip() or default, form.get("verdict", ""),
                                form.get("note", "").strip(), golden.golden_answer if golden else "",
                                golden.expected_behaviour if golden else "")
        except ValueError as exc:
            return _problem(400, str(exc))
        store.save_label(given)
        back = form.get("back", "")
        local = back.startswith("/") and not back.startswith("//") and "\\" not in back
        return RedirectResponse(back if local else case_url(info.run_id, result.case_id, result.repeat),
                                status_code=303)

    @app.get("/labels.json")
    def labels_json(run: str = "", dataset: str = "", reference: str = "") -> Response:
        """``reference``: whose label comes first on each answer (needed when several people labelled one)."""
        run_ids = [info_of(store, run).run_id] if run else \
            [i.run_id for i in store.runs(limit=RUNS_EXPORTED, dataset=dataset)] if dataset else None
        try:
            data = stored_labels.label_file(store, run_ids, reference.strip() or None)
        except ConfigError as exc:  # several people labelled one answer: name whose label comes first
            return _problem(400, str(exc).replace("--reference NAME", "?reference=NAME"))
        return Response(json.dumps(data, indent=2, ensure_ascii=False) + "\n", media_type="application/json",
                        headers={"content-disposition": 'attachment; filename="labels.json"'})


def bad_field(form: Mapping[str, str]) -> str:
    """What is wrong with the first field of a label form no label could have ("" when none):
    each is refused with a 400 naming it, before the store is asked.

        >>> bad_field({"run_id": "r1", "case_id": "a", "metric": "m", "verdict": "good", "repeat": "²"})
        "field 'repeat': the answer's repetition, a whole number from 0, got '²'"
    """
    for name in REQUIRED:
        if not form.get(name, "").strip():
            return f"field {name!r}: required (a label names its run, case, metric and verdict)"
    for name, value in form.items():
        if any(ord(c) < 32 and c not in "\t\n\r" or 127 <= ord(c) < 160 for c in value):
            return f"field {name[:40]!r}: holds a control character (printable text only; a note may break lines)"
    repeat = form.get("repeat", "0")
    # WHY ASCII digits only: str.isdigit() takes '²', which int() refuses (a 500 before).
    if not (repeat.isascii() and repeat.isdigit() and len(repeat) <= REPEAT_DIGITS):
        return f"field 'repeat': the answer's repetition, a whole number from 0, got {repeat[:20]!r}"
    return ""


def _name(given: str) -> str:
    return given.strip()[:NAME_CHARS]


def _golden(info: RunInfo, case_id: str) -> GoldenCase | None:
    """The case in the run's dataset file (at the run's version), as the case page finds its reference."""
    cases, _ = metrics_page.dataset_cases(info)
    return next((c for c in cases if c.id == case_id), None)


def _problem(status: int, problem: str) -> HTMLResponse:
    return HTMLResponse(layout("Not labelled", f'<section><p class="error" id="problem">{e(problem)}</p>'
                               '<p><a href="/">all runs</a></p></section>'), status_code=status)
