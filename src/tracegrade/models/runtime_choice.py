"""Which runtime answers the judge's one-token questions here: the faster one, measured once per machine.

    >>> faster({"ik": 0.31, "xllamacpp": 0.48})
    'ik'
    >>> faster({"ik": 0.50, "xllamacpp": 0.48})
    'xllamacpp'

ik_llama.cpp's CPU kernels evaluated prompt tokens ~1.5x as fast as xllamacpp's on
one AVX2 machine and no faster on an AVX-512 one (issue 35): which is faster depends
on the CPU and on the two builds, not on anything tracegrade can know in advance.
So at load both evaluate the same short prompt (``models/local.py``), the faster
one is kept, and the choice is cached in ``TRACEGRADE_CACHE_DIR/next-token-runtime.json``
under a key of the CPU's model name and flags and the two runtimes' versions: a
new CPU or an upgraded runtime is measured again, the same machine never twice.
``TRACEGRADE_NEXT_TOKEN=ik|xllamacpp`` skips all this and forces one; deleting the
file measures again (each entry keeps the load average it was measured under).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

IK, XLLAMACPP = "ik", "xllamacpp"
CACHE_FILE = "next-token-runtime.json"
PACKAGES = {IK: "ik-llama-cpp-python", XLLAMACPP: "xllamacpp"}
# WHY a margin for ik: it is the second runtime in the process (memory, a second
# model load); it must be measurably faster to be worth it, not faster by timer noise.
MARGIN = 0.95
# How ik_llama.cpp loads the weights (models/next_token.py), part of the cache key: a
# machine that measured ik before its weights were repacked at load is measured again.
IK_LOAD = "repacked"


@dataclass(frozen=True)
class Choice:
    """The runtime picked, the probe's seconds per runtime, and whether they came from the cache."""

    runtime: str
    seconds: Mapping[str, float]
    cached: bool

    def said(self, cache: Path) -> str:
        """The one line a run prints at load."""
        name = {IK: "ik_llama.cpp", XLLAMACPP: "xllamacpp"}[self.runtime]
        times = ", ".join(f"{r} {s * 1000:.0f} ms" for r, s in self.seconds.items())
        where = f"measured on this machine before ({cache})" if self.cached else f"measured now, kept in {cache}"
        return f"tracegrade: the judge's one-token questions run on {name}, the faster here ({times}; {where})"


def faster(seconds: Mapping[str, float]) -> str:
    """ik when it took under ``MARGIN`` of xllamacpp's time on the same prompt, else xllamacpp."""
    return IK if seconds[IK] < MARGIN * seconds[XLLAMACPP] else XLLAMACPP


def machine_key(cpuinfo: str | None = None, versions: Mapping[str, str] | None = None, ik_load: str = IK_LOAD) -> str:
    """The CPU's model name and flags, the runtimes' versions and how ik loads, hashed: what decides which is faster."""
    text = cpuinfo if cpuinfo is not None else _cpuinfo()
    lines = text.splitlines()
    model = next((line.partition(":")[2].strip() for line in lines if line.startswith("model name")), "")
    flags = sorted(next((line.partition(":")[2] for line in lines if line.startswith("flags")), "").split())
    shown = versions if versions is not None else runtime_versions()
    described = json.dumps({"cpu": model, "flags": flags, "cores": os.cpu_count(), "versions": dict(shown),
                            "ikLoad": ik_load},
                           sort_keys=True)
    return hashlib.sha256(described.encode()).hexdigest()[:16]


def runtime_versions() -> dict[str, str]:
    versions = {}
    for runtime, package in PACKAGES.items():
        try:
            versions[runtime] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[runtime] = "missing"
    return versions


def choose(probe: Callable[[], Mapping[str, float]], cache: Path, key: str) -> Choice:
    """The cached choice for ``key``, else ``probe()``'s faster runtime, written to ``cache``."""
    known = _read(cache).get(key)
    if isinstance(known, dict) and known.get("runtime") in (IK, XLLAMACPP):
        return Choice(known["runtime"], dict(known.get("seconds") or {}), cached=True)
    seconds = dict(probe())
    choice = Choice(faster(seconds), seconds, cached=False)
    # WHY the load kept: a probe on a busy machine is slower on both runtimes, not always alike;
    # the entry says what it was measured under (delete the file to measure again).
    _write(cache, key, {"runtime": choice.runtime, "seconds": seconds, "versions": runtime_versions(),
                        "load": os.getloadavg()[0], "cpus": os.cpu_count()})
    return choice


def _read(cache: Path) -> dict[str, object]:
    """The cache's entries; none when it is missing or unreadable (a bad file is measured over)."""
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(cache: Path, key: str, entry: Mapping[str, object]) -> None:
    """Adds ``entry`` under ``key``, atomically. WHY best effort: a read-only cache directory
    must cost a probe per load, not a failed run."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        data = {**_read(cache), key: entry}
        with tempfile.NamedTemporaryFile("w", dir=cache.parent, delete=False, suffix=".tmp", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(f.name, cache)
    except OSError:
        pass


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
