"""pytest integration: each case of a dataset is a test item.

    pytest --tracegrade evals/golden.json --target mypkg.agent:answer [--tracegrade-capture openai]

(or ``tracegrade_dataset``, ``tracegrade_target`` and ``tracegrade_capture`` in
``[tool.pytest.ini_options]``)

reports one item per case (the dataset file is a pytest File: ``pytest
evals/golden.json::CASE_ID`` runs one), its failed checks and low scores as the
failure message. The cases still selected after ``-k``, ``-m``, ``--lf`` and
``--deselect`` run together through :func:`tracegrade.evaluate` at the first of
them (one stored run; checks only unless ``--tracegrade-judge`` names a model):
only they reach the agent. Or write the test yourself; the ``tracegrade_case``
fixture is parametrised over the dataset's cases, and ``tracegrade_captured``
records the agent's model calls during the test::

    async def test_my_agent(tracegrade_case):
        reply = await my_agent(tracegrade_case)
        assert_checks_pass(tracegrade_case, reply)

    def test_my_sdk_agent(tracegrade_case, tracegrade_captured):
        answer = my_sdk_agent(tracegrade_case.question)
        assert_checks_pass(tracegrade_case, tracegrade_captured.reply(answer))

WHY nothing is imported at module level: pytest loads this plugin in every
session of every project that has tracegrade installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import pytest

if TYPE_CHECKING:
    from tracegrade.core.errors import TracegradeError
    from tracegrade.core.results import CaseResult, CheckResult
    from tracegrade.agent.capture.reply import Captured
    from tracegrade.core.trace import Reply
    from tracegrade.case.dataset import Dataset
    from tracegrade.case.schema import GoldenCase


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracegrade", "tracegrade: evaluate an agent on a golden dataset")
    group.addoption("--tracegrade", metavar="DATASET", help="run each case of DATASET as a test item")
    group.addoption("--tracegrade-target", "--target", dest="tracegrade_target", metavar="TARGET",
                    help="the agent: a registered target, module:function or http(s)://URL")
    group.addoption("--tracegrade-judge", metavar="MODEL", default=None,
                    help="judge model spec (local, openai:MODEL, ...); default: checks only")
    group.addoption("--tracegrade-user-model", metavar="MODEL", default=None,
                    help="the model that plays a case's simulated `user` (local, openai:MODEL, ...; "
                    "default $TRACEGRADE_USER_MODEL, else local), as `tracegrade run --user-model`")
    group.addoption("--tracegrade-db", metavar="URL", default=None,
                    help="run store URL (default $TRACEGRADE_DB, else .tracegrade/runs.db)")
    group.addoption("--tracegrade-capture", action="append", default=None, metavar="SOURCE",
                    help="record the agent's model calls (openai, anthropic, otel; repeatable) and build its "
                    "trace from them; the target may then return just the answer (docs/agents.md)")
    parser.addini("tracegrade_dataset", "dataset for --tracegrade when the flag gives none")
    parser.addini("tracegrade_target", "the agent (module:function, registered name or URL) when --target gives none")
    parser.addini("tracegrade_capture", "capture sources (openai anthropic otel)", type="args", default=[])


def _option(config: pytest.Config, name: str) -> Any:
    """A flag's value, else the ini option of the same name (``[tool.pytest.ini_options]``)."""
    given = config.getoption(name)
    if given:
        return given
    return config.getini(_INI.get(name, name)) or None


_INI = {"tracegrade": "tracegrade_dataset"}  # the flags whose ini option has another name


_DATASETS = pytest.StashKey[dict[Path, "Dataset"]]()  # each dataset file read once per session
_COLLECTED = pytest.StashKey[set[Path]]()  # the dataset files pytest collected as files
DATASET_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def _dataset_path(config: pytest.Config) -> Path | None:
    path = _option(config, "tracegrade")
    return Path(path).resolve() if path else None


def _load(config: pytest.Config, path: Path) -> Dataset:
    from tracegrade.case.dataset import load_dataset

    loaded = config.stash.setdefault(_DATASETS, {})
    if path not in loaded:
        loaded[path] = load_dataset(path)
    return loaded[path]


