"""The judge: a rubric's metrics -> one MetricScore each, scored or not scored with the reason.

    >>> import asyncio, math
    >>> from tracegrade.case.schema import GoldenCase
    >>> from tracegrade.core.trace import Reply
    >>> from tracegrade.judge.rubric import parse_rubric
    >>> from tracegrade.models import ChatResponse
    >>> from tracegrade.models.scripted import ScriptedModel
    >>> rubric = parse_rubric('''---
    ... metrics:
    ...   - {name: correctness, measures: right, yesNo: Does it agree with the reference, needsReference: true}
    ...   - {name: faithfulness, measures: grounded, code: grounding, evidence: [question, context, tools]}
    ... ---
    ... Judge the answer.''')
    >>> yes = ChatResponse(text="Yes", top_logprobs=((("Yes", math.log(0.8)), ("No", math.log(0.2))),))
    >>> judge = Judge(ScriptedModel([yes], token_probabilities=True), rubric)
    >>> case = GoldenCase(id="c", question="How long?", goldenAnswer="30 days.")
    >>> scores = asyncio.run(judge.score(case, Reply(answer="60 days.", context="Returns: 30 days.")))
    >>> [(m.name, round(m.value, 2), m.source) for m in scores.metrics]
    [('correctness', 0.8, 'probability'), ('faithfulness', 0.0, 'code')]

Three sources, one result per metric:

- **code**: a ``code: grounding`` metric checks the answer's specific claims
  against its evidence sections, a ``code: coverage`` metric the reference
  answer's facts against the answer (``judge.grounding``); no model call;
- **probability** (the provider returns token probabilities: the local model,
  an OpenAI-compatible endpoint with ``TRACEGRADE_JUDGE_LOGPROBS=1``): one call
  per question, one output token, P(yes) or the expected digit; the questions
  of one answer share the evidence as a prompt prefix, asked one after the other
  so the provider's cache holds it (on the local model with no other answer's
  question between them, whatever the run's concurrency: models/base.py answer_turn);
- **json** (every other provider): one call with all questions, a strict-JSON
  reply checked in code, bounded retries.

A metric that needs the reference answer is not scored on a case without one;
a question the model could not answer (a failed call, no probabilities, an
unusable reply) leaves its metric not scored with the reason. Only when no
metric at all was scored is the outcome Unscored.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal, Mapping, Sequence

from tracegrade.core.errors import JudgeReplyError
from tracegrade.core.results import JudgeOutcome, MetricScore, Scores, Unscored
from tracegrade.core.trace import Reply
from tracegrade.case.schema import GoldenCase
from tracegrade.judge import cascade, json_scores
from tracegrade.judge.combine import combined
from tracegrade.judge.grounding import Claim, claims, known_in, ungrounded
from tracegrade.judge.overlap import word_overlap
from tracegrade.judge.relevant import relevant_parts
from tracegrade.judge.probability import combine, expected_digit, p_yes
from tracegrade.judge.prompt import evidence_text, question_prompt, section_texts, system_prompt, tool_calls_text
from tracegrade.judge.rubric import DEFAULT_RUBRIC, MetricSpec, Rubric, load_rubric, parse_rubric, rubric_hash
from tracegrade.models import ChatModel, ChatOptions, Message
from tracegrade.models.base import answer_turn

__all__ = ["DEFAULT_RUBRIC", "Judge", "ask_json", "load_rubric", "parse_rubric", "rubric_hash", "tool_calls_text"]

Method = Literal["auto", "probability", "json"]
TOP_TOKENS = 20  # alternatives asked per output token (OpenAI's maximum)


@dataclass
class _Tally:
    """Tokens, attempts and retries of the model calls for one answer (local to one ``score`` call)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    attempts: int = 0
    retries: int = 0

    def add(self, response: Any) -> None:
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        self.cached_tokens += getattr(response, "cached_tokens", 0)
        self.retries += response.retries


