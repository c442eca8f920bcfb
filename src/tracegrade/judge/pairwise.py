"""Pairwise comparison of two runs: which answer to the same question is better?

    >>> resolve("A", "B")   # first order prefers run A's answer, second order too
    'a'
    >>> resolve("A", "A")   # each order prefers whatever came first: position, not content
    'tie'

The judge sees the two answers anonymised (labelled A and B, no run or model
names) and picks A, B or tie with a reason, under a JSON Schema. Every pair is
judged twice, once in each order. A verdict counts only when both orders pick
the same *answer*; otherwise the pair is a tie. How often the pick followed the
*position* instead (A both times, or B both times) is the position flip rate:
100% means the judge never looked at the content.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from tracegrade.judge.agreement import sign_test_p
from tracegrade.case.schema import GoldenCase
from tracegrade.core.errors import JudgeReplyError
from tracegrade.judge.prompt import tool_calls_text
from tracegrade.judge.rubric import rubric_hash
from tracegrade.judge.scoring import ask_json
from tracegrade.models import ChatModel, Message
from tracegrade.core.results import CaseResult, Run
from tracegrade.core.trace import Reply
from tracegrade import defaults

DEFAULT_PAIRWISE_RUBRIC = defaults.path("pairwise-rubric.md")
Pick = Literal["A", "B", "tie"]
Outcome = Literal["a", "b", "tie"]  # in run terms: run A's answer, run B's answer, neither

PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["A", "B", "tie"]},
        "reason": {"type": "string", "maxLength": 300},
    },
    "required": ["winner", "reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Preference:
    winner: Pick  # a position: the answer shown as A, or as B
    reason: str


@dataclass(frozen=True)
class PairVerdict:
    case_id: str
    question: str
    forward: Preference | None = None  # run A's answer shown as A
    backward: Preference | None = None  # run B's answer shown as A
    identical: bool = False  # the same text: a tie without asking
    error: str = ""  # why the judge gave no usable pick in some order

    @property
    def judged(self) -> bool:
        return self.forward is not None and self.backward is not None

    @property
    def outcome(self) -> Outcome:
        if self.forward is None or self.backward is None:  # not judged in both orders
            return "tie"
        return resolve(self.forward.winner, self.backward.winner)

    @property
    def followed_position(self) -> bool:
        """Both orders picked the same position, so the verdict flipped with the order."""
        if self.forward is None or self.backward is None:  # not judged in both orders
            return False
        return self.forward.winner == self.backward.winner != "tie"


@dataclass(frozen=True)
class PairwiseReport:
    run_a: str
    run_b: str
    judge_model: str
    rubric_hash: str
    verdicts: tuple[PairVerdict, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (case id, why it could not be compared)

    @property
    def wins(self) -> int:
        return sum(v.outcome == "a" for v in self.verdicts)

    @property
    def losses(self) -> int:
        return sum(v.outcome == "b" for v in self.verdicts)

    @property
    def ties(self) -> int:
        return sum(v.outcome == "tie" for v in self.verdicts)

    @property
    def judged(self) -> list[PairVerdict]:
        return [v for v in self.verdicts if v.judged]

    @property
    def flip_rate(self) -> float | None:
        judged = self.judged
        return sum(v.followed_position for v in judged) / len(judged) if judged else None

    @property
    def p_value(self) -> float:
        return sign_test_p(self.wins, self.losses)

    def to_json(self) -> dict[str, Any]:
        def pick(p: Preference | None) -> dict[str, str] | None:
            return {"winner": p.winner, "reason": p.reason} if p else None

        return {
            "runA": self.run_a, "runB": self.run_b, "judgeModel": self.judge_model, "rubricHash": self.rubric_hash,
            "wins": self.wins, "ties": self.ties, "losses": self.losses, "flipRate": self.flip_rate,
            "signTestP": self.p_value,
            "pairs": [{"caseId": v.case_id, "outcome": v.outcome, "identical": v.identical, "error": v.error,
                       "aFirst": pick(v.forward), "bFirst": pick(v.backward)} for v in self.verdicts],
            "skipped": [{"caseId": c, "reason": r} for c, r in self.skipped],
        }


def resolve(forward: Pick, backward: Pick) -> Outcome:
    """Run terms from two picks; ``backward`` was made with the answers swapped."""
    if forward == "A" and backward == "B":
        return "a"
    if forward == "B" and backward == "A":
        return "b"
    return "tie"


def parse_preference(text: str) -> Preference:
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise JudgeReplyError(f"not a JSON object: {text[:80]!r}")
    winner = data.get("winner")
    if winner not in ("A", "B", "tie"):
        raise JudgeReplyError(f"winner must be A, B or tie, got {winner!r}")
    reason = data.get("reason", "")
    return Preference(winner, reason.strip() if isinstance(reason, str) else "")


def pairs(run_a: Run, run_b: Run) -> tuple[list[tuple[CaseResult, CaseResult]], list[tuple[str, str]]]:
    """First repetition of every case both runs answered, in run A's order; the rest with the reason."""
    def first(run: Run) -> dict[str, CaseResult]:
        return {r.case_id: r for r in sorted(run.results, key=lambda r: r.repeat) if r.repeat == 0}

    a, b = first(run_a), first(run_b)
    matched, skipped = [], []
    for case_id, left in a.items():
        right = b.get(case_id)
        if right is None:
            skipped.append((case_id, "not in run B"))
        elif left.reply is None or right.reply is None:
            which = "A" if left.reply is None else "B"
            skipped.append((case_id, f"no answer in run {which}: {(left if which == 'A' else right).error}"))
        else:
            matched.append((left, right))
    skipped += [(case_id, "not in run A") for case_id in b if case_id not in a]
    return matched, skipped


