"""The peer harnesses' benchmark agent, as a user writes it: the openai SDK, one chat call, the
answer returned. ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` say where it goes (the mock).

    tracegrade run CASES --target plain_agent:answer --checks-only --concurrency 32
"""

from __future__ import annotations

from openai import AsyncOpenAI

client = AsyncOpenAI()


async def answer(question: str) -> str:
    response = await client.chat.completions.create(
        model="mock-agent", messages=[{"role": "user", "content": question}])
    return response.choices[0].message.content or ""
