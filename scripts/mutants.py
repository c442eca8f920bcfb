"""Hand-written mutants: does the test suite notice a plausible bug?

    python scripts/mutants.py              # every mutant, one at a time
    python scripts/mutants.py --list       # their names
    python scripts/mutants.py unordered-extra money-currency   # some of them

Each mutant is one behavioural change to one module (an exact text replacement
that must occur once), applied alone to a fresh copy of the checkout (the files
git knows, as they are in the working tree), followed by the tests of that
module. A mutant is *killed* when those tests fail, and *survives* when they
pass; each killed mutant is shown with the first test that caught it. The
tests first run once without a mutant (exit 2 if they fail). The last line
gives the score; the exit status is 1 if a mutant survived or a replacement no
longer matches the source (the list went stale).

WHY hand-written and not a mutation tool: the mutants are the bugs a
reviewer fears in this code (a tolerance on integers, an ignored currency, a
regime boundary moved), each checked against the tests that claim to guard it,
in a few minutes on two cores rather than hours of generated operators.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

VALUE_TESTS = ("tests/case/test_argmatch.py", "tests/checks/test_trajectory_conformance.py",
               "tests/case/test_expectations.py", "tests/checks/test_docs_trajectory.py")
TRAJECTORY_TESTS = (*VALUE_TESTS, "tests/checks/test_checks.py")
STATS_TESTS = ("tests/stats/test_pairstats.py", "tests/compare/test_compare.py", "tests/compare/test_gate.py")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # the module, from the checkout's root
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]


ARGMATCH = "src/tracegrade/case/argmatch.py"
MUTANTS = (
    # The three of issue 28.
    Mutant("unordered-extra", ARGMATCH, "(not self.whole or len(value) == len(self.items))",
           "(not self.whole or len(value) >= len(self.items))", VALUE_TESTS),
    Mutant("money-currency", ARGMATCH, "got and got[0] == self.amount and got[1] == self.currency",
           "got and got[0] == self.amount", VALUE_TESTS),
    Mutant("wilcoxon-exact-to-20", "src/tracegrade/stats/paired.py", "if len(d) <= 50 and not (has_ties or has_zeros):",
           "if len(d) <= 20 and not (has_ties or has_zeros):", STATS_TESTS),
    # The value language.
    Mutant("integers-with-tolerance", ARGMATCH, "    return bool(expected == got)\n",
           "    return bool(expected == got) or (not isinstance(expected, (bool, str)) and isinstance(got, (int, float))\n"
           "                                     and math.isclose(expected, got, rel_tol=1e-9))\n", VALUE_TESTS),
    Mutant("has-is-exact", ARGMATCH, "for k, v in arg.items()}, allow_other=True)",
           "for k, v in arg.items()}, allow_other=False)", VALUE_TESTS),
    Mutant("contains-shares-items", ARGMATCH, "and perfect_matching(fits, len(value)):", "and all(fits):", VALUE_TESTS),
    Mutant("extra-keys-allowed", ARGMATCH, "if self.allow_other or (key in self.defaults",
           "if True or (key in self.defaults", VALUE_TESTS),
    Mutant("optional-ignored", ARGMATCH, "            elif not spec.optional:\n", "            elif True:\n",
           VALUE_TESTS),
    Mutant("never-accepts", ARGMATCH, '        return [Mismatch("value", path, self, value)]\n\n    def describe(self) -> str:\n'
           '        return "no value', '        return []\n\n    def describe(self) -> str:\n        return "no value',
           VALUE_TESTS),
    Mutant("approx-ignores-tolerance", ARGMATCH,
           "math.isclose(value, self.number, rel_tol=self.rel_tol, abs_tol=self.abs_tol)", "value == self.number",
           VALUE_TESTS),
    Mutant("normalize-drops-strict", ARGMATCH, "return self.normalize + tuple(s for s in inherited if s in _MODES)",
           "return self.normalize", VALUE_TESTS),
    Mutant("spaces-kept", "src/tracegrade/case/textnorm.py", '    if "spaces" in steps:\n        text = "".join(text.split())\n',
           '    if "spaces" in steps:\n        text = " ".join(text.split())\n', VALUE_TESTS),
    Mutant("strict-ignored-by-schema", "src/tracegrade/case/toolschema.py",
           'kind = "number" if strict and isinstance(value, float) else json_type(value)', "kind = json_type(value)",
           TRAJECTORY_TESTS),
    # Calls and their order.
    Mutant("after-allows-one-round", "src/tracegrade/checks/callmatch.py", "return a < b if pair.strict else a <= b",
           "return a <= b", TRAJECTORY_TESTS),
    Mutant("order-pairs-ignored", "src/tracegrade/checks/callmatch.py",
           "if all(keeps(pair) for pair in due.get(i, ())) and extend(i + 1):", "if extend(i + 1):", TRAJECTORY_TESTS),
    Mutant("pairs-truncated", "src/tracegrade/checks/callmatch.py", "itertools.zip_longest(*given, fillvalue=MISSING)",
           "zip(*given)", TRAJECTORY_TESTS),
    Mutant("failed-calls-count", "src/tracegrade/checks/callmatch.py",
           'return call.status in EFFECTIVE or settings(case).counted == "attempted"', "return True", TRAJECTORY_TESTS),
    Mutant("unstated-means-no-tool", "src/tracegrade/checks/builtin.py",
           "return not expects_calls(case) and case.states_tool_choice()", "return not expects_calls(case)",
           TRAJECTORY_TESTS),
    # Statistics.
    Mutant("sign-flips-to-12", "src/tracegrade/stats/paired.py", "elif len(d) <= 13:", "elif len(d) <= 12:",
           STATS_TESTS),
    Mutant("no-tie-correction", "src/tracegrade/stats/paired.py", " - sum(t**3 - t for t in tie_sizes) / 2", "",
           STATS_TESTS),
    # Parsers of model output.
    Mutant("tool-call-never-recognised", "src/tracegrade/models/decisions.py",
           "            if call is not None:\n                return \"\", (call,)",
           "            if False:\n                return \"\", (call,)", ("tests/case/test_bad_input.py",)),
    Mutant("judge-scale-to-4", "src/tracegrade/judge/json_scores.py", "not 1 <= value <= 5:", "not 1 <= value <= 4:",
           ("tests/case/test_bad_input.py",)),
)


def checkout_copy(into: Path) -> Path:
    """The files git knows (tracked and new, not ignored), as they are now."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def run(mutant: Mutant, python: str) -> tuple[str, str]:
    """('killed' | 'survived' | 'stale', the first failing test). Stale: the
    replacement no longer matches the source."""
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as folder:
        copy = checkout_copy(Path(folder))
        module = copy / mutant.path
        text = module.read_text(encoding="utf-8")
        if text.count(mutant.old) != 1:
            return "stale", ""
        module.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
        passed, failed = run_tests(copy, mutant.tests, python)
    return ("survived" if passed else "killed"), failed


