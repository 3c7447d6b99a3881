"""The model that proposes candidate memories: any OpenAI-compatible chat endpoint, configured
as the LLM summarizer is (``LLMSummarizerConfig``: ``convmem worker --llm-base-url …``).

It waits on the network, so only the worker calls it. Failed calls are retried as the
summarizer's are; an answer that is not the JSON asked for yields no candidates and a reason —
never a memory.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convmem.consolidate.extract import Candidate, ExtractionError, build_prompt, parse_candidates
from convmem.model.messages import Message
from convmem.summarize.llm import LLMSummarizerConfig

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessageParam

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Extraction:
    """What a model proposed (unchecked), or why it proposed nothing (``reason``)."""

    candidates: tuple[Candidate, ...]
    reason: str | None = None


class LLMExtractor:
    """Candidate memories from a model behind an OpenAI-compatible API."""

    def __init__(self, config: LLMSummarizerConfig) -> None:
        self.config = config
        self._client: OpenAI | None = None

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def _openai(self) -> OpenAI:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.config.base_url, api_key=self.config.api_key,
                timeout=self.config.timeout, max_retries=0,
            )  # fmt: skip
        return self._client

    def extract(self, turns: Sequence[Message]) -> Extraction:
        import openai

        system, user = build_prompt(turns)
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        reason = "no attempt"
        attempts = 1 + self.config.retries
        for attempt in range(attempts):
            if attempt:
                time.sleep(self.config.retry_backoff * 2 ** (attempt - 1))
            try:
                response = self._openai().chat.completions.create(
                    model=self.config.model, messages=messages,
                    temperature=self.config.temperature,
                    max_tokens=self.config.max_output_tokens,
                    response_format={"type": "json_object"},
                )  # fmt: skip
            except openai.APITimeoutError:
                reason = "timeout"
            except openai.APIStatusError as exc:
                reason = f"http {exc.status_code}"
            except openai.APIError as exc:
                reason = type(exc).__name__
            else:
                text = response.choices[0].message.content if response.choices else None
                try:
                    return Extraction(tuple(parse_candidates(text)))
                except ExtractionError as exc:
                    reason = f"invalid output: {exc}"
            log.warning("memory extraction attempt %d/%d failed: %s", attempt + 1, attempts, reason)
        return Extraction((), f"{reason} (after {attempts} attempts)")