@dataclass(frozen=True)
class Judge:
    """Scores one answer on every metric of ``rubric``.

    ``attempts`` bounds how often a failed call or unusable reply is retried;
    ``method`` forces the probability or JSON way (default: probabilities when
    the model offers them); ``thresholds`` and ``not_gating`` come from a
    calibration (a fitted pass threshold per metric; metrics not allowed to gate).
    ``ask_decided`` asks the model even where code has already decided a metric
    (a metric it requires failed, a specific claim is not in the evidence, the
    rubric's ``cascade`` settles it without the model): calibration does, to
    measure the model's part on its own; a run does not, and saves those calls
    (a wrong answer costs one question instead of four). ``cascade`` False asks
    the model on every answer a rubric's ``cascade`` would settle without it
    (default: ``TRACEGRADE_JUDGE_CASCADE``, on unless it says off).
    """

    model: ChatModel
    rubric: Rubric
    attempts: int = 3
    temperature: float = 0.0
    seed: int = 0  # added to each attempt's seed: calibration samples a judge k times with k seeds
    method: Method = "auto"
    thresholds: Mapping[str, float] = field(default_factory=dict)
    not_gating: frozenset[str] = frozenset()
    ask_decided: bool = False
    cascade: bool = field(default_factory=cascade.enabled)

    @property
    def rubric_hash(self) -> str:
        return self.rubric.hash

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.rubric.metrics)

    @property
    def uses_probabilities(self) -> bool:
        return self.method == "probability" or (self.method == "auto" and getattr(self.model, "token_probabilities", False))

    async def score(self, case: GoldenCase, reply: Reply) -> JudgeOutcome:
        texts = section_texts(case, reply)
        done: dict[str, MetricScore] = {}
        asked: list[MetricSpec] = []
        free: set[str] = set()  # metrics asked without a reference answer
        no_reference = not case.golden_answer.strip()
        for spec in self.rubric.metrics:
            source = "code" if spec.kind == "code" else self._source()
            if spec.needs_evidence and not saw_evidence(texts):
                done[spec.name] = self._result(spec, None, source, NO_EVIDENCE)
            elif spec.needs_reference and no_reference and spec.reference_free is not None:
                asked.append(reference_free(spec))
                free.add(spec.name)
            elif spec.needs_reference and no_reference:
                done[spec.name] = self._result(spec, None, source, "not scored: the case has no reference answer")
            elif spec.code == "coverage":
                done[spec.name] = self._coverage(spec, texts)
            elif spec.kind == "code":
                done[spec.name] = self._grounding(spec, texts)
            else:
                asked.append(spec)
        if not self.ask_decided:
            asked = self._undecided(asked, done, texts)
        tally, problem, reason = _Tally(), "", ""
        if asked:
            ask = self._by_probability if self.uses_probabilities else self._by_json
            results, problem, reason = await ask(asked, shown_to_model(texts, asked), tally)
            done.update(results)
        for spec in asked:
            if spec.model_and_code and done[spec.name].scored:
                done[spec.name] = self._model_and_code(spec, done[spec.name], texts)
            elif spec.name in free and done[spec.name].scored:
                done[spec.name] = replace(done[spec.name], detail=_joined(REFERENCE_FREE, done[spec.name].detail))
        metrics = tuple(self._required(done, m) for m in self.rubric.metrics)
        counts = (tally.input_tokens, tally.output_tokens, max(tally.attempts, 1), tally.retries, tally.cached_tokens)
        if not any(m.scored for m in metrics):
            return Unscored(problem or "; ".join(f"{m.name}: {m.detail}" for m in metrics), *counts)
        return Scores(metrics, reason or (f"not scored: {problem}" if problem else ""), *counts)

    def _undecided(self, asked: list[MetricSpec], done: dict[str, MetricScore],
                   texts: Mapping[str, str]) -> list[MetricSpec]:
        """The questions whose answer can still change a verdict; the others are settled
        by code here, into ``done``, without a model call."""
        undecided = []
        for spec in asked:
            failed = [name for name in spec.requires if name in done and done[name].passed is False]
            missing = self._ungrounded(spec, texts)[1] if spec.model_and_code else []
            best = self._best_possible(spec, texts, missing) if missing else 0.0
            if failed:
                done[spec.name] = replace(self._result(spec, spec.range[0], "code", NOT_ASKED), parts=())
            elif (settled := self._settled(spec, texts)) is not None:
                # WHY before the bound below: one value for every answer the model is not asked
                # about (the cascade's, at the typical P(yes)), not an upper bound for some of them
                done[spec.name] = settled
            elif missing and best < self.thresholds.get(spec.name, spec.threshold):
                share = self._claim_share(spec, texts, missing)
                at_most = f"at most {best:.2f} whatever the model says; " if spec.weights else ""
                detail = (f"code {share:.2f}; not in the evidence: {_named(missing)}; {at_most}"
                          "failed: code (the model not asked)")
                done[spec.name] = replace(self._result(spec, best, "code", detail), parts=(("code", share),))
            else:
                undecided.append(spec)
        return undecided

    def _settled(self, spec: MetricSpec, texts: Mapping[str, str]) -> MetricScore | None:
        """The metric scored by its cheap parts alone where the rubric's cascade says they settle
        it (judge/cascade.py), else None: the model is asked."""
        rule = self._rule(spec)
        if rule is None or spec.weights is None:
            return None
        _, missing = self._ungrounded(spec, texts)
        cheap = [(n, v) for n, v in self._parts(spec, texts, missing, 0.0) if n != cascade.MODEL]
        vetoed = self._vetoed(spec, missing)
        value = cascade.without_model(spec.weights, rule, dict(cheap)) if vetoed else \
            cascade.decided(spec.weights, rule, dict(cheap))
        if value is None:
            return None
        how = VETOED if vetoed else _settled_how(value, rule)
        value = self._capped(spec, value) if vetoed else value
        detail = f"{self._said(spec, cheap, missing, value)}; {how} (the model not asked)"
        return replace(self._result(spec, value, "code", detail), parts=tuple(cheap))

    def _vetoed(self, spec: MetricSpec, missing: Sequence[Claim]) -> bool:
        """A claim of a kind the rubric's ``veto`` names is not in the evidence."""
        return any(c.kind in spec.veto for c in missing)

    def _capped(self, spec: MetricSpec, value: float) -> float:
        """A vetoed value: under the threshold, in the order the unvetoed values had (values are 0..1)."""
        return value * (self.thresholds.get(spec.name, spec.threshold) - VETO_MARGIN)

    def _said(self, spec: MetricSpec, parts: Sequence[tuple[str, float]], missing: Sequence[Claim],
              value: float) -> str:
        """The parts, the claims not found, and which parts failed when the value fails."""
        threshold = self.thresholds.get(spec.name, spec.threshold)
        failed = [name for name, v in parts if (v < 1.0 if name == "code" else v < threshold)]
        said = [f"{name} {v:.2f}" for name, v in parts]
        if missing:
            said.append(f"not in the evidence: {_named(missing)}")
        if value < threshold and failed:
            said.append(f"failed: {', '.join(failed)}")
        return "; ".join(said)

    def _rule(self, spec: MetricSpec) -> Mapping[str, float] | None:
        """The metric's cascade rule, when this judge applies it."""
        return spec.cascade if self.cascade and spec.cascade else None

    # --- the three sources ------------------------------------------------------------

    def _grounding(self, spec: MetricSpec, texts: Mapping[str, str]) -> MetricScore:
        _, missing = self._ungrounded(spec, texts)
        if missing:
            return self._result(spec, 0.0, "code", f"not in the evidence: {_named(missing)}")
        return self._result(spec, 1.0, "code", "every specific claim is in the evidence")

    def _ungrounded(self, spec: MetricSpec, texts: Mapping[str, str]) -> tuple[list[str], list[Claim]]:
        """The evidence sections the metric reads, and the answer's claims they do not hold."""
        sources = evidence_sources(self.rubric, spec, texts)
        # WHY names also from the reference answer and the rubric's known names: a name a
        # right answer uses (the assistant's own, its organisation's) is expected, not invented.
        names = [*self.rubric.known, texts["reference"]]
        return sources, ungrounded(texts["answer"], sources, spec.claims, names)

    def _model_and_code(self, spec: MetricSpec, model: MetricScore, texts: Mapping[str, str]) -> MetricScore:
        """With fitted ``weights``, the parts combined by them (judge/combine.py). Otherwise the
        model's P(yes), times (2 + word overlap) / 3 when overlap is a part, or 0 when any
        specific claim of the answer is not in the evidence. WHY this shape: the model's no
        fails the metric whatever the words share (overlap can take at most a third off a yes,
        never make a no pass; a refusal or a paraphrase shares few words and is still faithful), and a misstated number or name fails it whatever the model says (a small
        model says yes to nearly anything) at any fitted threshold; the code part reports the
        share of claims found."""
        _, missing = self._ungrounded(spec, texts)
        parts = self._parts(spec, texts, missing, float(model.value or 0.0))
        shares = dict(parts)
        rule = self._rule(spec) if spec.weights else None
        vetoed = self._vetoed(spec, missing)
        settled = None
        if spec.weights and rule:
            settled = cascade.without_model(spec.weights, rule, shares) if vetoed else \
                cascade.decided(spec.weights, rule, shares)
        if settled is not None and spec.weights:
            # WHY the cascade's value though the model was asked (calibration asks every answer):
            # calibration measures the value a run gives, and a run does not ask here.
            assert rule is not None
            how = VETOED if vetoed else _settled_how(settled, rule)
            settled = self._capped(spec, settled) if vetoed else settled
            said = self._said(spec, parts, missing, settled)
            return replace(model, value=settled, detail=_joined(f"{said}; {how}", model.detail), parts=tuple(parts))
        if spec.weights is not None:
            value = combined(spec.weights, shares)
            value = self._capped(spec, value) if vetoed else value
        else:
            value = shares["model"] * (2 + shares.get("overlap", 1.0)) / 3 if not missing else 0.0
        return replace(model, value=value, detail=_joined(self._said(spec, parts, missing, value), model.detail),
                       parts=tuple(parts))

    def _parts(self, spec: MetricSpec, texts: Mapping[str, str], missing: Sequence[Claim],
               p_yes: float) -> list[tuple[str, float]]:
        """The parts of a model-and-code metric: the model's P(yes), the code's share of claims
        found, and word overlap when the rubric asks for it or weighs it."""
        parts = [("model", p_yes), ("code", self._claim_share(spec, texts, missing))]
        if spec.overlap or (spec.weights or {}).get("overlap", 0.0) > 0:
            parts.append(("overlap", evidence_overlap(self.rubric, spec, texts)))
        return parts

    def _best_possible(self, spec: MetricSpec, texts: Mapping[str, str], missing: Sequence[Claim]) -> float:
        """The highest value the metric can reach, whatever the model says. WHY it may skip the
        model: every weight is >= 0 (monotone), so the value at P(yes) = 1 bounds every other;
        without weights a missing claim is the veto (0)."""
        if spec.weights is None:
            return 0.0
        return combined(spec.weights, dict(self._parts(spec, texts, missing, 1.0)))

    def _claim_share(self, spec: MetricSpec, texts: Mapping[str, str], missing: Sequence[Claim]) -> float:
        """The share of the answer's distinct specific claims found in the evidence.
        WHY distinct keys: "$5" and "5 USD" are one claim stated twice, and both unheld
        (ungrounded names each wording) must not take the share below 0."""
        stated = {(c.kind, c.key) for c in claims(texts["answer"], spec.claims)}
        return 1 - len({(c.kind, c.key) for c in missing}) / len(stated) if stated else 1.0

    def _coverage(self, spec: MetricSpec, texts: Mapping[str, str]) -> MetricScore:
        """The share (0..1) of the reference's specific facts the answer states.
        WHY not the facts the question states: the user gave them (the order id they asked about)."""
        asked, stated = known_in(texts["question"]), known_in(texts["answer"])
        facts = {(c.kind, c.key): c for c in claims(texts["reference"], spec.claims) if not asked.holds(c)}
        if not facts:
            return self._result(spec, 1.0, "code", "the reference answer states no specific fact beyond the question")
        missing = [c for c in facts.values() if not stated.holds(c)]
        if missing:
            return self._result(spec, 1 - len(missing) / len(facts), "code", f"the answer leaves out {_named(missing)}")
        return self._result(spec, 1.0, "code", "every specific fact of the reference answer is in the answer")

    async def _by_probability(self, specs: Sequence[MetricSpec], texts: Mapping[str, str],
                              tally: _Tally) -> tuple[dict[str, MetricScore], str, str]:
        # WHY grouped by the sections shown (in rubric order otherwise): questions with
        # the same evidence follow each other, so each finds the previous one's prefix cached.
        groups: dict[tuple[str, ...], list[MetricSpec]] = {}
        for spec in specs:
            groups.setdefault(tuple(self.rubric.sections(spec)), []).append(spec)
        ordered = [spec for group in groups.values() for spec in group]
        results, problems = {}, []
        asked: dict[str, tuple[list[float], str]] = {}
        async with answer_turn(self.model):  # WHY: no other answer's question between these (models/base.py)
            for spec in ordered:
                asked[spec.name] = await self._ask_metric(spec, texts, tally)
        for spec in ordered:
            values, problem = asked[spec.name]
            if problem:
                problems.append(f"{spec.name}: {problem}")
                results[spec.name] = self._failed(spec, "probability", problem)
            else:
                value = combine(values, spec.rule) if spec.kind == "checklist" else values[0]
                results[spec.name] = self._result(spec, value, "probability", _how(spec, values))
        return results, "; ".join(problems), ""

    async def _ask_metric(self, spec: MetricSpec, texts: Mapping[str, str], tally: _Tally) -> tuple[list[float], str]:
        """A metric's questions, in order, until one is not answered: the values and that problem."""
        evidence = evidence_text(self.rubric.headings, texts, self.rubric.sections(spec))
        values: list[float] = []
        for question in spec.questions:
            value, problem = await self._ask_one(evidence, question, spec.kind, tally)
            if value is None:
                return values, problem
            values.append(value)
        return values, ""

    async def _ask_one(self, evidence: str, question: str, kind: str, tally: _Tally) -> tuple[float | None, str]:
        messages = [Message("system", system_prompt(self.rubric.instructions)),
                    Message("user", question_prompt(evidence, question, kind))]
        problem = ""
        for attempt in range(1, self.attempts + 1):
            options = ChatOptions(temperature=self.temperature, max_tokens=1, seed=self.seed + attempt,
                                  logprobs=TOP_TOKENS)
            tally.attempts = max(tally.attempts, attempt)
            try:
                response = await self.model.complete(messages, options)
            except Exception as exc:  # the judge-call boundary
                problem = f"judge call failed: {type(exc).__name__}: {exc}"
                continue
            tally.add(response)
            if not response.top_logprobs:
                return None, "the provider returned no token probabilities"
            first = response.top_logprobs[0]
            value = expected_digit(first) if kind == "scale" else p_yes(first)
            if value is not None:
                return value, ""
            expected = "a digit 1-5" if kind == "scale" else "Yes or No"
            top = max(first, key=lambda alt: alt[1])[0] if first else ""
            problem = f"the model did not answer {expected} (top token {top!r})"
            return None, problem
        return None, problem

    async def _by_json(self, specs: Sequence[MetricSpec], texts: Mapping[str, str],
                       tally: _Tally) -> tuple[dict[str, MetricScore], str, str]:
        sections = [s for s in self.rubric.headings if any(s in spec.evidence for spec in specs)]
        form = json_scores.form(tuple(specs))
        user = f"{evidence_text(self.rubric.headings, texts, sections)}\n\n{form.instructions}"
        messages = [Message("system", self.rubric.instructions), Message("user", user)]
        asked = await ask_json(self.model, messages, form.schema, form.parse_reply, attempts=self.attempts,
                               temperature=self.temperature, max_tokens=form.max_tokens, seed=self.seed)
        tally.input_tokens += asked.input_tokens
        tally.output_tokens += asked.output_tokens
        tally.attempts = max(tally.attempts, asked.attempts)
        tally.retries += asked.retries
        if asked.value is None:
            failed = {s.name: self._failed(s, "json", asked.problem) for s in specs}
            return failed, asked.problem, ""
        values, reason = asked.value
        return {s.name: self._result(s, values[s.name], "json", "") for s in specs}, "", reason

    def _required(self, done: Mapping[str, MetricScore], spec: MetricSpec) -> MetricScore:
        """The metric, failed (value 0) when a metric it requires failed, saying which and why."""
        own = done[spec.name]
        failed = [done[name] for name in spec.requires if done[name].passed is False]
        if not spec.requires or not own.scored:
            return own
        # WHY the parts: calibration measures the model's own score apart from what code
        # decided through the required metrics (docs/judge.md, "where the signal comes from").
        parts = () if own.detail == NOT_ASKED else (
            own.parts or (("model" if own.source != "code" else "code", float(own.value or 0.0)),))
        parts = (*parts, ("requires", 0.0 if failed else 1.0))
        if not failed:
            return replace(own, parts=parts)
        why = "; ".join(f"{m.name} failed: {m.detail}" for m in failed)
        return replace(own, value=own.low, source="code", detail=f"requires {why}", parts=parts)

    # --- helpers ------------------------------------------------------------------------

    def _source(self) -> str:
        return "probability" if self.uses_probabilities else "json"

    def _result(self, spec: MetricSpec, value: float | None, source: str, detail: str,
                if_not_scored: str | None = None) -> MetricScore:
        low, high = spec.range
        return MetricScore(spec.name, value, self.thresholds.get(spec.name, spec.threshold), source, detail, low, high,
                           spec.gate and spec.name not in self.not_gating, if_not_scored or spec.if_not_scored)

    def _failed(self, spec: MetricSpec, source: str, problem: str) -> MetricScore:
        """The judge could not answer: the case is unscored whatever the metric's rule, which
        is for a metric that does not apply (no reference). WHY: a judge endpoint that is
        down must not let every case pass on the checks alone."""
        return self._result(spec, None, source, f"not scored: {problem}", if_not_scored="unscored")


