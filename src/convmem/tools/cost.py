"""What tool definitions cost in a request, counted the way each provider charges for them.

**OpenAI** (``openai`` and ``responses`` formats). OpenAI renders the functions into the system
message in its own syntax and does not publish it; the OpenAI Cookbook's "How to count tokens with
tiktoken" gives a counting recipe that matches the API's reported usage for flat schemas:

* 12 tokens once per request that carries tools (``func_end``);
* per function 7 tokens (gpt-4o family, ``o200k_base``) or 10 (gpt-4 / gpt-3.5, ``cl100k_base``)
  (``func_init``), plus the tokens of ``"{name}:{description}"`` (a final period dropped);
* with properties, 3 tokens (``prop_init``), then per property 3 (``prop_key``) plus the tokens of
  ``"{name}:{type}:{description}"``; a property with an ``enum`` adds -3 plus, per value, 3 and
  the value's tokens.

The recipe reads nothing else, so it under-counts nested objects, array ``items``, ``anyOf`` and
the like. convmem charges, on top of it, the compact JSON of every key of a property schema the
recipe does not read (an upper bound: OpenAI's rendering of a nested schema is terser than its
JSON). The ``estimate`` tokenizer uses the cl100k figures (the larger).

**Anthropic** (``anthropic`` format). Anthropic publishes the tokens of the system prompt it adds
when a request carries tools, per model and ``tool_choice`` (docs: "Tool use" → pricing). convmem
charges the larger of the two ``tool_choice`` columns for the profile's model (the caller picks
``tool_choice`` at the provider call, after assembly) and, for a model not in the table or a
profile without a name, the largest figure published (530). Each tool then costs the tokens of
its compact JSON (``name``, ``description``, ``input_schema``), counted with the request's
tokenizer — for Anthropic models the conservative ``estimate``.

All of it is a constant per request: it does not grow with the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from convmem.content.tokens import TokenCounter
from convmem.model.tools import ToolSpec

# OpenAI Cookbook, "How to count tokens with tiktoken", section 7 (num_tokens_for_tools):
# https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb
# Checked 2026-12-01 against the notebook: gpt-4o/gpt-4o-mini func_init 7, gpt-3.5-turbo/gpt-4 10;
# prop_init 3, prop_key 3, enum_init -3, enum_item 3, func_end 12 for both.
FUNC_END = 12
PROP_INIT = 3
PROP_KEY = 3
ENUM_INIT = -3
ENUM_ITEM = 3
_FUNC_INIT = {"o200k_base": 7, "cl100k_base": 10}
_FUNC_INIT_DEFAULT = 10
_RECIPE_KEYS = frozenset({"type", "description", "enum"})

# Anthropic's tool-use system prompt, tokens: (tool_choice auto or none, tool_choice any or tool),
# by model id prefix, most specific first. Source: Anthropic's docs, "Tool use with Claude" →
# pricing (https://docs.anthropic.com/en/docs/build-with-claude/tool-use, formerly
# /en/docs/tool-use-pricing-and-tokens). Checked 2026-12-01: the Claude 3 rows (Opus 530/281,
# Sonnet 159/235, Haiku 264/340) match the published table; the Claude 4 / 3.7 / 3.5 Sonnet
# (Oct) rows 346/313, 3.5 Sonnet (June) 294/261 and 3.5 Haiku 264/340 are from the current
# table of that page.
ANTHROPIC_TOOL_PROMPT: tuple[tuple[str, tuple[int, int]], ...] = (
    ("claude-3-5-sonnet-20240620", (294, 261)),
    ("claude-3-5-sonnet", (346, 313)),
    ("claude-3-7-sonnet", (346, 313)),
    ("claude-3-5-haiku", (264, 340)),
    ("claude-3-opus", (530, 281)),
    ("claude-3-sonnet", (159, 235)),
    ("claude-3-haiku", (264, 340)),
    ("claude-opus-4", (346, 313)),
    ("claude-sonnet-4", (346, 313)),
    ("claude-haiku-4", (346, 313)),
)
ANTHROPIC_TOOL_PROMPT_UNKNOWN = max(max(pair) for _, pair in ANTHROPIC_TOOL_PROMPT)


def anthropic_tool_prompt(model: str | None) -> int:
    """Tokens of Anthropic's tool-use system prompt for ``model`` (see the module docstring)."""
    if model:
        for prefix, pair in ANTHROPIC_TOOL_PROMPT:
            if model.startswith(prefix):
                return max(pair)
    return ANTHROPIC_TOOL_PROMPT_UNKNOWN


def _strip_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _openai_property(counter: TokenCounter, name: str, schema: Mapping[str, Any]) -> int:
    kind = schema.get("type", "")
    kind_text = kind if isinstance(kind, str) else _compact(kind)
    description = schema.get("description", "")
    description = description if isinstance(description, str) else _compact(description)
    total = PROP_KEY + counter.count(f"{name}:{kind_text}:{_strip_period(description)}")
    enum = schema.get("enum")
    if isinstance(enum, list):
        total += ENUM_INIT
        for item in enum:
            total += ENUM_ITEM + counter.count(item if isinstance(item, str) else _compact(item))
    rest = {k: v for k, v in schema.items() if k not in _RECIPE_KEYS}
    if rest:  # beyond the recipe: nested schemas, items, anyOf … (see the module docstring)
        total += counter.count(_compact(rest))
    return total


def openai_tool_tokens(counter: TokenCounter, spec: ToolSpec) -> int:
    """One function's tokens in an OpenAI request (without the per-request ``FUNC_END``)."""
    total = _FUNC_INIT.get(counter.name, _FUNC_INIT_DEFAULT)
    total += counter.count(f"{spec.name}:{_strip_period(spec.description)}")
    properties = spec.parameters.get("properties") or {}
    if properties:
        total += PROP_INIT
        total += sum(_openai_property(counter, k, v) for k, v in properties.items())
    # "required" is inside the recipe's figures (its example has one); "additionalProperties",
    # "$defs" and the rest are charged as JSON, to be safe
    rest = {k: v for k, v in spec.parameters.items() if k not in ("type", "properties", "required")}
    if rest:
        total += counter.count(_compact(rest))
    return total


def anthropic_tool_tokens(counter: TokenCounter, spec: ToolSpec) -> int:
    """One tool's tokens in an Anthropic request (without the tool-use system prompt)."""
    return counter.count(
        _compact(
            {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}
        )
    )


def tool_tokens(counter: TokenCounter, format: str, spec: ToolSpec) -> int:
    """One tool's own tokens in ``format``: what offering it adds to a request."""
    if format == "anthropic":
        return anthropic_tool_tokens(counter, spec)
    return openai_tool_tokens(counter, spec)


def tools_overhead(format: str, model: str | None) -> int:
    """What a request pays once for carrying any tools at all."""
    return anthropic_tool_prompt(model) if format == "anthropic" else FUNC_END


def tools_tokens(
    counter: TokenCounter, format: str, specs: Sequence[ToolSpec], model: str | None = None
) -> int:
    """Tokens the tool definitions add to a request in ``format`` (0 without tools)."""
    if not specs:
        return 0
    return tools_overhead(format, model) + sum(tool_tokens(counter, format, s) for s in specs)
