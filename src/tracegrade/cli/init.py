"""`tracegrade init`: a starter ``evals/`` folder in the user's project."""

from __future__ import annotations

import argparse
import errno
import os
import shutil
from pathlib import Path
from typing import Any

from tracegrade.core.errors import ConfigError

# file written -> the shipped file it copies (package data)
STARTER = {"judge-rubric.md": "judge-rubric.md", "gate.toml": "gate.toml", "dataset.json": "starter-dataset.json",
           "agent.py": "starter_agent.py"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init", help="write a starter evals/ folder (dataset, rubric, gate file) into this project",
        description="Write a starter evals/ folder: a small dataset to edit (dataset.json), a stand-in agent "
        "that answers it (agent.py: replace its body with a call to your agent), the judge rubric "
        "(judge-rubric.md) and the regression-gate thresholds (gate.toml). Existing files are kept "
        "unless --force. Then: tracegrade run evals/dataset.json --target evals.agent:answer --checks-only",
    )
    p.add_argument("folder", nargs="?", type=Path, default=Path("evals"), help="where to write (default evals/)")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    written = init_project(args.folder, force=args.force)
    for path in written:
        print(f"wrote {path}")
    print(f"next: {next_command(args.folder)}\n"
          f"      then put your agent in {args.folder / 'agent.py'} (or point --target at yours: module:function)\n"
          + used_only_when_named(args.folder))
    return 0


def used_only_when_named(folder: Path) -> str:
    """WHY said: the rubric and gate files are copies to edit; the commands read the shipped
    ones unless told, so an edit that is never passed changes nothing."""
    return (f"      {folder / 'judge-rubric.md'} takes effect only with --rubric (run, grade, calibrate, monitor)\n"
            f"      {folder / 'gate.toml'} takes effect only with --gate (compare, view)")


def next_command(folder: Path) -> str:
    """The run that works right after init: the stub agent as a module under the
    working directory when it is one, else through PYTHONPATH."""
    dataset = folder / "dataset.json"
    parts = folder.parts
    if not folder.is_absolute() and all(p.isidentifier() for p in parts):
        return f"tracegrade run {dataset} --target {'.'.join((*parts, 'agent'))}:answer --checks-only"
    return f"PYTHONPATH={folder} tracegrade run {dataset} --target agent:answer --checks-only"


def init_project(folder: Path, force: bool = False) -> list[Path]:
    """Copy the starter files into ``folder``; ConfigError if one exists (unless
    ``force``), if one is a symbolic link, or if the folder cannot be written."""
    links = [folder / name for name in STARTER if (folder / name).is_symlink()]
    if links:
        # WHY refused even with --force: writing through a link (a dangling one too)
        # changes a file outside the folder the user asked for.
        raise ConfigError(f"{', '.join(map(str, links))}: a symbolic link; init writes only regular files "
                          "(remove the link, or choose another folder)")
    existing = [folder / name for name in STARTER if (folder / name).exists()]
    if existing and not force:
        raise ConfigError(f"{', '.join(map(str, existing))} already exist; use --force to overwrite")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    return [_copy(shipped, folder / name) for name, shipped in STARTER.items()]


def _copy(shipped: str, path: Path) -> Path:
    """One starter file written at ``path``, never through a symbolic link
    (O_NOFOLLOW: a link made after the check above is refused too)."""
    from tracegrade import defaults

    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        with open(os.open(path, flags, 0o644), "wb") as out, defaults.path(shipped).open("rb") as source:
            shutil.copyfileobj(source, out)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path}: a symbolic link; init writes only regular files") from None
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