VETOED = "vetoed: a claim of a kind the rubric's veto names is not in the evidence"
VETO_MARGIN = 0.01  # a vetoed value is at most threshold - this

NO_EVIDENCE = "n/a: the assistant saw no evidence (no retrieved text, no tool call); not a pass, not a fail"
REFERENCE_FREE = "reference-free"
NOT_ASKED = "not asked: a metric it requires failed"


def saw_evidence(texts: Mapping[str, str]) -> bool:
    """The assistant was shown something to ground an answer in: a context or a tool call."""
    return bool(texts["context"].strip() or texts["tools"].strip())


def evidence_sources(rubric: Rubric, spec: MetricSpec, texts: Mapping[str, str]) -> list[str]:
    """The texts of the evidence sections ``spec`` reads (not the answer), in the rubric's order."""
    return [texts[s] for s in rubric.headings if s in spec.evidence and s != "answer" and texts[s]]


GROUNDS = ("context", "tools")  # what the assistant was given to answer from


def evidence_overlap(rubric: Rubric, spec: MetricSpec, texts: Mapping[str, str]) -> float:
    """The overlap part: the share of the answer's content words in the context and tool results
    the metric reads. WHY not the question and earlier turns: a reply that repeats the user's
    words is not supported by them; measured on public labels of real replies (FaithDial's
    audit) overlap ranks attributable replies above the rest at AUC 0.881 against the
    grounds alone, 0.865 with the question counted as evidence, and better on each of the
    project's own sets too (bench/results/faithfulness-natural-fit.txt)."""
    grounds = [texts[s] for s in GROUNDS if s in spec.evidence and texts[s]]
    return word_overlap(texts["answer"], grounds)