def pair_messages(rubric: str, question: str, first: Reply, second: Reply, golden: GoldenCase | None = None) -> list[Message]:
    """The judge's input: the question, each answer with the evidence its agent saw, never a run name."""
    parts = [f"QUESTION:\n{question}"]
    if golden is not None and golden.golden_answer:
        parts.append(f"GOLDEN ANSWER:\n{golden.golden_answer}")
    if _evidence(first) == _evidence(second):
        parts += [f"EVIDENCE BOTH AGENTS SAW:\n{_evidence(first)}", f"ANSWER A:\n{first.answer}",
                  f"ANSWER B:\n{second.answer}"]
    else:
        parts += [f"EVIDENCE FOR ANSWER A:\n{_evidence(first)}", f"ANSWER A:\n{first.answer}",
                  f"EVIDENCE FOR ANSWER B:\n{_evidence(second)}", f"ANSWER B:\n{second.answer}"]
    return [Message("system", rubric), Message("user", "\n\n".join(parts))]


async def compare_runs(
    run_a: Run, run_b: Run, model: ChatModel, rubric: str,
    golden: Mapping[str, GoldenCase] | None = None, concurrency: int = 2, attempts: int = 3,
) -> PairwiseReport:
    """Judge every shared case in both orders and count the verdicts."""
    matched, skipped = pairs(run_a, run_b)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def ask(question: str, first: Reply, second: Reply, case: GoldenCase | None) -> tuple[Preference | None, str]:
        async with gate:
            asked = await ask_json(model, pair_messages(rubric, question, first, second, case), PAIRWISE_SCHEMA,
                                   parse_preference, attempts=attempts)
        return asked.value, asked.problem

    async def judge_pair(left: CaseResult, right: CaseResult) -> PairVerdict:
        a, b = left.reply, right.reply
        assert a is not None and b is not None  # pairs() matches only cases both runs answered
        if a.answer.strip() == b.answer.strip():
            return PairVerdict(left.case_id, left.question, identical=True)
        case = (golden or {}).get(left.case_id)
        (forward, p1), (backward, p2) = await asyncio.gather(ask(left.question, a, b, case),
                                                             ask(left.question, b, a, case))
        return PairVerdict(left.case_id, left.question, forward, backward, error=p1 or p2)

    verdicts = await asyncio.gather(*(judge_pair(left, right) for left, right in matched))
    return PairwiseReport(run_a.manifest.run_id, run_b.manifest.run_id, model.model_id, rubric_hash(rubric),
                          tuple(verdicts), tuple(skipped))


def _evidence(reply: Reply) -> str:
    return f"CONTEXT:\n{reply.context or '(none)'}\nTOOL CALLS AND RESULTS:\n{tool_calls_text(reply) or '(none)'}"


def load_pairwise_rubric(path: str | Path | None = None) -> str:
    return Path(path or DEFAULT_PAIRWISE_RUBRIC).read_text(encoding="utf-8")
