"""Issue 23's "Done when", run as a user runs it: ``tracegrade run --checks-only`` in a
fresh process, then ``report`` and ``history`` on the stored run.

    python bench/run/hostile_run.py [--limit-s 120]

Run 1 (bounded work): a case whose dataset ``$regex`` and tool-schema ``pattern``
are ``^(a+)+$`` against 5,000 ``a``s and a ``!`` (catastrophic backtracking for
Python's ``re``), a case whose tool result is 400 KB of ``a.`` (what made
redaction quadratic) with an answer of 40,000 characters of ``1.`` read by a
``$money`` expectation (which it fails: there is no amount in it), and a plain case. Run 2 (storing and secrets): replies with a lone surrogate,
foreign objects (``object()``, bytes, a dict inside itself, an integer of 4,200
digits), NaN and Infinity usage, and a configured secret placed as an argument
named ``name``, as a dict key and as a URL password.

Prints, per command, its wall time and exit code, the status of every case, and
whether the secret (or the test e-mail and card number) appears anywhere in the
console, the output files or the store. Each command is stopped after
``--limit-s`` seconds (the code before issue 23 hangs on run 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECRET = "bench-Hostile-Token-90210q"
EVIL = r"^(a+)+$"

TARGET = f'''
import math
from tracegrade import Reply, ToolCall

SECRET = {SECRET!r}


def bounded(case):
    if case.id == "regex":
        return Reply(answer="done", tool_calls=(ToolCall(name="lookup", arguments={{"code": "a" * 5000 + "!"}}),))
    if case.id == "big-result":
        return Reply(answer="1." * 20_000, tool_calls=(ToolCall(name="lookup", arguments={{"code": "x"}},
                                                                 result="a." * 200_000),))
    return Reply(answer="plain")


def storing(case):
    if case.id == "surrogate":
        return Reply(answer="ok \\udcff")
    if case.id == "foreign":
        loop = {{}}
        loop["self"] = loop
        return Reply(answer="a", tool_calls=(ToolCall(name="lookup", arguments={{
            "o": object(), "b": b"\\xff\\xfe", "loop": loop, "big": 10 ** 4200 - 1}}),))
    if case.id == "nan":
        return Reply(answer="a", retrieval_scores=(math.nan,), usage={{"costUsd": math.inf}})
    return Reply(answer=f"mail ann@example.com card 4111 1111 1111 1111",
                 retrieved_sources=(f"https://bob:{{SECRET}}@docs.example.com/a.md",),
                 tool_calls=(ToolCall(name="lookup", arguments={{"name": SECRET, SECRET: "as a key"}}),))
'''

TOOLS = [{"name": "lookup", "writes": False, "parameters": {
    "type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}}}]
BOUNDED = {"name": "bounded", "tools": TOOLS, "cases": [
    {"id": "regex", "question": "regex", "calls": {"expected": [{"tool": "lookup", "arguments": {"code": {"$regex": EVIL}}}]}},
    {"id": "big-result", "question": "big", "answer": {"include": [{"$money": {"amount": 1250, "currency": "EUR"}}]}},
    {"id": "plain", "question": "plain"},
]}
STORING = {"name": "storing", "cases": [{"id": i, "question": i} for i in ("surrogate", "foreign", "nan", "secret")]}


def command(folder: Path, args: list[str], limit_s: float) -> tuple[float, int | str, str]:
    env = {**os.environ, "BENCH_API_TOKEN": SECRET,
           "PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p), "TRACEGRADE_DB": f"sqlite:///{folder / 'runs.db'}"}
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "tracegrade.cli", *args], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=limit_s)
        code: int | str = done.returncode
        printed = done.stdout + done.stderr
    except subprocess.TimeoutExpired as stopped:
        code = f"stopped after {limit_s:g} s"
        printed = "".join(part.decode("utf-8", "replace") if isinstance(part, bytes) else part or ""
                          for part in (stopped.stdout, stopped.stderr))
    return time.perf_counter() - started, code, printed


def statuses(folder: Path) -> dict[str, str]:
    db = folder / "runs.db"
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        return {case: status for case, status in conn.execute("SELECT case_id, status FROM case_results")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit-s", type=float, default=120.0)
    limit = parser.parse_args().limit_s
    for name, dataset, function in (("bounded work", BOUNDED, "bounded"), ("storing and secrets", STORING, "storing")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "hostile_target.py").write_text(TARGET)
            (folder / "d.json").write_text(json.dumps(dataset))
            printed = ""
            print(f"== {name}")
            seconds, code, out = command(folder, ["run", "d.json", "--target", f"hostile_target:{function}",
                                                  "--checks-only", "--out", "out"], limit)
            printed += out
            print(f"  tracegrade run --checks-only: {seconds:.1f} s, exit {code}")
            stored = statuses(folder)
            if code not in (0, 1) or not stored:
                print("  last lines: " + "\n  ".join(out.strip().splitlines()[-3:])[-600:])
            print(f"  cases stored: {stored}")
            for args in (["report", "latest"], ["report", "latest", "--html", "-o", "report.html"], ["history"]):
                seconds, code, out = command(folder, args, limit)
                printed += out
                print(f"  tracegrade {' '.join(args)}: {seconds:.1f} s, exit {code}")
            written = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name != "hostile_target.py")
            for secret in (SECRET, "ann@example.com", "4111 1111 1111 1111"):
                print(f"  {secret!r} in the console: {secret in printed}; in files and store: {secret.encode() in written}")
            print("  " + "\n  ".join(line for line in out.splitlines() if "finished" in line or "error" in line)[:600])


if __name__ == "__main__":
    main()