def reference_free(spec: MetricSpec) -> MetricSpec:
    """The metric as asked without a reference answer: its referenceFree question, shown the
    question, the evidence the assistant saw and the answer instead of the reference."""
    evidence = tuple(dict.fromkeys([*(s for s in spec.evidence if s != "reference"), "context", "tools", "answer"]))
    return spec.model_copy(update={"yes_no": spec.reference_free, "evidence": evidence})


def shown_to_model(texts: Mapping[str, str], specs: Sequence[MetricSpec]) -> dict[str, str]:
    """The sections with long context and tool results cut to the part most like the answer.
    WHY only the sections ``specs`` show: ranking long evidence loads the embeddings model
    and encodes every passage; a section no question shows needs none of it."""
    shown = {section for spec in specs for section in spec.evidence}
    long: dict[str, str] = {s: texts[s] for s in ("context", "tools") if s in shown}
    return {**texts, **relevant_parts(texts["answer"], long)} if long else dict(texts)


def _settled_how(value: float, rule: Mapping[str, float]) -> str:
    side = f"under {rule['low']:.2f}" if value < rule["low"] else f"at or over {rule['high']:.2f}"
    return f"settled without the model: {value:.2f} at P(yes) {rule['model']:.2f}, {side}"


def _named(claims: Sequence[Claim]) -> str:
    return ", ".join(f"{c.text!r} ({c.kind})" for c in claims)


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _how(spec: MetricSpec, values: list[float]) -> str:
    if spec.kind == "scale":
        return f"expected score {values[0]:.2f}"
    if spec.kind == "checklist":
        return f"{spec.rule} of P(yes) " + ", ".join(f"{v:.2f}" for v in values)
    return ""  # a yes/no metric's value is P(yes) itself


