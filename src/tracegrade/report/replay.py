"""The replay block of a run report (``--replay-users RUN``): per simulated-user trial,
whether the agent's replies matched the stored conversation to the end, or the agent
turn where they first diverged and what differed (agent/replay.py)."""

from __future__ import annotations

from tracegrade.core.results import Run


def wanted(run: Run) -> bool:
    """The run replayed a stored run's users (WHY the manifest: no second pass over the results)."""
    return bool(run.manifest.settings.get("replayUsers"))


def render(run: Run) -> str:
    rows = [(r.case_id, r.repeat, r.replay) for r in run.results if r.replay is not None]
    diverged = sum(replay.diverged_at is not None for _, _, replay in rows)
    live = sum(replay.diverged_at is None and bool(replay.note) for _, _, replay in rows)
    lines = [f"REPLAY of run {run.manifest.settings.get('replayUsers')}: {len(rows) - diverged - live} the same "
             f"to the end, {diverged} diverged, {live} played live or ran out"]
    width = max((len(case_id) for case_id, _, _ in rows), default=4)
    lines += [f"  {case_id:<{width}} #{repeat}  {replay.describe()}" for case_id, repeat, replay in rows]
    return "\n".join(lines)
