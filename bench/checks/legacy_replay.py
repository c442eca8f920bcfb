"""Replays stored replies through the checks: the old fields keep their verdicts.

    python bench/checks/legacy_replay.py record   # once, on the code before a change to the checks
    python bench/checks/legacy_replay.py check    # on the code after it: prints every verdict that moved

``record`` builds a corpus of replies for every case of the golden dataset and
the benchmark, runs the checks of the code as it is, and writes replies and
verdicts to ``bench/results/legacy-replay.json.gz``. The replies are:

- the trace ShopNest's agent loop makes on the mock's in-process answers;
- the answers of the real local model recorded in ``bench/results/*.txt``;
- systematic variants of the mock trace: no call, a wrong id, an extra read,
  a duplicate, every tool status, forbidden tools and arguments, reversed
  order, no source, empty answer, the golden answer.

``check`` replays the stored replies through the checks of the current code
on the current datasets and compares, check by check, the verdict (passed and
code) of every check the old code ran. ``tests/checks/test_legacy_verdicts.py``
asserts that the only moves are the ones listed in ``EXPECTED_MOVES``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "results" / "legacy-replay.json.gz"
DATASETS = (ROOT / "evals" / "golden-dataset.json", ROOT / "evals" / "benchmark.json")
WRITE = "createRefundDraft"
STATUSES = ("ok", "error", "denied", "needs_approval")


def recorded_answers() -> dict[str, set[str]]:
    """Answers of real runs by case id, read from the console reports in bench/results."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "bench" / "results").glob("*.txt")):
        case_id = None
        for line in path.read_text(encoding="utf-8").splitlines():
            head = re.match(r"^(\S+)\s+(PASS|FAIL|UNSCORED|ERROR)\b", line)
            if head:
                case_id = head.group(1)
            elif case_id and line.startswith("  answer     "):
                found.setdefault(case_id, set()).add(line[len("  answer     "):])
                case_id = None
    return found


def mock_replies(cases: list[Any]) -> list[Any]:
    sys.path.insert(0, str(ROOT / "bench" / "run"))  # throughput.py
    from shopnest.agent import ShopNestAgent, Turn
    from shopnest.knowledge import KnowledgeBase, load_policies
    from throughput import InstantModel, keyword_embedder

    agent = ShopNestAgent(InstantModel("instant-agent"), KnowledgeBase(load_policies(), keyword_embedder))

    async def one(case: Any) -> Any:
        history = [Turn(t.role, t.content) for t in case.history]
        return await agent.chat(case.question, case.customer_id or "C-100", history, dict(case.faults))

    async def every() -> list[Any]:
        return list(await asyncio.gather(*(one(c) for c in cases)))

    return asyncio.run(every())


def _call(name: str, order_id: str | None, status: str = "ok", **extra: Any) -> dict[str, Any]:
    arguments = {"orderId": order_id, **extra} if order_id is not None else dict(extra)
    return {"name": name, "arguments": arguments, "argument": order_id, "result": "", "status": status}


def _wire(answer: str, calls: list[dict[str, Any]], sources: list[str]) -> dict[str, Any]:
    steps = [{"kind": "retrieval", "name": "retrieve"}, {"kind": "model", "name": "agent"}]
    steps += [{"kind": "tool", "name": c["name"]} for c in calls]
    return {"answer": answer, "retrievedSources": sources, "toolCalls": calls, "steps": steps}


