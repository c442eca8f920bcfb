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

The judge is measured against one label an item, its first: the reference
annotator's. The person who calibrates names them (``reference``); never the
order of names, which any labeller chooses. Without a name, an answer one
person labelled has that label, and labels where several people labelled the
same answer are refused, naming the people to choose from (``with_reference``).
A labels file keeps the order its author wrote unless a reference is named.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Sequence, TypeVar

from tracegrade.core import jsontext
from tracegrade.core.errors import ConfigError, DatasetError
from tracegrade.core.redact import redact_data
from tracegrade.core.results import CaseResult
from tracegrade.judge.labels import LabelFile, LabelledItem
from tracegrade.models.weights import MODEL_ID
from tracegrade.store import runref
from tracegrade.store.labelrows import AnswerLabel, masked
from tracegrade.store.runstore import STRUCTURE_KEYS, RunStore

NO_NOTE = "labelled in tracegrade view"  # a label's rationale when its person wrote no note
RUNS_SEARCHED = 500  # runs on a dataset whose labels one export gathers
NAMES_SHOWN = 10  # annotators named when the choice of a reference is asked for
T = TypeVar("T")


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


@dataclass(frozen=True)
class RunJudge:
    """The judge the labelled runs were scored with, as their manifests record it (None: not recorded)."""

    model: str | None  # a model spec, e.g. openai:gpt-4o-mini or local
    rubric: str | None  # the rubric file a run was given (--rubric), else the shipped one


def run_judge(store: RunStore, run_ids: Sequence[str] | None) -> RunJudge:
    """The judge of ``run_ids`` (None: of every run with labels), so `calibrate --from-store` measures
    the judge that scored those answers; ConfigError when the runs had different judges or a run's
    model was recorded without its provider (named from TRACEGRADE_JUDGE_MODEL when it ran)."""
    specs: dict[str, tuple[str | None, str | None]] = {}
    for run_id in run_ids if run_ids is not None else runs_labelled(store, None):
        manifest = store.info(run_id).manifest
        flag, model = manifest.settings.get("judgeModel"), manifest.judge_model
        if model is None and not flag:
            continue  # --checks-only: no judge
        spec = flag if isinstance(flag, str) and flag else "local" if model == MODEL_ID else None
        if spec is None:
            raise ConfigError(f"run {run_id} was judged by {model!r}, recorded without its provider: name it, "
                              f"--judge-model openai:{model} (or anthropic:{model})")
        rubric = manifest.settings.get("rubric")
        specs[run_id] = spec, rubric if isinstance(rubric, str) and rubric else None
    if len(set(specs.values())) > 1:
        shown = ", ".join(f"{run_id}: {spec}" + (f" with {rubric}" if rubric else "")
                          for run_id, (spec, rubric) in list(specs.items())[:NAMES_SHOWN])
        raise ConfigError(f"the labelled runs had different judges ({shown}): name one, --judge-model and --rubric")
    return RunJudge(*next(iter(specs.values()), (None, None)))


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


def label_file(store: RunStore, run_ids: Sequence[str] | None, reference: str | None = None) -> dict[str, Any]:
    """The labels file (``judge.labels.LabelFile``'s JSON form) of the labels given on ``run_ids`` (None: all),
    ``reference``'s label first on each answer (``with_reference``); DatasetError when none of them has a good
    or bad label, ConfigError when several people labelled one answer and no reference is named."""
    labels = [masked(label) for label in store.labels(run_ids) if label.verdict != "skip"]
    by_answer: dict[tuple[str, str, int], list[AnswerLabel]] = defaultdict(list)
    for label in labels:
        by_answer[(label.run_id, label.case_id, label.repeat)].append(label)
    items = [item for key, given in by_answer.items() if (item := _item(store, key, given)) is not None]
    answers = len(items)
    items = with_reference(items, lambda item: item["labels"], lambda label: label["annotator"], reference,
                           lambda item, labels: {**item, "labels": labels})
    if not items:
        where = f"runs {', '.join(run_ids)}" if run_ids else "any run"
        raise DatasetError(f"no answer labelled good or bad on {where} in {store.url}: label answers in "
                           "`tracegrade view` (a case page, or a run's label queue) first")
    runs = sorted({label.run_id for label in labels})
    chosen = "" if reference is None else f"; reference annotator {reference}" + (
        f" ({answers - len(items)} answers others labelled, not {reference}, left out)" if answers > len(items) else "")
    return {"description": f"labels given in tracegrade view on {len(runs)} run(s): {', '.join(runs)}{chosen}",
            "items": items}