def _dataset(config: pytest.Config) -> Dataset | None:
    path = _dataset_path(config)
    return None if path is None else _load(config, path)


_NAMED = pytest.StashKey[frozenset[Path]]()


def _named_datasets(config: pytest.Config) -> frozenset[Path]:
    """The dataset files this session grades: ``--tracegrade``'s, and the dataset files named on
    the command line (``pytest evals/library.json::lib-search-01``, the node id pytest printed)."""
    if _NAMED not in config.stash:
        named = {config.invocation_params.dir / arg.split("::")[0] for arg in config.args}
        wanted = {p.resolve() for p in named if p.suffix.lower() in DATASET_SUFFIXES}
        given = _dataset_path(config)
        config.stash[_NAMED] = frozenset(wanted | {given} if given else wanted)
    return config.stash[_NAMED]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if file_path.suffix.lower() not in DATASET_SUFFIXES or not _option(config, "tracegrade_target"):
        return None  # WHY first: this hook sees every file of the session
    if file_path.resolve() not in _named_datasets(config):
        return None
    config.stash.setdefault(_COLLECTED, set()).add(file_path.resolve())
    return DatasetFile.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "tracegrade_case" not in metafunc.fixturenames:
        return
    from tracegrade.case.dataset import case_ids

    dataset = _dataset(metafunc.config)
    if dataset is None:
        raise pytest.UsageError("the tracegrade_case fixture needs --tracegrade DATASET")
    metafunc.parametrize("tracegrade_case", dataset.cases, ids=list(case_ids(dataset.cases)))


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--tracegrade DATASET`` beside test paths that do not hold it: its cases join the items
    (with the node ids pytest would give the file). WHY here: -k, -m, --lf and --deselect
    select among the items after this hook."""
    path = _dataset_path(config)
    if path is None or not _option(config, "tracegrade_target") or path in config.stash.get(_COLLECTED, set()):
        return
    dataset_file = DatasetFile.from_parent(session, path=path, nodeid=_node_id(config, path))
    items.extend(dataset_file.collect())


def _node_id(config: pytest.Config, path: Path) -> str:
    """The path as pytest names files: from the rootdir, else from where pytest was started."""
    import os

    base = config.rootpath if path.is_relative_to(config.rootpath) else config.invocation_params.dir
    return os.path.relpath(path, base).replace(os.sep, "/")


def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """``async def test_...(tracegrade_case)`` runs with tracegrade alone (no
    pytest-asyncio needed). WHY only tests that take a tracegrade fixture: the
    plugin loads in every project, and other async tests are not ours to run;
    with pytest-asyncio installed, its own items are no coroutines here."""
    import asyncio
    import inspect

    if "tracegrade_case" not in pyfuncitem.fixturenames or not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


class DatasetFile(pytest.File):
    """A dataset file as a pytest node, a case per item. Its selected cases run together,
    at the first of them: one stored run, the agent asked only for the cases selected."""

    _outcome: dict[str, CaseResult] | TracegradeError | None = None

    def collect(self) -> Iterable[pytest.Item]:
        from tracegrade.case.dataset import case_ids

        for case_id in case_ids(_load(self.config, self.path.resolve()).cases):
            yield CaseItem.from_parent(self, name=case_id, case_id=case_id)

    def selected(self) -> list[str]:
        """The ids of this file's cases left to run after -k, -m, --lf, --deselect and node ids."""
        return [i.case_id for i in self.session.items if isinstance(i, CaseItem) and i.parent is self]

    def results(self) -> dict[str, CaseResult]:
        """The selected cases' results, run once. WHY a failed run is kept too: a target that
        cannot load would otherwise be loaded again (and fail again) for every item."""
        from tracegrade.core.errors import TracegradeError

        if self._outcome is None:
            try:
                self._outcome = self._run()
            except TracegradeError as exc:
                self._outcome = exc
        if isinstance(self._outcome, TracegradeError):
            raise self._outcome
        return self._outcome

    def _run(self) -> dict[str, CaseResult]:
        from tracegrade.run.evaluate import dataset_record, evaluate

        config, whole, ids = self.config, _load(self.config, self.path.resolve()), self.selected()
        # WHY "only" recorded for a selection: history charts a run of some cases apart from whole runs
        record = {**dataset_record(self.path), **({"only": ids} if len(ids) < len(whole.cases) else {})}
        run = evaluate(whole.select(ids), _option(config, "tracegrade_target"), record=record,
                       judge=config.getoption("tracegrade_judge"), store=config.getoption("tracegrade_db"),
                       capture=tuple(_option(config, "tracegrade_capture") or ()),
                       user_model=config.getoption("tracegrade_user_model"))
        return {r.case_id: r for r in run.results}


