"""The package's arrows run one way: read the imports with ``ast`` and fail on
a forbidden one (a cycle, the harness importing the example agent, core types
importing anything above them)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tracegrade"

# Sub-packages from the bottom up, as DESIGN.md draws them: a module may import
# its own layer and the ones below, never one above.
LAYERS = [
    {"core", "defaults", "schemas"},            # the types: trace, results, errors
    {"models"},                                 # chat model providers
    {"eval", "capture"},                        # dataset, targets, checks, verdict, plugins
    {"judge", "stats", "metrics", "store", "observe"},  # judging, numbers, the run store, spans
    {"run"},                                    # the runner and evaluate(): composes the above
    {"compare", "report", "view.monitor"},   # reading runs: gates, reports, the dashboard
    {"view"},                                   # the web UI over runs and traces: composes the readers
    {"cli", "testing", "pytest_plugin"},        # the command line, the pytest plugin; test servers
]


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` is imported: not inside functions, not under TYPE_CHECKING."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(nodes) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
                found.update(submodules or {node.module})
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return found


def all_imports(path: Path) -> set[str]:
    """Every module named in an import anywhere in the file (functions included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from pkg import submodule` is an arrow to the submodule, not a cycle through pkg.
            submodules = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            names.update(submodules or {node.module})
    return names


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def graph(imports=top_level_imports) -> dict[str, set[str]]:
    edges = {}
    for name, path in MODULES.items():
        edges[name] = {m for m in imports(path) if m in MODULES and m != name and m != "tracegrade"}
    return edges


def layer_of(module: str) -> int | None:
    """The layer of the longest listed sub-package that holds ``module``."""
    inside = module.split(".")[1:]
    for depth in range(len(inside), 0, -1):
        prefix = ".".join(inside[:depth])
        for index, layer in enumerate(LAYERS):
            if prefix in layer:
                return index
    return None


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := dfs(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := dfs(node)):
            return cycle
    return None


def test_there_is_no_import_cycle_even_through_imports_inside_functions():
    assert find_cycle(graph(all_imports)) is None


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_harness_never_imports_the_example_agent():
    offenders = sorted(name for name, path in MODULES.items()
                       if any(m == "shopnest" or m.startswith("shopnest.") for m in all_imports(path)))
    assert offenders == []


def test_arrows_only_point_down_the_layers():
    wrong = []
    for name, targets in graph().items():
        mine = layer_of(name)
        for target in targets:
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                wrong.append(f"{name} -> {target}")
    assert sorted(wrong) == []


def test_core_imports_nothing_above_it():
    for name, path in MODULES.items():
        if name.startswith("tracegrade.core"):
            above = {m for m in all_imports(path) if m.startswith("tracegrade.") and not m.startswith("tracegrade.core")}
            assert above == set(), name


@pytest.mark.parametrize("source, forbidden", [
    ("import shopnest.agent\n", True),
    ("def f():\n    from shopnest import agent\n", True),
    ("from tracegrade.core import trace\n", False),
])
def test_the_agent_check_sees_imports_anywhere(tmp_path, source, forbidden):
    path = tmp_path / "m.py"
    path.write_text(source)
    assert any(m.startswith("shopnest") for m in all_imports(path)) is forbidden


def test_a_checks_only_run_reaches_its_first_case_without_the_judge_metrics_or_clients(tmp_path):
    # WHY a child process: what a start-up pays for is what sys.modules holds at the first call.
    import json
    import subprocess
    import sys
    import textwrap

    (tmp_path / "one.json").write_text(json.dumps([{"id": "a", "question": "hi?"}]))
    (tmp_path / "first.py").write_text(textwrap.dedent("""
        import sys
        from tracegrade import Reply

        async def answer(case):
            heavy = ("tracegrade.judge.scoring", "tracegrade.models", "tracegrade.metrics", "tracegrade.outputs.json_report",
                     "tracegrade.report.html", "numpy", "rich", "aiohttp", "httpx", "opentelemetry.sdk.trace")
            print("LOADED", sorted(m for m in heavy if m in sys.modules), file=sys.stderr)
            return Reply(answer="ok")
    """))
    # No span store named and no collector: the run builds no spans, so OpenTelemetry need not load either.
    quiet = {k: v for k, v in os.environ.items() if not k.startswith(("TRACEGRADE_SPANS_DB", "OTEL_EXPORTER_OTLP"))}
    done = subprocess.run([sys.executable, "-m", "tracegrade.cli", "run", "one.json", "--target", "first:answer",
                           "--checks-only", "--quiet", "--db", f"sqlite:///{tmp_path / 'runs.db'}", "--out", "out"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=quiet)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stderr, done.stderr
