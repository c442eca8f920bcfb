"""Dataset files: JSON (a list, or an object with ``cases``), JSONL or YAML, read into
validated cases; every error names the file, the case and the field.

The object form may declare, for every case, the ``tools`` the agent has
(JSON-Schema parameters, whether each ``writes``) and the default string
``normalize`` steps; a case's own ``tools`` replace a dataset tool of the same
name.
"""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from pydantic import ValidationError

from tracegrade.core import jsontext
from tracegrade.core.errors import DatasetError
from tracegrade.core.validation import describe
from tracegrade.case.schema import DatasetHeader, GoldenCase


def duplicate(first: GoldenCase, second: GoldenCase) -> str:
    """Why a repeated id is refused, naming what differs."""
    if first.content_hash() == second.content_hash():
        return f"case {first.id!r} appears twice"
    if first.version != second.version:
        return (f"case {first.id!r} appears twice with different contents, as version {first.version} "
                f"and version {second.version}: keep one version per file")
    a, b = first.canonical(), second.canonical()
    fields = ", ".join(sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)))
    return (f"case {first.id!r} appears twice with different contents under the same version {first.version} "
            f"(differing: {fields}): give the second case an id of its own; or, if it is an edit of the "
            f"first, keep only one (raising its version records that it changed)")


def read_records(path: Path, end: int | None = None) -> tuple[Iterable[Any], dict[str, Any]]:
    """The raw cases (a JSONL file's as they are parsed, up to the line starting at byte
    ``end`` when given), and the declarations every case shares (tools, normalisation)."""
    try:
        if path.suffix == ".jsonl":
            return json_lines(path, path.open("rb"), end=end), {}
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:  # a folder, no permission
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            data: Any = load_yaml(path, text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # load_yaml turns YAML's errors into ValueError
        raise DatasetError(f"{path}: cannot parse: {exc}") from None
    except RecursionError:  # no case nests that deep; the parsers recurse
        raise DatasetError(f"{path}: cannot parse: nested too deeply") from None
    if isinstance(data, dict) and "cases" in data:
        header = _header(path, data)
        return header.cases, {"tools": header.tools, "normalize": header.normalize,
                              "strict_integers": header.strict_integers, "handover_tool": header.handover_tool}
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of cases (or an object with 'cases')")
    return data, {}


def _header(path: Path, data: dict[str, Any]) -> DatasetHeader:
    if "version" in data:  # WHY said here: the generic hint offered a case's 'version', the same name
        raise DatasetError(f"{path}: field 'version': a dataset file declares no version: its version is the hash "
                           "of its cases' content, which every run records (a case may carry its own 'version', "
                           "raised when that case changes)")
    try:
        header = DatasetHeader.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_describe(exc)}") from None
    names = [t.name for t in header.tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DatasetError(f"{path}: field 'tools': tool {twice[0]!r} is declared twice")
    return header


@functools.cache
def _no_alias_loader() -> type:
    """Safe YAML without anchors and aliases.

    WHY: an alias repeats a node without copying its text, so a few hundred bytes
    of nested aliases expand to billions of nodes (a "billion laughs" bomb) and
    hang the loader. A dataset has no need of them: each case is written out.
    WHY built on first use: a run from a JSON dataset need not import YAML.
    """
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            event = self.peek_event()  # type: ignore[no-untyped-call]  # WHY: untyped in the PyYAML stubs
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise DatasetError(f"{self.name}: line {event.start_mark.line + 1}: YAML anchors and aliases "
                                   f"(&{event.anchor} / *{event.anchor}) are not accepted: write the value out")
            return super().compose_node(parent, index)

    return NoAliasLoader


def load_yaml(path: Path, text: str) -> Any:
    """YAML ``text`` read from ``path``; DatasetError naming the file for an anchor or
    alias, ValueError for text that is not YAML."""
    import yaml

    try:
        loader = _no_alias_loader()(text)  # a control character fails here already
        loader.name = str(path)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def json_lines(path: Path, lines: IO[bytes], start: int = 0, end: int | None = None) -> Iterator[Any]:
    """Each record of an open JSONL file, parsed as its line is read, from byte ``start`` (where
    ``lines`` is) to the line that starts at byte ``end``. Lines end at "\\n" (a "\\r" before it
    is dropped), as JSON Lines says: a JSON string may hold U+2028 and the like.

    WHY a line at a time, not the file's text: a large dataset's text (24 MB at 100,000 cases)
    was held whole while its cases loaded, the peak of a large run's memory."""
    number = 0
    with lines:
        for raw in lines:
            if end is not None and start >= end:
                return
            offset, start = start, start + len(raw)
            try:
                text = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}: not UTF-8 text (byte {offset + exc.start})") from None
            # WHY a lone "\r" ends a line too: it did when the file was read as text (universal
            # newlines), and JSON has none inside a string
            for line in text.split("\r") if "\r" in text else (text,):
                number += 1
                if line.strip():
                    yield _record(path, number, line)


def _record(path: Path, number: int, line: str) -> Any:
    try:
        return jsontext.load(line)
    except ValueError as exc:  # json's "line 1" would be wrong: say which line of the file
        raise DatasetError(f"{path}: line {number}: cannot parse: {exc}") from None
    except RecursionError:  # the parser recurses
        raise DatasetError(f"{path}: line {number}: cannot parse: nested too deeply") from None


def validate(path: Path, index: int, raw: Any, context: dict[str, Any]) -> GoldenCase:
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: {_label(raw, index)}: expected an object, got {type(raw).__name__}")
    try:
        return GoldenCase.model_validate(raw, context=context)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_label(raw, index)}: {_describe(exc)}") from None


def _label(raw: Any, index: int) -> str:
    """How an error names a case: by its id when it has one, else by its place in the file
    (worked out for an error only: ~1% of a large file's load)."""
    case_name = raw.get("id") if isinstance(raw, dict) else None
    return f"case {case_name!r}" if isinstance(case_name, str) else f"case #{index + 1}"


def _describe(exc: ValidationError) -> str:
    return describe(exc, GoldenCase)



def record_at(path: Path, index: int) -> Any:
    """The raw record at ``index`` of the file, read again (a duplicate id's first case, to say what differs)."""
    return next(itertools.islice(read_records(path)[0], index, None))

