"""The human-labels file: the shipped one is complete, a malformed one fails loudly."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tracegrade.core.errors import DatasetError
from judge_rubrics import SEED_METRICS as METRICS
from tracegrade.judge.labels import DEFAULT_LABELS, load_labels

SCORES = dict.fromkeys(METRICS, 5)


def _item(item_id: str = "hl-01", **scores: int) -> dict:
    return {"id": item_id, "caseId": "c", "question": "q", "evidence": {"context": "", "toolCalls": []},
            "answer": "a", "kind": "right",
            "labels": [{"annotator": "A", "scores": {**SCORES, **scores}, "rationale": "r"}]}


def _write(tmp_path: Path, items: list[dict]) -> Path:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"items": items}))
    return path


def test_shipped_labels_cover_every_kind_with_a_second_annotator_on_a_subset():
    items, version = load_labels(DEFAULT_LABELS)
    assert len(items) >= 40 and len(version) == 12
    assert set(Counter(i.kind for i in items)) == {"right", "partial", "wrong", "hallucinated", "refusal"}
    assert sum(1 for i in items if i.label_by("B")) >= 15
    assert all(i.label_by("A") for i in items)
    assert all("\n" not in label.rationale for i in items for label in i.labels)
    # Every metric must vary, or its Spearman rho is undefined.
    assert all(len({i.label_by("A").scores[m] for i in items}) >= 3 for m in METRICS)


@pytest.mark.parametrize("scores, message", [
    ({"correctness": 7}, "1..5"),
    ({"correctness": 0}, "1..5"),
    ({"correctness": True}, "got True"),
])
def test_a_score_out_of_range_names_the_field(tmp_path, scores, message):
    with pytest.raises(DatasetError, match=rf"items\.0\.labels\.0\.scores.*{message}"):
        load_labels(_write(tmp_path, [_item(**scores)]))


def test_a_label_may_cover_some_metrics_and_be_binary_and_kind_is_optional(tmp_path):
    item = {k: v for k, v in _item().items() if k != "kind"}
    item["labels"][0]["scores"] = {"correctness": "bad", "tone": 4}
    (loaded,), _ = load_labels(_write(tmp_path, [item]))
    label = loaded.labels[0]
    assert (label.verdict("correctness"), label.number("correctness")) == ("bad", 1)
    assert (label.verdict("tone"), label.verdict("relevance"), loaded.kind) == ("good", None, "")


@pytest.mark.parametrize("scores, message", [({}, "at least 1"), ({"correctness": "meh"}, "correctness")])
def test_an_empty_or_unknown_label_is_an_error(tmp_path, scores, message):
    item = _item()
    item["labels"][0]["scores"] = scores
    with pytest.raises(DatasetError, match=message):
        load_labels(_write(tmp_path, [item]))


def test_an_unknown_field_is_an_error(tmp_path):
    typo = {**_item(), "annswer": "x"}
    with pytest.raises(DatasetError, match="annswer"):
        load_labels(_write(tmp_path, [typo]))


def test_duplicate_ids_are_rejected(tmp_path):
    with pytest.raises(DatasetError, match="unique.*hl-01"):
        load_labels(_write(tmp_path, [_item(), _item()]))
