"""cli.end_process: the program ends at once, and what Python's own exit would show is shown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = """
import atexit, gc, sys, threading, time
from pathlib import Path
from tracegrade.cli import end_process

folder = Path(sys.argv[1])
early = open(folder / "early.txt", "w")  # opened before gc.freeze(), as a target module's log would be
gc.freeze()
early.write("written before the freeze")
text = open(folder / "text.txt", "a")
text.write("a line never flushed")
binary = open(folder / "binary.bin", "wb")
binary.write(b"bytes never flushed")
atexit.register(lambda: (folder / "atexit.txt").write_text("atexit ran"))
if sys.argv[2] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.3), (folder / "thread.txt").write_text("thread done"))).start()
print("to stdout")  # a pipe: block-buffered, still in the buffer
print("to stderr", file=sys.stderr)
end_process(3)
print("never reached")
"""


def run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM), str(tmp_path), mode],
                          capture_output=True, text=True, timeout=60)


def test_the_exit_code_the_streams_open_files_and_atexit_are_as_pythons_exit_leaves_them(tmp_path: Path) -> None:
    done = run(tmp_path, "plain")
    assert done.returncode == 3
    assert done.stdout == "to stdout\n"
    assert done.stderr == "to stderr\n"
    assert (tmp_path / "early.txt").read_text() == "written before the freeze"
    assert (tmp_path / "text.txt").read_text() == "a line never flushed"
    assert (tmp_path / "binary.bin").read_bytes() == b"bytes never flushed"
    assert (tmp_path / "atexit.txt").read_text() == "atexit ran"


def test_a_thread_python_would_wait_for_is_waited_for(tmp_path: Path) -> None:
    done = run(tmp_path, "thread")
    assert done.returncode == 3
    assert (tmp_path / "thread.txt").read_text() == "thread done"
    assert (tmp_path / "text.txt").read_text() == "a line never flushed"
    assert done.stdout == "to stdout\n"
