"""How a request's input budget is shared out: pure arithmetic over token counts and the shares
of ``AssemblyOptions``, kept in one place so every section's room is computed the same way.

Plain numbers in, plain numbers out: ``assemble`` (the window) and the engine's request steps
(memories, retrieval) both call these, and neither has to import the other for it.
"""

from __future__ import annotations


def memory_caps(input_budget: int, memory_share: float) -> tuple[int, int]:
    """(the memory block's cap, the late memories' cap): the late ones get half the block's."""
    block = int(input_budget * memory_share)
    return block, block // 2


def retrieved_reserve(input_budget: int, retrieved_share: float, max_tokens: int) -> int:
    """The room held for the retrieved section whenever history was evicted."""
    return min(int(input_budget * retrieved_share), max_tokens)


def summary_reserve(left: int, threshold: float | None) -> int:
    """The summary's room out of ``left`` (the budget after the stable fixed parts): what
    verbatim history may not take when it may fill only ``threshold`` of it (None: no summary)."""
    if threshold is None:
        return 0
    return max(0, left - int(left * threshold))


def eviction_block(input_budget: int, block_share: float) -> int:
    """Tokens by which the window's start advances at a time (0: blocks off)."""
    return int(input_budget * block_share)


def stub_threshold(history_budget: int, max_tool_result_share: float) -> int:
    """A tool result above this many tokens is stubbed even when it would fit."""
    return max(1, int(history_budget * max_tool_result_share))


def tools_cap(input_budget: int, tools_share: float) -> int:
    """The most tokens a request's tools chosen from the registry may cost."""
    return int(input_budget * tools_share)


def documents_room(input_budget: int, share: float) -> int:
    """The room held for the documents section whenever a request carries documents: the same
    for any documents, so the window does not depend on which come or how long they are."""
    return int(input_budget * share)
