"""What the judge's second runtime costs in memory: RSS and PSS before and after each runtime loads.

    python bench/model/runtime_memory.py

One process, the embedded model: an agent-style call (xllamacpp), then a judge
question (ik_llama.cpp, models/next_token.py). xllamacpp maps the weights file;
ik_llama.cpp, which once mapped it too (RSS then counted its pages twice), now reads
the weights into memory to repack them. PSS (/proc/self/smaps_rollup) counts a
shared page once, which is what the machine really spends.
"""

from __future__ import annotations

import asyncio
import re

from tracegrade.models.base import ChatOptions, Message
from tracegrade.models.local import local_model


def memory_mb() -> dict[str, int]:
    status = open("/proc/self/status").read()
    rollup = open("/proc/self/smaps_rollup").read()
    found = {key: int(re.search(rf"^{key}:\s+(\d+)", status, re.M).group(1)) // 1024  # type: ignore[union-attr]
             for key in ("VmRSS", "RssAnon", "RssFile")}
    found["Pss"] = int(re.search(r"^Pss:\s+(\d+)", rollup, re.M).group(1)) // 1024  # type: ignore[union-attr]
    return found


def main() -> None:
    model = local_model()
    print("before any model     ", memory_mb())
    asyncio.run(model.complete([Message("user", "Hi")], ChatOptions(max_tokens=5)))
    print("after xllamacpp      ", memory_mb())
    asyncio.run(model.complete([Message("user", "Is it? Yes or No")], ChatOptions(max_tokens=1, logprobs=20)))
    print("after ik_llama.cpp   ", memory_mb(), "(MB)")


if __name__ == "__main__":
    main()
