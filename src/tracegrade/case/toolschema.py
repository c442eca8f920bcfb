"""A call's arguments against its tool's JSON-Schema ``parameters``.

    >>> schema = {"type": "object", "properties": {"date": {"type": "string"},
    ...           "passengers": {"type": "integer", "default": 1}}, "required": ["date"]}
    >>> check_schema(schema)
    >>> [(m.kind, m.path) for m in validate(schema, {"passengers": "2", "seat": "12A"})]
    [('missing', 'date'), ('type', 'passengers'), ('unknown', 'seat')]

The subset agents publish for function calling, checked by plain code (a
general validator costs more than every other check together): ``type`` (one
or a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``anyOf``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``, ``maxLength``,
``pattern``, ``minItems``, ``maxItems``; ``default`` is read (an explicit
default is the same call); annotations (``description``, ``title``,
``examples``, ``format``, ...) are ignored. Any other keyword (``$ref``,
``oneOf``, ...) is a load error: a constraint tracegrade would silently skip
is worse than none.

WHY an argument missing from ``properties`` is ``unknown`` even though JSON
Schema allows extra keys by default: a tool has no argument it does not
declare; ``"additionalProperties": true`` says otherwise.
"""

from __future__ import annotations

import operator
from typing import Any, Mapping

from tracegrade.case.saferegex import PatternError, compile_pattern, search
from tracegrade.case.argmatch import MISSING, Mismatch, SpecError, json_type, same_value

TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
_CHECKED = {"type", "enum", "const", "properties", "required", "additionalProperties", "items", "anyOf",
            "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
            "minItems", "maxItems", "default"}
_IGNORED = {"description", "title", "examples", "format", "$comment", "deprecated", "readOnly", "writeOnly",
            "$schema", "strict"}


def check_schema(schema: Any, path: str = "parameters") -> None:
    """SpecError unless the schema is an object schema in the supported subset."""
    _check(schema, path)
    if schema.get("type") != "object":
        raise SpecError(path, 'the parameters of a tool must be {"type": "object", ...}')


def _check(schema: Any, path: str) -> None:
    if not isinstance(schema, Mapping):
        raise SpecError(path, f"a schema must be an object, got {json_type(schema)}")
    unknown = set(schema) - _CHECKED - _IGNORED
    if unknown:
        raise SpecError(path, f"keyword {sorted(unknown)[0]!r} is not checked by tracegrade; "
                              f"supported: {', '.join(sorted(_CHECKED))}")
    types = schema.get("type", [])
    for t in [types] if isinstance(types, str) else types:
        if t not in TYPES:
            raise SpecError(f"{path}.type", f"{t!r} is not a JSON Schema type ({', '.join(TYPES)})")
    for key, sub in (schema.get("properties") or {}).items():
        _check(sub, f"{path}.properties.{key}")
    if isinstance(schema.get("items"), dict):
        _check(schema["items"], f"{path}.items")
    if isinstance(schema.get("additionalProperties"), Mapping):
        _check(schema["additionalProperties"], f"{path}.additionalProperties")
    for i, sub in enumerate(schema.get("anyOf", [])):
        _check(sub, f"{path}.anyOf[{i}]")
    required = schema.get("required", [])
    missing = [r for r in required if r not in (schema.get("properties") or {})]
    if missing:
        raise SpecError(f"{path}.required", f"{missing[0]!r} is required but not among the properties")
    if "pattern" in schema:
        try:
            compile_pattern(schema["pattern"])
        except PatternError as exc:
            raise SpecError(f"{path}.pattern", f"does not compile: {exc}") from None


def defaults(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The declared default of each top-level parameter."""
    props = (schema or {}).get("properties") or {}
    return {k: v["default"] for k, v in props.items() if isinstance(v, Mapping) and "default" in v}


def validate(schema: Mapping[str, Any], value: Any, path: str = "", strict: bool = False) -> list[Mismatch]:
    """Every way the value breaks the schema ([] = valid). ``strict``: a float is
    never an ``integer`` (JSON Schema counts 5.0 as one; a tool typed like
    Python's does not)."""
    types = schema.get("type")
    if types is not None and not _has_type(value, [types] if isinstance(types, str) else types, strict):
        return [Mismatch("type", path, " or ".join([types] if isinstance(types, str) else types),
                         value)]
    if "anyOf" in schema and all(validate(s, value, path, strict) for s in schema["anyOf"]):
        return [Mismatch("type", path, "a value matching one of the anyOf schemas", value)]
    found = _value_rules(schema, value, path)
    if isinstance(value, dict):
        found += _object(schema, value, path, strict)
    elif isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        found += [m for i, item in enumerate(value) for m in validate(schema["items"], item, f"{path}[{i}]", strict)]
    return found


def _has_type(value: Any, types: list[str], strict: bool = False) -> bool:
    kind = "number" if strict and isinstance(value, float) else json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


_VALUE_RULES = frozenset({"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                          "minLength", "maxLength", "pattern", "minItems", "maxItems"})


def _value_rules(schema: Mapping[str, Any], value: Any, path: str) -> list[Mismatch]:
    if _VALUE_RULES.isdisjoint(schema):  # most parameters say only their type
        return []
    wrong = []
    if "enum" in schema and not any(same_value(option, value) for option in schema["enum"]):
        wrong.append(f"one of {schema['enum']}")
    if "const" in schema and not same_value(schema["const"], value):
        wrong.append(f"exactly {schema['const']!r}")
    if json_type(value) in ("integer", "number"):
        for key, ok in (("minimum", operator.ge), ("maximum", operator.le),
                        ("exclusiveMinimum", operator.gt), ("exclusiveMaximum", operator.lt)):
            if key in schema and not ok(value, schema[key]):
                wrong.append(f"{key} {schema[key]}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", len(value)):
            wrong.append("a length within the schema's limits")
        if "pattern" in schema and not search(schema["pattern"], value):  # RE2: linear in the value
            wrong.append(f"text matching /{schema['pattern']}/")
    if isinstance(value, (list, tuple)) and not (schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value))):
        wrong.append("a number of items within the schema's limits")
    return [Mismatch("value", path, w, value) for w in wrong]


def _object(schema: Mapping[str, Any], value: Mapping[str, Any], path: str, strict: bool) -> list[Mismatch]:
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", False)
    found = [Mismatch("missing", _join(path, key), "a required argument", MISSING)
             for key in schema.get("required", []) if key not in value]
    for key, item in value.items():
        where = _join(path, key)
        if key in props:
            found += validate(props[key], item, where, strict)
        elif isinstance(extra, dict):
            found += validate(extra, item, where, strict)
        elif extra is not True:
            found.append(Mismatch("unknown", where, "not a parameter of the tool", item))
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