def run_tests(copy: Path, tests: tuple[str, ...], python: str) -> tuple[bool, str]:
    """Whether the tests pass in the copy, and the first one that failed."""
    outcome = subprocess.run([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
                             cwd=copy, env=_env(copy), capture_output=True, text=True)
    failed = next((line.split(" ", 1)[1].split(" - ")[0] for line in outcome.stdout.splitlines()
                   if line.startswith(("FAILED ", "ERROR "))), "")
    return outcome.returncode == 0, failed


def baseline(python: str, chosen: list[Mutant]) -> list[str]:
    """The test files that fail without any mutant: a mutant 'killed' by them proves nothing."""
    with tempfile.TemporaryDirectory(prefix="mutant-baseline-") as folder:
        copy = checkout_copy(Path(folder))
        files = sorted({t for m in chosen for t in m.tests})
        passed, failed = run_tests(copy, tuple(files), python)
    return [] if passed else [failed or "(collection)"]


def _env(copy: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy / "src"), str(copy)])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the mutants' names and exit")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the tests")
    args = parser.parse_args(argv)
    if args.list:
        for mutant in MUTANTS:
            print(f"{mutant.name:28} {mutant.path}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"no mutant named {', '.join(sorted(unknown))} (see --list)")
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    broken = baseline(args.python, chosen)
    if broken:
        print(f"the tests fail without a mutant ({broken[0]}): fix them first", file=sys.stderr)
        return 2
    outcomes = {}
    for mutant in chosen:
        started = time.perf_counter()
        outcomes[mutant.name], failed = run(mutant, args.python)
        print(f"{outcomes[mutant.name]:8} {mutant.name:28} {time.perf_counter() - started:4.0f} s  "
              f"{failed or mutant.path}", flush=True)
    killed = sum(o == "killed" for o in outcomes.values())
    print(f"killed {killed} of {len(chosen)} mutants")
    return 0 if killed == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
