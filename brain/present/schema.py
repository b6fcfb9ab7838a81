"""The JSON Schema of a result's JSON object, read off the dataclass `data()` builds it from.

The MCP server declares each tool's `outputSchema` with it (brain.mcp_server): the schema comes
from the same dataclass, field by field, as the structured content, so the two cannot drift (a
field added to a result is a key in both; tests/test_mcp.py validates every tool's answer against
its schema). JSON Schema 2020-12, the MCP default when a schema names none
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools, "Output Schema").
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from brain.present import json_fields

_SCALARS: dict[Any, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def schema(
    cls: type[Any],
    *,
    names: dict[str, Any] | None = None,
    override: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The schema of `data(instance of cls)`: an object with exactly the JSON fields, in order,
    each required. `names` resolves annotations imported only for type checking (`Hit`),
    `override` gives a field another type than its annotation (find's hits are built as dicts
    of HitDoc's keys)."""
    hints = typing.get_type_hints(cls, localns=names or {})
    props = {}
    for f in json_fields(cls):
        hint = (override or {}).get(f.name, hints[f.name])
        props[f.name] = _of(hint, names or {})
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def one_of(*schemas: dict[str, Any]) -> dict[str, Any]:
    """An object that is one of `schemas` (a tool with two answers: recall's listing or a turn).
    The root stays `type: object`, as MCP's outputSchema asks."""
    return {"type": "object", "anyOf": list(schemas)}


def _of(hint: Any, names: dict[str, Any]) -> dict[str, Any]:
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if hint is Any:
        return {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_of(a, names) for a in args]
        simple = [p["type"] for p in parts if list(p) == ["type"] and isinstance(p["type"], str)]
        return {"type": simple} if len(simple) == len(parts) else {"anyOf": parts}
    if origin in (tuple, list):
        item = args[0] if args else Any
        return {"type": "array", "items": _of(item, names)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return schema(hint, names=names)
    raise TypeError(f"no JSON Schema for {hint!r}")
