"""The model a request is assembled for."""

from __future__ import annotations

import math
from dataclasses import dataclass

from convmem.errors import InvalidInput


@dataclass(frozen=True)
class ModelProfile:
    """Context window, output reservation and tokenizer of the model the request is for.

    ``tokenizer`` is a tiktoken encoding (``o200k_base``, ``cl100k_base``) or ``estimate`` (the
    conservative byte-based estimate, used for Anthropic models). ``safety_margin`` tokens are
    kept free on top of ``max_output``; by default 2 % of the window, at least 16, because a
    provider's own framing can differ from our count by a few tokens per message. ``name`` is the
    provider's model id ("gpt-4o", "claude-sonnet-4-5"): what a tool definition costs depends on
    it (``convmem.tools.cost``); without it the highest published cost is charged.
    """

    context_window: int = 8192
    max_output: int = 1024
    tokenizer: str = "o200k_base"
    safety_margin: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise InvalidInput("context_window must be positive")
        if self.max_output < 0 or self.max_output >= self.context_window:
            raise InvalidInput("max_output must be at least 0 and below context_window")
        if self.safety_margin is not None and self.safety_margin < 0:
            raise InvalidInput("safety_margin must not be negative")
        if self.name is not None and (
            not isinstance(self.name, str) or not 0 < len(self.name) <= 200
        ):
            raise InvalidInput("the model name must be a string of 1 to 200 characters")

    @property
    def margin(self) -> int:
        if self.safety_margin is not None:
            return self.safety_margin
        return max(16, math.ceil(self.context_window * 0.02))

    @property
    def input_budget(self) -> int:
        """Tokens the request itself may use: the window less output and margin."""
        return self.context_window - self.max_output - self.margin
