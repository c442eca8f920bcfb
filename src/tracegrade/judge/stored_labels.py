"""The labels people gave in `tracegrade view`, as the labels file `tracegrade calibrate` reads.

    >>> from tracegrade.store.runstore import open_store
    >>> with open_store("sqlite:///:memory:") as store:
    ...     runs_labelled(store, None)
    []

Each labelled answer becomes one ``LabelledItem`` built from the stored case
result: its question, its answer, and the evidence the run's judge was shown
(the context and the tool calls with their results), plus the reference answer
and expected behaviour the view showed beside it when it was labelled. So
`calibrate` puts before the judge what the person and the run's judge read.
The case and the labels' texts are redacted again on the way out, as the view's pages
are: a store written with TRACEGRADE_RAW_DATA=1 holds them raw.

Each person's labels of an answer are one label of the item (their good and bad
per metric, their notes as its rationale); skips are left out.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any, Iterable, Sequence

from tracegrade.core import jsontext
from tracegrade.core.errors import ConfigError, DatasetError
from tracegrade.core.redact import redact_data
from tracegrade.core.results import CaseResult
from tracegrade.judge.labels import LabelFile, LabelledItem
from tracegrade.store import runref
from tracegrade.store.labelrows import AnswerLabel, masked
from tracegrade.store.runstore import STRUCTURE_KEYS, RunStore

NO_NOTE = "labelled in tracegrade view"  # a label's rationale when its person wrote no note
RUNS_SEARCHED = 500  # runs on a dataset whose labels one export gathers


def runs_labelled(store: RunStore, ref: str | None) -> list[str]:
    """The runs whose labels ``ref`` asks for: a run (id, unique prefix, latest, previous),
    else every run on the dataset of that name, else (None) every run that has labels."""
    if ref is None:
        return sorted({label.run_id for label in store.labels()})
    try:
        return [runref.resolve_id(store, ref)]
    except ConfigError:
        on_dataset = [info.run_id for info in store.runs(limit=RUNS_SEARCHED, dataset=ref)]
        if not on_dataset:
            raise ConfigError(f"{ref!r} names no run and no dataset in {store.url}{_datasets_hint(store, ref)}") from None
        return on_dataset


def _datasets_hint(store: RunStore, ref: str) -> str:
    """What a dataset is called in the store (its file's base name), for the error of a ``ref``
    that names none: the name a file declares is what reports show, so a newcomer tries it first."""
    recent = store.runs(limit=RUNS_SEARCHED)
    declaring = sorted({info.dataset for info in recent if info.manifest.settings.get("datasetName") == ref})
    if declaring:
        return (f": a dataset is named by its file's base name, here {', '.join(map(repr, declaring))} "
                f"(the file that declares the name {ref!r})")
    known = sorted({info.dataset for info in recent})
    return f" (its datasets, by file base name: {', '.join(map(repr, known[:10]))})" if known else ""


def label_file(store: RunStore, run_ids: Sequence[str] | None) -> dict[str, Any]:
    """The labels file (``judge.labels.LabelFile``'s JSON form) of the labels given on ``run_ids`` (None: all);
    DatasetError when none of them has a good or bad label."""
    labels = [masked(label) for label in store.labels(run_ids) if label.verdict != "skip"]
    by_answer: dict[tuple[str, str, int], list[AnswerLabel]] = defaultdict(list)
    for label in labels:
        by_answer[(label.run_id, label.case_id, label.repeat)].append(label)
    items = [item for key, given in by_answer.items() if (item := _item(store, key, given)) is not None]
    if not items:
        where = f"runs {', '.join(run_ids)}" if run_ids else "any run"
        raise DatasetError(f"no answer labelled good or bad on {where} in {store.url}: label answers in "
                           "`tracegrade view` (a case page, or a run's label queue) first")
    runs = sorted({label.run_id for label in labels})
    return {"description": f"labels given in tracegrade view on {len(runs)} run(s): {', '.join(runs)}",
            "items": items}


def labelled_items(store: RunStore, run_ids: Sequence[str] | None) -> tuple[tuple[LabelledItem, ...], str]:
    """As ``judge.labels.load_labels``: the items, and a hash of their file's content as its version."""
    text = jsontext.dump(label_file(store, run_ids), sort_keys=True)
    return LabelFile.model_validate_json(text).items, hashlib.sha256(text.encode()).hexdigest()[:12]


def _item(store: RunStore, key: tuple[str, str, int], given: Sequence[AnswerLabel]) -> dict[str, Any] | None:
    """The item of one stored answer and its labels; None when the answer is gone or has no text to judge."""
    run_id, case_id, repeat = key
    text = store.case_text(run_id, case_id, repeat)
    if text is None:
        return None
    result = CaseResult.from_json(redact_data(jsontext.load(text), STRUCTURE_KEYS, personal=True))
    if result.reply is None or not result.question:
        return None
    reply, newest = result.reply, max(given, key=lambda label: label.labelled_at)
    return {
        "id": f"{run_id}:{case_id}" + (f"#{repeat + 1}" if repeat else ""), "caseId": case_id,
        "question": result.question, "goldenAnswer": newest.golden_answer,
        "expectedBehaviour": newest.expected_behaviour,
        "evidence": {"context": reply.context, "toolCalls": [c.model_dump(mode="json", by_alias=True) for c in reply.tool_calls]},
        "answer": reply.answer, "labels": list(_by_person(given)),
    }


def _by_person(given: Iterable[AnswerLabel]) -> Iterable[dict[str, Any]]:
    people: dict[str, list[AnswerLabel]] = defaultdict(list)
    for label in given:
        people[label.annotator].append(label)
    for name in sorted(people):
        notes = "; ".join(f"{label.metric}: {label.note}" for label in people[name] if label.note.strip())
        yield {"annotator": name, "rationale": notes or NO_NOTE,
               "scores": {label.metric: label.verdict for label in people[name]}}
