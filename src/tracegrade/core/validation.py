"""pydantic's validation errors in words a dataset or config author can act on.

    >>> from pydantic import BaseModel, ConfigDict, ValidationError
    >>> class Case(BaseModel):
    ...     model_config = ConfigDict(extra="forbid")
    ...     answer: str = ""
    ...     question: str
    >>> try:
    ...     Case.model_validate({"question": "q", "anwser": "x"})
    ... except ValidationError as exc:
    ...     print(describe(exc, Case))
    field 'anwser': unknown key (did you mean 'answer'?)

Every problem is named (up to ``limit``), never pydantic's page with its URL.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel


def describe(exc: ValidationError, model: type[BaseModel] | None = None, limit: int = 5) -> str:
    """Each problem as ``field 'a.b': what is wrong``, joined by "; "."""
    problems = [_one(error, model) for error in exc.errors()[:limit]]
    more = exc.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _one(error: Any, model: type[BaseModel] | None) -> str:
    field = ".".join(str(part) for part in error["loc"]) or "(the whole entry)"
    if error["type"] == "extra_forbidden":
        key = str(error["loc"][-1]) if error["loc"] else ""
        close = _close(key, known_keys(model))
        return f"field {field!r}: unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
    if error["type"] == "missing":
        return f"field {field!r}: required, but missing"
    return f"field {field!r}: {str(error['msg']).removeprefix('Value error, ')}"


def _close(key: str, known: tuple[str, ...]) -> list[str]:
    """The known key ``key`` most likely meant; a snake_case key is compared in camelCase too."""
    for form in dict.fromkeys((to_camel(key), key)):
        close = difflib.get_close_matches(form, known, n=3, cutoff=0.7)
        if close:  # WHY the longest shared start first: 'expectedToolArgs' meant expectedToolArgument
            return [max(close, key=lambda k: len(os.path.commonprefix([k, form])))]
    return []


@lru_cache(maxsize=32)
def known_keys(model: type[BaseModel] | None) -> tuple[str, ...]:
    """Every key a document of ``model`` may use, at any depth (wire names)."""
    if model is None:
        return ()
    schema = model.model_json_schema(by_alias=True)
    names: set[str] = set()
    for definition in [schema, *schema.get("$defs", {}).values()]:
        names.update(definition.get("properties", {}))
    return tuple(sorted(names))