@dataclass(frozen=True)
class Asked:
    """What ``ask_json`` got: the parsed value, or None and the last problem."""

    value: Any
    problem: str
    input_tokens: int
    output_tokens: int
    attempts: int
    retries: int


async def ask_json(
    model: ChatModel, messages: list[Message], schema: dict[str, Any], parse: Callable[[str], Any],
    *, attempts: int = 3, temperature: float = 0.0, max_tokens: int = 200, seed: int = 0,
) -> Asked:
    """Ask for a schema-constrained JSON reply until ``parse`` accepts one (it raises
    JudgeReplyError otherwise), at most ``attempts`` times. The scoring judge and
    the pairwise judge share this one loop."""
    tokens_in = tokens_out = retries = 0
    problem = ""
    for attempt in range(1, attempts + 1):
        # WHY a little temperature on retries: at 0 the same input gives the same bad reply.
        options = ChatOptions(json_schema=schema, temperature=temperature if attempt == 1 else max(temperature, 0.3),
                              max_tokens=max_tokens, seed=seed + attempt)
        try:
            response = await model.complete(messages, options)
        except Exception as exc:  # the judge-call boundary
            problem = f"judge call failed: {type(exc).__name__}: {exc}"
            continue
        tokens_in += response.input_tokens
        tokens_out += response.output_tokens
        retries += response.retries
        try:
            value = parse(response.text)
        except JudgeReplyError as exc:
            problem = f"judge reply unusable: {exc}"
            continue
        return Asked(value, "", tokens_in, tokens_out, attempt, retries)
    return Asked(None, problem, tokens_in, tokens_out, attempts, retries)
