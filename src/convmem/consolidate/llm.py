"""The model that proposes candidate memories: any OpenAI-compatible chat endpoint, configured
as the LLM summarizer is (``LLMSummarizerConfig``: ``convmem worker --llm-base-url …``).

It waits on the network, so only the worker calls it. Failed calls are retried as the
summarizer's are; an answer that is not the JSON asked for yields no candidates and a reason —
never a memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from convmem.consolidate.extract import Candidate, build_prompt, parse_candidates
from convmem.model.messages import Message
from convmem.summarize.chat import JsonChat
from convmem.summarize.llm import LLMSummarizerConfig


@dataclass(frozen=True)
class Extraction:
    """What a model proposed (unchecked), or why it proposed nothing (``reason``)."""

    candidates: tuple[Candidate, ...]
    reason: str | None = None


class LLMExtractor:
    """Candidate memories from a model behind an OpenAI-compatible API."""

    def __init__(self, config: LLMSummarizerConfig) -> None:
        self.config = config
        self._chat = JsonChat(config, "memory extraction")

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def extract(self, turns: Sequence[Message]) -> Extraction:
        system, user = build_prompt(turns)
        answer = self._chat.ask(system, user, parse_candidates)
        if answer.value is None:
            return Extraction((), answer.reason)
        return Extraction(tuple(answer.value))