def variants(case: Any, base: dict[str, Any], answers: set[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Named replies around one case; each differs from the base in one way."""
    calls, answer, sources = base["toolCalls"], base["answer"], base["retrievedSources"]
    expected_id = case.expected_tool_argument or "ORD-101"
    tool = case.expected_tool or "getOrderStatus"
    yield "mock", base
    yield "no-calls", _wire(answer, [], sources)
    yield "empty-answer", _wire("", calls, sources)
    yield "golden-answer", _wire(case.golden_answer or "An answer.", calls, sources)
    for n, text in enumerate(sorted(answers)):
        yield f"recorded-{n}", _wire(text, calls, sources)
    yield "no-sources", _wire(answer, calls, [])
    yield "other-source", _wire(answer, calls, ["warranty-policy.md" if "warranty" not in str(sources) else "return-policy.md"])
    yield "wrong-id", _wire(answer, [{**c, "argument": "ORD-998", "arguments": {**c["arguments"], "orderId": "ORD-998"}}
                                     for c in calls], sources)
    yield "extra-read-first", _wire(answer, [_call("getOrderStatus", expected_id), *calls], sources)
    yield "extra-read-last", _wire(answer, [*calls, _call("getRefundStatus", expected_id)], sources)
    yield "duplicate", _wire(answer, [*calls, *calls], sources)
    yield "reversed", _wire(answer, [*calls[::-1], _call("getDeliveryDate", expected_id)][::-1], sources)
    for status in STATUSES:
        yield f"expected-{status}", _wire(answer, [_call(tool, expected_id, status)], sources)
        yield f"write-{status}", _wire(answer, [*calls, _call(WRITE, expected_id, status, reason="r")], sources)
        yield f"write-twice-{status}", _wire(answer, [_call(WRITE, expected_id, status, reason="a"),
                                                     _call(WRITE, expected_id, status, reason="b")], sources)
    yield "write-draft-and-direct", _wire(answer, [_call(WRITE, expected_id, "needs_approval", reason="r"),
                                                  _call(WRITE, "ORD-102", "ok", reason="r")], sources)
    for name in case.forbidden_tools:
        yield f"forbidden-{name}-error", _wire(answer, [*calls, _call(name, expected_id, "error")], sources)
    for value in case.forbidden_arguments:
        for status in STATUSES:
            yield f"forbidden-arg-{status}", _wire(answer, [_call(tool, value, status)], sources)
        yield "forbidden-arg-lowercase", _wire(answer, [_call(tool, f" {value.lower()} ", "ok")], sources)
    for text in case.answer_must_not_include:
        yield f"leak-{text}", _wire(f"{answer} {text.upper()}", calls, sources)
    for name in case.faults:
        yield f"fault-{name}-ok", _wire(answer, [_call(name, expected_id, "ok")], sources)
    if case.expected_arguments:
        yield "all-arguments", _wire(answer, [_call(tool, expected_id, "ok", **{k: v for k, v in
                                                                              case.expected_arguments.items()
                                                                              if k != "orderId"})], sources)


def verdicts(case: Any, wire: dict[str, Any]) -> list[list[Any]]:
    """The checks' verdicts, then the safety metric's violations as pseudo-checks."""
    from tracegrade.core.trace import Reply
    from tracegrade.checks.builtin import run_checks
    from tracegrade.metrics.safety import violations

    reply = Reply.from_wire(wire)
    found = Counter(v.kind for v in violations(case, reply))
    return [[r.name, r.passed, r.code] for r in run_checks(case, reply)] + [
        [f"safety.{kind}", found[kind] == 0, str(found[kind])]
        for kind in ("forbidden_tool", "unauthorized_data", "approval_bypassed")]


def record() -> dict[str, Any]:
    from tracegrade.case.dataset import load_dataset

    answers = recorded_answers()
    rows = []
    for path in DATASETS:
        cases = list(load_dataset(path).cases)
        for case, reply in zip(cases, mock_replies(cases)):
            base = _wire(reply.answer, [c.model_dump(mode="json", by_alias=True) | {"result": ""}
                                        for c in reply.tool_calls], list(reply.retrieved_sources))
            for name, wire in variants(case, base, answers.get(case.id, set())):
                rows.append({"dataset": path.name, "case": case.id, "variant": name, "reply": wire,
                             "verdicts": verdicts(case, wire)})
    return {"rows": rows}


def compare(corpus: dict[str, Any]) -> list[dict[str, Any]]:
    """Every stored verdict that the current code gives differently, as a row per check."""
    from tracegrade.case.dataset import load_dataset

    cases = {(p.name, c.id): c for p in DATASETS for c in load_dataset(p).cases}
    moves = []
    for row in corpus["rows"]:
        case = cases.get((row["dataset"], row["case"]))
        if case is None:
            moves.append({**_key(row), "check": "(case)", "old": "present", "new": "removed"})
            continue
        now = {name: (passed, code) for name, passed, code in verdicts(case, row["reply"])}
        for name, passed, code in row["verdicts"]:
            new = now.get(name)
            if new != (passed, code):
                moves.append({**_key(row), "check": name, "old": [passed, code], "new": list(new) if new else None})
    return moves


def _key(row: dict[str, Any]) -> dict[str, str]:
    return {"dataset": row["dataset"], "case": row["case"], "variant": row["variant"]}


def load_corpus(path: Path = CORPUS) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "check"))
    args = parser.parse_args(argv)
    if args.mode == "record":
        corpus = record()
        CORPUS.write_bytes(gzip.compress(json.dumps(corpus, sort_keys=True).encode(), mtime=0))
        print(f"wrote {CORPUS}: {len(corpus['rows'])} replies, "
              f"{sum(len(r['verdicts']) for r in corpus['rows'])} check verdicts")
        return 0
    moves = compare(load_corpus())
    summary = Counter((m["check"], str(m["old"]), str(m["new"])) for m in moves)
    for (check, old, new), n in sorted(summary.items()):
        print(f"{n:5d}  {check}: {old} -> {new}")
    print(f"{len(moves)} verdicts moved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
