"""One JSON answer from an OpenAI-compatible chat endpoint, for every model convmem asks (the
summarizer, the memory extractor, the entity extractor): the client made once, failed attempts
retried with growing waits, each failure named by its kind — never by what was sent or said."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

log = logging.getLogger(__name__)

T = TypeVar("T")


class ChatEndpoint(Protocol):
    """Where the model is and how to ask it (``LLMSummarizerConfig`` is one)."""

    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def timeout(self) -> float: ...
    @property
    def temperature(self) -> float: ...
    @property
    def max_output_tokens(self) -> int: ...
    @property
    def retries(self) -> int: ...
    @property
    def retry_backoff(self) -> float: ...


@dataclass(frozen=True)
class Answer(Generic[T]):
    """The parsed answer, or why there is none (``reason``, after every attempt)."""

    value: T | None
    reason: str | None = None


# Called after each attempt with the response (None when the call failed) and its seconds.
AttemptHook = Callable[["ChatCompletion | None", float], None]


class JsonChat:
    """Asks ``endpoint``'s model for a JSON object; ``parse`` reads the answer's text and raises
    ``ValueError`` for one that is not what was asked (then the attempt counts as failed)."""

    def __init__(self, endpoint: ChatEndpoint, what: str) -> None:
        self.endpoint = endpoint
        self.what = what  # names the caller in the log: "summarizer", "entity extractor", …
        self._client: OpenAI | None = None

    def client(self) -> OpenAI:
        if self._client is None:
            from openai import OpenAI

            # retries are ours, so every attempt is counted and logged the same way
            self._client = OpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key,
                timeout=self.endpoint.timeout,
                max_retries=0,
            )
        return self._client

    def ask(
        self,
        system: str,
        user: str,
        parse: Callable[[str | None], T],
        on_attempt: AttemptHook | None = None,
    ) -> Answer[T]:
        import openai

        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        endpoint = self.endpoint
        reason = "no attempt"
        attempts = 1 + endpoint.retries
        for attempt in range(attempts):
            if attempt:
                time.sleep(endpoint.retry_backoff * 2 ** (attempt - 1))
            started = time.monotonic()
            try:
                response = self.client().chat.completions.create(
                    model=endpoint.model,
                    messages=messages,
                    temperature=endpoint.temperature,
                    max_tokens=endpoint.max_output_tokens,
                    response_format={"type": "json_object"},
                )
            except openai.APITimeoutError:
                reason = "timeout"
            except openai.APIStatusError as exc:
                reason = f"http {exc.status_code}"
            except openai.APIError as exc:
                reason = type(exc).__name__
            else:
                if on_attempt is not None:
                    on_attempt(response, time.monotonic() - started)
                text = response.choices[0].message.content if response.choices else None
                try:
                    return Answer(parse(text))
                except ValueError as exc:
                    reason = f"invalid output: {exc}"
                log.warning("%s attempt %d/%d failed: %s", self.what, attempt + 1, attempts, reason)
                continue
            if on_attempt is not None:
                on_attempt(None, time.monotonic() - started)
            log.warning("%s attempt %d/%d failed: %s", self.what, attempt + 1, attempts, reason)
        return Answer(None, f"{reason} (after {attempts} attempts)")
