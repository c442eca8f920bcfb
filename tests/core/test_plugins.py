"""Extension points: a user's check and target, installed as a separate tiny
package (a real `pip install` into a folder on PYTHONPATH), show up in
`tracegrade run` without editing tracegrade."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracegrade.core.errors import ConfigError
from tracegrade.checks.plugins import Check
from tracegrade.agent.targets import resolve_target

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tg-user-plugin"
version = "0.0.1"

[project.entry-points."tracegrade.checks"]
polite = "tg_user_plugin:Polite"

[project.entry-points."tracegrade.targets"]
echo = "tg_user_plugin:make_echo"
"""

MODULE = '''
from dataclasses import dataclass
from tracegrade import CheckResult, Reply


@dataclass(frozen=True)
class Polite:
    name: str = "polite"

    def applies(self, case):
        return "polite" in case.tags

    def __call__(self, case, reply):
        ok = "please" in reply.answer.lower()
        return CheckResult(self.name, ok, "ok" if ok else "impolite", "" if ok else "no please")


def make_echo(greeting="Hello"):
    async def answer(case):
        return Reply(answer=f"{greeting}, {case.question}")
    answer.model_id = "echo-1"
    return answer
'''


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    (root / "pkg").mkdir()
    (root / "pkg" / "pyproject.toml").write_text(PYPROJECT)
    (root / "pkg" / "tg_user_plugin.py").write_text(MODULE)
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(root / "pkg")], check=True, capture_output=True, timeout=300)
    return site


def test_an_installed_check_and_target_run_from_the_cli(plugin_site, tmp_path):
    cases = [{"id": "a", "question": "Can you help?", "tags": ["polite"]},
             {"id": "b", "question": "Say please?", "tags": []}]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", "cases.json", "--target", "echo",
                           "--checks-only", "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", "runs"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # case a is not polite
    [results] = (tmp_path / "runs").glob("*/results.json")
    run = json.loads(results.read_text())
    by_id = {r["case_id"]: r for r in run["results"]}
    assert by_id["a"]["reply"]["answer"] == "Hello, Can you help?"  # the user's target answered
    assert [(c["name"], c["code"]) for c in by_id["a"]["checks"] if not c["passed"]] == [("polite", "impolite")]
    assert "polite" not in [c["name"] for c in by_id["b"]["checks"]]  # applies() said no
    assert run["manifest"]["agent_model"] == "echo-1"


def test_an_unknown_target_lists_the_registered_ones():
    with pytest.raises(ConfigError, match=r"unknown target 'nope'.*shopnest"):
        resolve_target("nope")


def test_a_registered_factory_gets_only_the_options_it_takes(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    from tracegrade.agent import plugins
    from tracegrade.checks import plugins as check_plugins

    plugins.installed_targets.cache_clear()
    try:
        target = resolve_target("echo", greeting="Hi", agent_model=None, prompt_version="v9")
        assert target.model_id == "echo-1"
        check = [c for c in check_plugins.installed_checks.__wrapped__() if c.name == "polite"][0]
        assert isinstance(check, Check)
    finally:
        plugins.installed_targets.cache_clear()
