"""`tracegrade init` leaves a project where the command it prints works at once."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from tracegrade.cli import main


def test_the_printed_next_command_runs_and_passes_the_starter_dataset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    [command] = [line.removeprefix("next: ") for line in out.splitlines() if line.startswith("next: ")]
    assert command == "tracegrade run evals/dataset.json --target evals.agent:answer --checks-only"
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", *shlex.split(command)[1:], "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 of 3 cases passed" in done.stderr
    assert (tmp_path / "evals" / "agent.py").read_text().startswith('"""A stand-in agent')


def test_a_folder_that_is_no_module_name_gets_a_pythonpath_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-evals"]) == 0
    assert "next: PYTHONPATH=my-evals tracegrade run my-evals/dataset.json --target agent:answer" in capsys.readouterr().out


def test_no_target_without_shopnest_says_how_to_name_one(tmp_path, monkeypatch, capsys):
    import tracegrade.agent.plugins as plugins

    monkeypatch.setattr(plugins, "installed_targets", lambda: {})
    (tmp_path / "cases.json").write_text('[{"id": "a", "question": "hi?"}]')
    code = main(["run", str(tmp_path / "cases.json"), "--checks-only", "--db", f"sqlite:///{tmp_path}/r.db"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no --target: name the agent to run, e.g. --target mypkg.agent:answer" in err
    assert "shopnest" not in err


def test_a_symbolic_link_in_the_folder_is_refused_and_its_target_untouched(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "evals" / "gate.toml").symlink_to(outside / "planted.toml")  # dangling
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert "evals/gate.toml: a symbolic link" in err and "Traceback" not in err
    assert not (outside / "planted.toml").exists()

    (tmp_path / "evals" / "gate.toml").unlink()
    precious = outside / "precious.py"
    precious.write_text("keep me")
    (tmp_path / "evals" / "agent.py").symlink_to(precious)
    assert main(["init", "--force"]) == 2
    assert "evals/agent.py: a symbolic link" in capsys.readouterr().err
    assert precious.read_text() == "keep me"


def test_a_folder_that_cannot_be_written_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").write_text("a file where the folder should be")
    assert main(["init"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cannot create the folder evals" in err, err
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # root writes anyway
            assert main(["init", "locked"]) == 2
            err = capsys.readouterr().err.strip()
            assert err.count("\n") == 0 and "cannot write locked/" in err and "Permission denied" in err, err
    finally:
        locked.chmod(0o700)
    assert main(["init", "/proc/tracegrade-init"]) == 2  # not even root writes there
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "/proc/tracegrade-init" in err and "Traceback" not in err, err


def test_next_says_the_rubric_and_gate_files_take_effect_only_when_named(tmp_path, monkeypatch, capsys):
    """Issue 34: init writes gate.toml and judge-rubric.md; an edit to either changes nothing until passed."""
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "evals/judge-rubric.md takes effect only with --rubric" in out
    assert "evals/gate.toml takes effect only with --gate" in out