def labelled_items(store: RunStore, run_ids: Sequence[str] | None,
                   reference: str | None = None) -> tuple[tuple[LabelledItem, ...], str]:
    """As ``judge.labels.load_labels``: the items, and a hash of their file's content as its version."""
    return parsed(label_file(store, run_ids, reference))


def parsed(data: dict[str, Any]) -> tuple[tuple[LabelledItem, ...], str]:
    """A labels file's JSON form (``label_file``) as its items, and a hash of its content as its version."""
    text = jsontext.dump(data, sort_keys=True)
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


def file_reference(items: Sequence[LabelledItem], reference: str | None, where: str) -> tuple[LabelledItem, ...]:
    """A labels file's items for calibration: every id and name printable (calibrate prints them), and
    with ``reference`` named, that person's label first (``with_reference``); without, the file's order."""
    for item in items:
        odd = next((label.annotator for label in item.labels if not label.annotator.isprintable()), None)
        if not item.id.isprintable():
            raise DatasetError(f"{where}: item '{_escaped(item.id)}': its id holds a control or format character")
        if odd is not None:
            raise DatasetError(f"{where}: item {item.id!r}: annotator '{_escaped(odd)}' holds a control or format "
                               "character: a name is printable text")
    if reference is None:
        return tuple(items)
    return tuple(with_reference(items, lambda item: item.labels, lambda label: label.annotator, reference,
                                lambda item, labels: item.model_copy(update={"labels": tuple(labels)})))


def _escaped(text: str) -> str:
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def with_reference(items: Sequence[T], labels_of: Callable[[T], Sequence[Any]], name_of: Callable[[Any], str],
                   reference: str | None, remade: Callable[[T, list[Any]], T]) -> list[T]:
    """``items`` with ``reference``'s label first on each answer they labelled; an answer labelled
    by others alone keeps its one label, and is left out when several others labelled it.
    Without ``reference``, ConfigError when any answer has more than one person's label: the
    person who calibrates chooses, not the sort order of names (which any labeller picks).

        >>> two = [["ann", "bob"], ["bob"]]
        >>> with_reference(two, list, str, "bob", lambda item, labels: labels)
        [['bob', 'ann'], ['bob']]
    """
    people = _people(items, labels_of, name_of)
    shared = sum(1 for item in items if len(labels_of(item)) > 1)
    if reference is None:
        if shared:
            raise ConfigError(f"{shared} answer(s) were labelled by more than one person: name whose labels the "
                              f"judge is compared with, --reference NAME (the labellers: {people})")
        return list(items)
    if not any(name_of(label) == reference for item in items for label in labels_of(item)):
        raise ConfigError(f"no label by {reference!r} to compare the judge with (the labellers: {people})")
    kept = []
    for item in items:
        labels = sorted(labels_of(item), key=lambda label: name_of(label) != reference)  # stable: the rest in order
        if len(labels) == 1 or name_of(labels[0]) == reference:
            kept.append(remade(item, labels))
    return kept


def _people(items: Sequence[T], labels_of: Callable[[T], Sequence[Any]], name_of: Callable[[Any], str]) -> str:
    """Who labelled, most answers first: the choices, named."""
    counts = Counter(name_of(label) for item in items for label in labels_of(item))
    named = ", ".join(f"{name} ({count} answers)" for name, count in counts.most_common(NAMES_SHOWN))
    return named + (f" and {len(counts) - NAMES_SHOWN} more" if len(counts) > NAMES_SHOWN else "")
