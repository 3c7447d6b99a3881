"""Tool definitions in and out of the providers' shapes.

Accepted (each validated; a bad one is an ``InvalidInput`` naming the tool's position and what is
wrong, never its text):

* OpenAI Chat Completions: ``{"type": "function", "function": {"name", "description",
  "parameters", "strict"?}}``
* OpenAI Responses (and the legacy ``functions`` list): ``{"type": "function"?, "name",
  "description", "parameters", "strict"?}``
* Anthropic Messages: ``{"name", "description", "input_schema"}``

Rendered in the request's format: the first shape for ``openai``, the second for ``responses``,
the third for ``anthropic``. Both providers require the arguments' schema to be an object schema;
a tool without one gets ``{"type": "object", "properties": {}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from convmem.errors import InvalidInput
from convmem.model.tools import ToolSpec

# OpenAI's and Anthropic's rule for a function's name.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# OpenAI's limit on tools per request; Anthropic's is higher, but no request needs more.
MAX_TOOLS = 128
MAX_DESCRIPTION_CHARS = 4096
MAX_SCHEMA_BYTES = 32_768
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def _fail(position: int, problem: str) -> InvalidInput:
    return InvalidInput(f"tool {position}: {problem}")


def check_tool_name(name: object, position: int = 0) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _fail(position, "name must be 1-64 letters, digits, '_' or '-'")
    return name


def check_schema(schema: object, position: int = 0) -> dict[str, Any]:
    """An arguments schema: a JSON object schema, JSON-serialisable, under the size limit."""
    if not isinstance(schema, Mapping) or not all(isinstance(k, str) for k in schema):
        raise _fail(position, "the arguments schema must be a JSON object")
    try:
        text = json.dumps(dict(schema), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise _fail(position, "the arguments schema must be JSON-serialisable") from exc
    if "\x00" in text:
        raise _fail(position, "the arguments schema must not contain NUL characters")
    if len(text.encode()) > MAX_SCHEMA_BYTES:
        raise _fail(position, f"the arguments schema is over {MAX_SCHEMA_BYTES} bytes")
    loaded: dict[str, Any] = json.loads(text)
    if loaded.get("type", "object") != "object":
        raise _fail(position, "the arguments schema must have type 'object'")
    properties = loaded.get("properties", {})
    if not isinstance(properties, dict) or not all(
        isinstance(p, dict) for p in properties.values()
    ):
        raise _fail(position, "'properties' must map each argument to a schema object")
    return loaded or dict(_EMPTY_OBJECT)


def check_description(description: object, position: int = 0) -> str:
    if description is None:
        return ""
    if not isinstance(description, str):
        raise _fail(position, "description must be a string")
    if "\x00" in description or len(description) > MAX_DESCRIPTION_CHARS:
        raise _fail(position, f"description must be NUL-free and at most {MAX_DESCRIPTION_CHARS} "
                    "characters")  # fmt: skip
    return description


def parse_tool(value: object, position: int = 0) -> ToolSpec:
    """One tool definition in any accepted shape."""
    if isinstance(value, ToolSpec):
        return value
    if not isinstance(value, Mapping):
        raise _fail(position, "must be an object (an OpenAI function or an Anthropic tool)")
    kind = value.get("type", "function")
    if "input_schema" in value:  # Anthropic
        inner, schema_key = value, "input_schema"
        if kind not in ("function", "custom"):
            raise _fail(position, f"unsupported tool type {str(kind)[:40]!r}")
    else:
        if kind != "function":
            raise _fail(position, "only function tools can be counted and offered")
        function = value.get("function")
        if function is not None and not isinstance(function, Mapping):
            raise _fail(position, "'function' must be an object")
        inner, schema_key = (function if function is not None else value), "parameters"
    strict = inner.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise _fail(position, "'strict' must be true or false")
    schema = inner.get(schema_key)
    return ToolSpec(
        name=check_tool_name(inner.get("name"), position),
        description=check_description(inner.get("description"), position),
        parameters=dict(_EMPTY_OBJECT) if schema is None else check_schema(schema, position),
        strict=strict,
    )


def parse_tools(values: object) -> list[ToolSpec]:
    """A request's tools: a list of definitions, at most ``MAX_TOOLS``, names distinct."""
    if values is None:
        return []
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise InvalidInput("tools must be a list of tool definitions")
    if len(values) > MAX_TOOLS:
        raise InvalidInput(f"at most {MAX_TOOLS} tools per request")
    specs = [parse_tool(value, i) for i, value in enumerate(values)]
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.name in seen:
            raise _fail(i, "two tools share this name")
        seen.add(spec.name)
    return specs


def render_tool(spec: ToolSpec, format: str) -> dict[str, Any]:
    """One tool in the request's format (``openai``, ``responses`` or ``anthropic``)."""
    if format == "anthropic":
        return {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.parameters),
        }
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.parameters),
    }
    if spec.strict is not None:
        function["strict"] = spec.strict
    if format == "responses":
        return {"type": "function", **function}
    return {"type": "function", "function": function}


def render_tools(specs: Sequence[ToolSpec], format: str) -> list[dict[str, Any]]:
    return [render_tool(spec, format) for spec in specs]
