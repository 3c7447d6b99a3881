"""Which of a registry's tools a request offers, and why each other one is left out.

In order: a risky tool (risk ``high``) is never offered unless the caller allows it for this
request; a tool called earlier on the branch whose result is still in the window stays offered
(the model may follow up on it); then the relevant tools (``convmem.domain.search.rank_tools``),
best first, while they fit the count cap and the token cap. The caller's own tools (passed to
``assemble``) are always sent and take their names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from convmem.model.tools import RegisteredTool, ToolSpec
from convmem.retrieval.fusion import Fused

# the reasons a report gives for a registry tool the request does not offer
RISKY = "risky: not allowed for this request"
GIVEN = "the caller passed a tool of this name"
NOT_RELEVANT = "not relevant to this request"
OVER_COUNT = "relevant, but below the top {k}"
OVER_TOKENS = "relevant, but over the tools' token cap"
# why a tool is offered whatever its rank
FOLLOW_UP = "called earlier; its result is in the window"


@dataclass(frozen=True)
class ToolSelection:
    offered: list[ToolSpec] = field(default_factory=list)
    suppressed: list[tuple[str, str]] = field(default_factory=list)


def select_tools(
    registry: Sequence[RegisteredTool],
    ranked: Sequence[Fused[str]],
    *,
    cost: Callable[[ToolSpec], int],
    max_tools: int,
    max_tokens: int,
    allow_risky: bool | Collection[str] = False,
    in_window: Collection[str] = (),
    given: Collection[str] = (),
) -> ToolSelection:
    """Choose from ``registry``. ``ranked`` is the relevance ranking (tool names with evidence,
    best first); ``in_window`` the tools called on the branch whose results the window holds;
    ``given`` the names of the caller's own tools."""
    by_name = {tool.name: tool for tool in registry}
    suppressed: dict[str, str] = {}
    allowed: list[RegisteredTool] = []
    for tool in registry:
        if tool.name in given:
            suppressed[tool.name] = GIVEN
        elif tool.risky and not (allow_risky is True or (
                not isinstance(allow_risky, bool) and tool.name in allow_risky)):  # fmt: skip
            suppressed[tool.name] = RISKY
        else:
            allowed.append(tool)
    open_names = {tool.name for tool in allowed}
    offered: list[ToolSpec] = []
    spent = 0
    # follow-ups first: the model must be able to call again what it is reading the result of
    for name in in_window:
        if name in open_names and name not in {s.name for s in offered}:
            offered.append(by_name[name].spec)
            spent += cost(by_name[name].spec)
    chosen = {spec.name for spec in offered}
    for item in ranked:
        name = item.key
        if name not in open_names or name in chosen:
            continue
        spec = by_name[name].spec
        if len(offered) >= max_tools:
            suppressed[name] = OVER_COUNT.format(k=max_tools)
            continue
        price = cost(spec)
        if spent + price > max_tokens:
            suppressed[name] = OVER_TOKENS
            continue
        offered.append(spec)
        chosen.add(name)
        spent += price
    for tool in allowed:
        if tool.name not in chosen and tool.name not in suppressed:
            suppressed[tool.name] = NOT_RELEVANT
    return ToolSelection(offered, sorted(suppressed.items()))
