"""Where things are, for test files at any depth of tests/ (they import this by name:
pyproject.toml puts tests/ on ``sys.path``)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent  # the support modules, the agents run by path, fixtures/, snapshots/
ROOT = TESTS.parent  # the checkout: evals/, docs/, examples/, src/
SNAPSHOTS = TESTS / "snapshots"