class CaseItem(pytest.Item):
    def __init__(self, *, case_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id

    def runtest(self) -> None:
        assert isinstance(self.parent, DatasetFile)
        result = self.parent.results()[self.case_id]
        if not result.passed:
            raise CaseFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from tracegrade.core.errors import TracegradeError

        if isinstance(excinfo.value, CaseFailed):
            return failure_message(excinfo.value.result)
        if isinstance(excinfo.value, TracegradeError):  # the run could not start: its one-line reason
            return _shown(f"tracegrade: {excinfo.value}")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"tracegrade case {self.case_id}"


class CaseFailed(AssertionError):
    def __init__(self, result: CaseResult) -> None:
        super().__init__(failure_message(result))
        self.result = result


def failure_message(result: CaseResult) -> str:
    """Why a case did not pass: its status, failed checks, scores and error."""
    lines = [f"case {result.case_id}: {result.status.upper()}"]
    lines += [f"  check {c.name}: {c.code}: {c.detail}" for c in result.failed_checks()]
    if result.scores:
        lines.append("  scores " + "  ".join(f"{k} {v}" for k, v in result.scores.items()))
    if result.error:
        lines.append(f"  error {result.error}")
    return _shown("\n".join(lines))


def _shown(text: str) -> str:
    """``text`` redacted as the run store redacts (a check's detail quotes the agent's arguments)."""
    from tracegrade.core.redact import redact, redact_secrets
    from tracegrade.store.runstore import raw_from_env

    return redact_secrets(text) if raw_from_env() else redact(text)


def assert_checks_pass(case: GoldenCase, reply: Reply) -> None:
    """AssertionError listing every failed check of ``reply`` for ``case`` (built-in
    and installed checks); for tests that call the agent themselves."""
    __tracebackhide__ = True  # the failure points at the test that called this, not at tracegrade
    from tracegrade.checks.builtin import checks_for, run_checks
    from tracegrade.checks.plugins import installed_checks

    checks: list[Callable[[GoldenCase, Reply], CheckResult]] = [
        *checks_for(case), *(c for c in installed_checks() if c.applies(case))]
    failed = [c for c in run_checks(case, reply, checks) if not c.passed]
    if failed:
        raise AssertionError(_shown("\n".join([f"case {case.id}: checks failed"]
                                              + [f"  check {c.name}: {c.code}: {c.detail}" for c in failed])))


@pytest.fixture
def tracegrade_check() -> Callable[[GoldenCase, Reply], None]:
    """``assert_checks_pass`` as a fixture: ``tracegrade_check(case, reply)``."""
    return assert_checks_pass


@pytest.fixture
def tracegrade_captured(request: pytest.FixtureRequest) -> Iterator[Captured]:
    """The agent's model calls during the test, for a test that calls the agent itself:
    ``assert_checks_pass(case, tracegrade_captured.reply(answer))``. The sources are
    ``--tracegrade-capture``'s, else the openai / anthropic SDKs that are installed."""
    from tracegrade.agent.capture.reply import capture_reply

    sources = _option(request.config, "tracegrade_capture")
    with capture_reply(sources=sources, label=request.node.name) as captured:
        yield captured
