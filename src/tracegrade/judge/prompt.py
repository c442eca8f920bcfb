"""What the judge is shown: the evidence sections under the rubric's headings, then the question.

    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.trace import Reply
    >>> texts = section_texts(GoldenCase(id="c", question="Capital of France?"), Reply(answer="Paris."))
    >>> print(evidence_text({"question": "Q", "context": "SEEN", "answer": "A"}, texts, ["question", "context", "answer"]))
    Q:
    Capital of France?
    <BLANKLINE>
    SEEN:
    (none)
    <BLANKLINE>
    A:
    Paris.

WHY the evidence first and the question last: every question about one
answer then starts with the same tokens, so a provider with a prompt cache
(llama.cpp's KV cache, OpenAI's prefix cache) evaluates the evidence once per
answer, not once per question.
"""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase

# Shown as "(none)" when empty: that the assistant saw no context is itself evidence.
ALWAYS_SHOWN = ("question", "context", "tools", "answer")
# WHY "(none)" for one of these only when the other is empty as well: "it called no tool"
# beside a context it did read tells the judge nothing, and costs tokens on every question.
SEEN = ("context", "tools")
# WHY the yes/no format in the system message, not after each question: it is the
# same for every question, so the prompt cache holds it; a scale question still says
# what its digits mean, right after the question.
YES_NO = "Answer each question with Yes or No."
ANSWER_FORMAT = {"yesNo": "", "checklist": "", "scale": " Answer with one digit from 1 (worst) to 5 (best)."}


def tool_calls_text(reply: Reply) -> str:
    """Each tool call with its arguments, status and result, one line each, as every judge sees them.

        >>> from tracegrade.core.trace import ToolCall
        >>> print(tool_calls_text(Reply(answer="", tool_calls=(
        ...     ToolCall(name="getOrder", arguments={"id": "A1", "items": [2]}, result="Shipped."),
        ...     ToolCall(name="refund", arguments={}, result="not allowed", status="error")))))
        getOrder(id="A1", items=[2]): Shipped.
        refund() [error]: not allowed

    WHY a call's form and not its JSON, and the status only when it is not "ok": the
    braces, the bullet and "-> [ok]" told the model nothing and cost ~5 prompt tokens a
    call on every question that shows the tools (`git show 1b5ab6e:bench/README.md`, "The judge on the local model").
    """
    return "\n".join(f"{c.name}({_arguments(c.arguments)}){'' if c.status == 'ok' else f' [{c.status}]'}: {c.result}"
                     for c in reply.tool_calls)


def _arguments(arguments: Mapping[str, object]) -> str:
    return ", ".join(f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in arguments.items())


def section_texts(case: GoldenCase, reply: Reply) -> dict[str, str]:
    """Every section's text for one answer ("" when the case or reply has none)."""
    return {
        "question": case.question,
        "history": "\n".join(f"{t.role}: {t.content}" for t in case.history),
        "context": reply.context,
        "tools": tool_calls_text(reply),
        "reference": case.golden_answer,
        "expected": case.expected_behaviour,
        "answer": reply.answer,
    }


def evidence_text(headings: Mapping[str, str], texts: Mapping[str, str], sections: Sequence[str]) -> str:
    """The sections in ``headings`` order that ``sections`` names, under their headings."""
    saw_some = any(texts.get(name) for name in SEEN if name in sections)
    parts = []
    for name, heading in headings.items():
        if name not in sections:
            continue
        text = texts.get(name, "")
        if text or (name in ALWAYS_SHOWN and not (name in SEEN and saw_some)):
            parts.append(f"{heading}:\n{text or '(none)'}")
    return "\n\n".join(parts)


def system_prompt(instructions: str) -> str:
    """The rubric's instructions and the yes/no answer format: one system message for every question."""
    return f"{instructions.strip()}\n{YES_NO}"


def question_prompt(evidence: str, question: str, kind: str) -> str:
    """One question about the evidence, last, with a scale's answer format."""
    return f"{evidence}\n\n{question.strip()}{ANSWER_FORMAT[kind]}"
