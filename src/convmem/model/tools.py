"""Tool values: a tool definition as convmem holds it, whatever provider shape it came in, and a
tool of a tenant's registry (a definition with the hints and risk level selection uses)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

Risk = Literal["low", "medium", "high"]
RISKS: tuple[str, ...] = get_args(Risk)
# A tool at this level is never offered unless the caller allows it for the request.
RISKY: Risk = "high"

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class ToolSpec:
    """One function the model may call: its name, what it does, and its arguments' JSON Schema
    (an object schema). ``strict`` is OpenAI's structured-outputs flag, kept when given."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    strict: bool | None = None


@dataclass(frozen=True)
class RegisteredTool:
    """A tool in a tenant's registry. ``use_when`` are short hints of the requests it serves
    ("user asks where a parcel is"); they join the description when relevance is ranked and are
    never sent to the model."""

    spec: ToolSpec
    use_when: tuple[str, ...] = ()
    risk: Risk = "low"
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def risky(self) -> bool:
        return self.risk == RISKY

    @property
    def document(self) -> str:
        """The text the tool is found by in the store's search index (never sent to the model):
        its name as words, its description, its "use when" hints, and its arguments' names and
        descriptions."""
        spec = self.spec
        name = _CAMEL.sub(" ", spec.name).replace("_", " ").replace("-", " ")
        parts = [name, spec.description, *self.use_when]
        properties = spec.parameters.get("properties")
        if isinstance(properties, Mapping):
            for key, schema in properties.items():
                parts.append(_CAMEL.sub(" ", key).replace("_", " "))
                if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
                    parts.append(schema["description"])
        return "\n".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "description": self.spec.description,
            "parameters": dict(self.spec.parameters),
            "strict": self.spec.strict,
            "use_when": list(self.use_when),
            "risk": self.risk,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
