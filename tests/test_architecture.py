"""The package's arrows run one way: read the imports with ``ast`` and fail on
a forbidden one (a cycle, the harness importing the example agent, core types
importing anything above them)."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tracegrade"

DESIGN = SRC.parents[1] / "DESIGN.md"


def design_layers(text: str) -> list[set[str]]:
    """The folders of each layer, from the bottom up, as DESIGN.md's map lists them: the rows
    ``| N | `core/` `defaults/` | ... |`` of its section "The map"."""
    section = text.split("## The map", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| *(\d+) *\| *([^|]+)\|", section, re.M)
    assert [int(n) for n, _ in rows] == list(range(len(rows))), "DESIGN.md's map numbers its layers 0, 1, 2, ..."
    return [set(re.findall(r"`([a-z_]+)(?:/|\.py)`", folders)) for _, folders in rows]


# Sub-packages from the bottom up: a module may import its own layer and the ones below, never one above.
LAYERS = design_layers(DESIGN.read_text(encoding="utf-8"))


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


def folder_of(module: str) -> str:
    """The top-level folder (or module, such as ``pytest_plugin``) of the package that holds ``module``."""
    return module.split(".")[1] if "." in module else module


def layer_of(module: str) -> int | None:
    """The layer DESIGN.md's map puts ``module``'s folder in."""
    return next((index for index, layer in enumerate(LAYERS) if folder_of(module) in layer), None)


def folder_graph() -> dict[str, set[str]]:
    """Which folder imports which, every import counted (functions' and TYPE_CHECKING's too)."""
    edges: dict[str, set[str]] = {}
    for name, targets in graph(all_imports).items():
        if name != "tracegrade":
            edges.setdefault(folder_of(name), set()).update(folder_of(t) for t in targets if folder_of(t) != folder_of(name))
    return edges


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


def test_no_folder_imports_a_folder_that_imports_it():
    assert find_cycle(folder_graph()) is None


def test_the_map_in_design_md_names_every_folder_once():
    named = [folder for layer in LAYERS for folder in layer]
    on_disk = {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__"}
    on_disk |= {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    assert len(named) == len(set(named)), "a folder is in two layers of DESIGN.md's map"
    assert set(named) == on_disk


def test_the_map_reader_and_the_layer_rule_catch_a_wrong_map():
    text = "## The map\n| 0 | `core/` |\n| 1 | `run/` `cli.py` |\n## Next\n| 2 | `x/` |\n"
    assert design_layers(text) == [{"core"}, {"run", "cli"}]
    assert folder_of("tracegrade.run.runner") == "run" and folder_of("tracegrade.pytest_plugin") == "pytest_plugin"


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_harness_never_imports_the_example_agent():
    offenders = sorted(name for name, path in MODULES.items()
                       if any(m == "shopnest" or m.startswith("shopnest.") for m in all_imports(path)))
    assert offenders == []


def test_arrows_only_point_down_the_layers_even_from_inside_functions_and_type_checking():
    wrong = []
    for name, targets in graph(all_imports).items():
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
