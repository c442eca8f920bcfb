"""Labels people give answers in `tracegrade view`, as rows of the run store.

    >>> label = AnswerLabel("r1", "case-a", 0, "faithfulness", "ann", "good")
    >>> label.key
    ('r1', 'case-a', 0, 'faithfulness', 'ann')

One row per (run, case, repetition, metric, annotator): a person's newer label
of an answer on a metric replaces their older one (an upsert, the same SQL on
SQLite and Postgres). ``skip`` marks an answer the person chose not to judge:
it leaves their label queue and is never exported. The reference answer and
expected behaviour shown beside the answer are kept with the label, so the
exported item holds what the person (and the run's judge) read, even when the
dataset file has moved on since.

An annotator's name is printable text (no control or format character: a name
is printed by `calibrate` and shown on pages). A label leaves the store through
``masked`` (a page, an export): its texts with personal data masked, however the
store was written.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from tracegrade.core.redact import redact
from tracegrade.store.backends import Row, Run

VERDICTS = ("good", "bad", "skip")
NOTE_CHARS = 2000  # a note longer than this is cut
NAME_CHARS = 64  # an annotator's name

MIGRATION_NAME = "answer labels"
MIGRATION_STATEMENTS = (
    """CREATE TABLE answer_labels (
         run_id TEXT NOT NULL REFERENCES runs (run_id),
         case_id TEXT NOT NULL,
         repetition INTEGER NOT NULL,
         metric TEXT NOT NULL,
         annotator TEXT NOT NULL,
         verdict TEXT NOT NULL,
         note TEXT NOT NULL DEFAULT '',
         golden_answer TEXT NOT NULL DEFAULT '',
         expected_behaviour TEXT NOT NULL DEFAULT '',
         created_ns BIGINT NOT NULL,
         labelled_at TEXT NOT NULL,
         PRIMARY KEY (run_id, case_id, repetition, metric, annotator))""",
)


@dataclass(frozen=True)
class AnswerLabel:
    """One person's verdict on one answer for one metric (``verdict``: good, bad or skip)."""

    run_id: str
    case_id: str
    repeat: int
    metric: str
    annotator: str
    verdict: str
    note: str = ""
    golden_answer: str = ""
    expected_behaviour: str = ""
    labelled_at: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"a label is one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        if not self.annotator.strip() or len(self.annotator) > NAME_CHARS:
            raise ValueError(f"an annotator's name is 1 to {NAME_CHARS} characters")
        if not self.annotator.isprintable():
            raise ValueError(f"an annotator's name is printable characters only, got {_escaped(self.annotator)}")
        if not self.metric:
            raise ValueError("a label names its metric")

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        return self.run_id, self.case_id, self.repeat, self.metric, self.annotator


_COLUMNS = ("run_id, case_id, repetition, metric, annotator, verdict, note, golden_answer, expected_behaviour, "
            "labelled_at")


def upsert(run: Run, label: AnswerLabel, created_ns: int) -> None:
    """Insert ``label``, replacing the same person's label of that answer on that metric."""
    run(f"INSERT INTO answer_labels ({_COLUMNS}, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, case_id, repetition, metric, annotator) DO UPDATE SET verdict = excluded.verdict, "
        "note = excluded.note, golden_answer = excluded.golden_answer, "
        "expected_behaviour = excluded.expected_behaviour, labelled_at = excluded.labelled_at, "
        "created_ns = excluded.created_ns",
        (*label.key, label.verdict, label.note[:NOTE_CHARS], label.golden_answer, label.expected_behaviour,
         label.labelled_at, created_ns))


def select(run: Run, run_ids: Sequence[str] | None = None) -> list[AnswerLabel]:
    """The labels of ``run_ids`` (None: of every run), by run, case, repetition, annotator and metric."""
    order = " ORDER BY run_id, case_id, repetition, annotator, metric"
    if run_ids is None:
        return [_label(row) for row in run(f"SELECT {_COLUMNS} FROM answer_labels{order}", ())]
    found: list[AnswerLabel] = []
    for start in range(0, len(run_ids), 500):  # WHY chunks: a bound on the parameters of one statement
        chunk = list(run_ids[start:start + 500])
        rows = run(f"SELECT {_COLUMNS} FROM answer_labels WHERE run_id IN ({', '.join('?' * len(chunk))}){order}",
                   chunk)
        found += [_label(row) for row in rows]
    return found


def masked(label: AnswerLabel) -> AnswerLabel:
    """``label`` as it leaves the store (a page, an export): personal data in its texts masked.

    WHY on the way out, not only when stored: a store written with TRACEGRADE_RAW_DATA=1
    (or by an older version) holds the texts raw, and a page or a labels file is an export."""
    texts = (label.note, label.golden_answer, label.expected_behaviour)
    note, golden, expected = (redact(text) if text else text for text in texts)
    return dataclasses.replace(label, note=note, golden_answer=golden, expected_behaviour=expected)


def _label(row: Row) -> AnswerLabel:
    return AnswerLabel(row[0], row[1], int(row[2]), row[3], _printable(row[4]), row[5], row[6], row[7], row[8], row[9])


def _printable(name: str) -> str:
    """A stored name as text a terminal shows as it is: a name stored before names were
    checked may hold control characters, which are written as escapes."""
    return name if name.isprintable() else _escaped(name)[1:-1][:NAME_CHARS]


def _escaped(name: str) -> str:
    """``name`` quoted, every character that is not printable as its escape (``\\x1b``)."""
    return "'" + "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in name) + "'"
