"""A run prints each case's block when that case finishes, also into a pipe."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from places import TESTS
from tracegrade.cli.progress import CaseProgress



def test_the_first_block_reaches_a_pipe_before_the_second_case_finishes(tmp_path):
    cases = [{"id": "first", "question": "one?", "answerMustInclude": ["answer"]},
             {"id": "second", "question": "two?", "answerMustNotInclude": ["TIMED OUT"]}]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    marker = tmp_path / "marker"
    env = {**os.environ, "PROGRESS_MARKER": str(marker),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "tracegrade.cli", "run", "cases.json", "--target", "progress_target:answer",
         "--checks-only", "--concurrency", "1", "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", "runs"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seen = []
    for line in process.stdout:  # a pipe, not a terminal
        seen.append(line)
        if line.startswith("  progress   [1/2]"):
            marker.touch()  # lets the second case finish
    assert process.wait(timeout=60) == 0, "".join(seen)
    text = "".join(seen)
    assert text.index("first ") < text.index("[1/2]") < text.index("second ") < text.index("[2/2]")


def test_the_eta_is_the_pace_so_far_times_the_cases_left():
    times = iter([100.0, 130.0, 190.0])
    out = io.StringIO()
    progress = CaseProgress(5, render=str, out=out, clock=times.__next__)
    progress("a")  # 30 s for the first case, 4 left
    assert out.getvalue() == "a\n  progress   [1/5] 30s elapsed, ETA 2m00s\n"
    assert progress.tally() == "[1/5] 1m30s elapsed, ETA 6m00s"
