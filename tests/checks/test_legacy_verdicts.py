"""The old fields keep their verdicts: 3,325 stored replies replayed through the checks.

``bench/results/legacy-replay.json.gz`` holds replies for every case of the
golden dataset and the benchmark (the mock agent's traces, the real model's
recorded answers, systematic variants) with the verdicts the checks gave
before the trajectory work (``bench/checks/legacy_replay.py record``). Replayed now,
every verdict of every check that existed then must be the same, except the
one change the trajectory rules ask for, which the test states and checks:

- duplicateCalls applies to the calls that count (took effect) of tools that
  may write: a duplicate made only of declared reads, or of calls that ended
  error or denied, no longer fails (it did before).
- toolArgument gates ``expectedArguments`` (issue 46): a reply whose call of the
  expected tool lacks one of the case's listed arguments, or holds another value,
  now fails with ``wrong_argument`` (it fed only the argExact metric before). Every such move is checked below against the
  arguments themselves.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from places import ROOT
sys.path.insert(0, str(ROOT / "bench" / "checks"))

from legacy_replay import DATASETS, compare, load_corpus  # noqa: E402
from tracegrade.case.dataset import load_dataset  # noqa: E402

CORPUS = load_corpus()
CASES = {(p.name, c.id): c for p in DATASETS for c in load_dataset(p).cases}


def _only_reads_or_failed(row) -> bool:
    """Whether every call made twice with the same arguments is a declared read or did not take effect."""
    case = CASES[(row["dataset"], row["case"])]
    calls = row["reply"]["toolCalls"]
    key = lambda c: (c["name"], json.dumps(c["arguments"], sort_keys=True))  # noqa: E731
    twice = [k for k, n in Counter(key(c) for c in calls).items() if n > 1]
    for name, arguments in twice:
        declared = case.tool(name)
        is_read = declared is not None and not declared.writes
        took_effect = [c for c in calls if key(c) == (name, arguments) and c["status"] in ("ok", "needs_approval")]
        if not is_read and len(took_effect) > 1:
            return False
    return bool(twice)


def test_the_corpus_covers_both_datasets_and_every_old_check():
    assert len(CORPUS["rows"]) > 3000
    assert {r["dataset"] for r in CORPUS["rows"]} == {"golden-dataset.json", "benchmark.json"}
    seen = {(name, code) for r in CORPUS["rows"] for name, _, code in r["verdicts"]}
    for check in ("toolChoice", "toolArgument", "source", "forbiddenTools", "approval", "duplicateCalls",
                  "answerMustInclude", "answerMustNotInclude", "idempotency", "unauthorizedData", "faultRecorded"):
        assert any(name == check and code != "ok" for name, code in seen), f"no failing {check} in the corpus"


def _no_call_has_the_expected_arguments(row) -> bool:
    """Whether no call of the case's expected tool has each of its ``expectedArguments`` (written plainly)."""
    case = CASES[(row["dataset"], row["case"])]
    return bool(case.expected_arguments) and not any(
        c["name"] == case.expected_tool and all(c["arguments"].get(k) == v for k, v in case.expected_arguments.items())
        for c in row["reply"]["toolCalls"])


def _explained(move, row) -> bool:
    if move["check"] == "duplicateCalls":
        return move["old"] == [False, "duplicate_call"] and move["new"] == [True, "ok"] and _only_reads_or_failed(row)
    if move["check"] == "toolArgument":
        return move["old"] == [True, "ok"] and move["new"] == [False, "wrong_argument"] and \
            _no_call_has_the_expected_arguments(row)
    return False


def test_every_old_verdict_is_unchanged_but_duplicates_of_reads_and_failed_calls():
    moves = compare(CORPUS)
    rows = {(r["dataset"], r["case"], r["variant"]): r for r in CORPUS["rows"]}
    unexplained = [m for m in moves if not _explained(m, rows[(m["dataset"], m["case"], m["variant"])])]
    assert unexplained == []
    assert {m["check"] for m in moves} == {"duplicateCalls", "toolArgument"}, "both new rules must show"
