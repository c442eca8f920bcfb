"""The README's first screen reads like a product page (issue 34): what tracegrade is, the two
commands, how to grade one's own agent with a `pip install` line, a list of what it checks;
the measured figures live, with their commands, in docs/benchmark.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tracegrade.case.schema import GoldenCase

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FIRST_SCREEN = README[:README.index("## What it checks")]


def test_the_first_screen_has_the_two_commands_and_the_users_install_line():
    assert "make demo" in FIRST_SCREEN and "make test" in FIRST_SCREEN
    assert "pip install" in FIRST_SCREEN and "tracegrade init" in FIRST_SCREEN
    assert "--capture openai" in FIRST_SCREEN and "pytest --tracegrade" in FIRST_SCREEN


def test_the_first_screen_holds_no_dated_measurements_and_links_them():
    assert "After judge round" not in FIRST_SCREEN and "fresh clone" not in FIRST_SCREEN
    assert "docs/benchmark.md#the-readmes-figures" in FIRST_SCREEN
    figures = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    assert "## The README's figures" in figures
    for kept in ("**121 s**", "**266 s**", "**468 s**", "**AUC 0.90**", "**74/114 passed**", "`make demo`"):
        assert kept in figures, kept  # a number moved with its command, not dropped


def test_the_readmes_example_case_is_a_valid_case():
    block = re.search(r"A case says what the agent should do.*?```json\n(.*?)```", README, re.S)
    assert block is not None
    case = GoldenCase.model_validate(json.loads(block.group(1)))
    assert case.calls is not None and case.calls.forbidden


def test_what_it_checks_is_a_list_each_line_linking_its_page():
    section = README[README.index("## What it checks"):README.index("## Using it")]
    items = [line for line in section.splitlines() if line.startswith("- **")]
    assert len(items) >= 5
    for link in re.findall(r"\]\(([^)#]+)", section):
        assert (ROOT / link).exists(), link


def test_every_relative_link_of_the_readme_and_the_figures_page_resolves():
    for page in (ROOT / "README.md", ROOT / "docs" / "benchmark.md"):
        for link in re.findall(r"\]\(([^)#\s]+)", page.read_text(encoding="utf-8")):
            if not link.startswith(("http://", "https://")):
                assert (page.parent / link).exists(), f"{page.name}: {link}"
