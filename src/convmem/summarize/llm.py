"""A summarizer for any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp, OpenAI).

The model gets a versioned prompt with the previous snapshot and the newly evicted turns, and
must answer with a snapshot as JSON. The answer is validated against the schema and checked
against the cited messages (``convmem.summarize.verify``). Failed calls and unusable answers are
retried; when every attempt fails, the extractive summarizer's result is returned with the reason
recorded, so a summary is never lost to a model outage. The cost record counts every attempt.

It waits on the network, so it never runs on the request path: ``inline`` is False and the
worker (``convmem worker``) runs it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convmem.errors import InvalidInput
from convmem.model.messages import Message
from convmem.model.snapshot import CATEGORIES, Snapshot, SnapshotSchemaError
from convmem.model.summary import SummaryCost
from convmem.summarize.base import SummaryResult
from convmem.summarize.chat import JsonChat
from convmem.summarize.extractive import ExtractiveSummarizer
from convmem.summarize.verify import verify_snapshot

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

log = logging.getLogger(__name__)

# v2: notes from tool results carry the tool and the result's time (attached by convmem from the
# cited ids, see convmem.summarize.provenance), and the prompt says what a tool turn is
PROMPT_VERSION = "llm-snapshot-v2"
MAX_TURN_CHARS = 4000  # a turn longer than this is cut for the prompt (tool dumps, pastes)

SYSTEM_PROMPT = """\
You maintain the state snapshot of a conversation whose older turns are leaving the model's
context window. You receive the previous snapshot (JSON) and the turns that were just evicted
(JSON, oldest first, each with its message id). Return the updated snapshot as one JSON object
with exactly these keys: "goal", "decisions", "constraints", "open_tasks", "open_questions",
"preferences", "facts". Each value is a list of notes; a note is
{"text": "...", "sources": ["<message id>", ...], "subject": "<short key or null>"}.

Rules:
- Carry the previous snapshot forward: keep its notes unless the new turns change them.
- Add what the new turns decide, constrain, assign, leave open, state as a preference or as a key
  fact, and the overall goal (at most one goal note).
- Remove tasks the turns report as done and questions the turns answer.
- A newer decision, preference or fact on the same subject replaces the older one (same
  "subject"); never keep both.
- Copy identifiers, numbers, dates, amounts, names and code exactly as written.
- "sources" lists the ids of the messages a note comes from: ids from the new turns, or ids a
  note of the previous snapshot already cites. Never invent ids.
- A turn with role "tool" is a system's answer to a tool call, not something the user said: a
  note taken from it cites that turn's id, so the note shows which tool answered and when.
- Be brief: one sentence per note. Answer with the JSON object only.
"""


@dataclass(frozen=True)
class LLMSummarizerConfig:
    """Where the model is and how hard to try. The key stays out of reprs and logs."""

    base_url: str
    model: str
    api_key: str = field(default="not-needed", repr=False)
    timeout: float = 60.0
    retries: int = 2  # attempts after the first
    retry_backoff: float = 1.0  # seconds before the first retry; doubles after each
    max_output_tokens: int = 2000
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if not self.base_url or not self.model:
            raise InvalidInput("the LLM summarizer needs a base URL and a model name")
        if self.timeout <= 0 or self.retries < 0 or self.retry_backoff < 0:
            raise InvalidInput("timeout must be positive; retries and backoff not negative")


def _turn(message: Message) -> dict[str, Any]:
    content = message.content
    if len(content) > MAX_TURN_CHARS:
        content = content[:MAX_TURN_CHARS] + " […]"
    value: dict[str, Any] = {"id": message.id, "role": message.role, "content": content}
    if message.tool_calls:
        value["tool_calls"] = [call.to_dict() for call in message.tool_calls]
    if message.tool_call_id is not None:
        value["tool_call_id"] = message.tool_call_id
    return value


def build_prompt(previous: Snapshot | None, turns: Sequence[Message]) -> tuple[str, str]:
    """The system and user message sent to the model (``PROMPT_VERSION`` names this wording)."""
    payload = {
        "previous_snapshot": (previous or Snapshot()).to_dict(),
        "new_turns": [_turn(message) for message in turns],
    }
    return SYSTEM_PROMPT, json.dumps(payload, ensure_ascii=False)


_FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_snapshot(text: str | None) -> Snapshot:
    """The model's answer as a snapshot; ``SnapshotSchemaError`` if it is not one."""
    if not text:
        raise SnapshotSchemaError("the answer is empty")
    fenced = _FENCED.match(text)
    try:
        document = json.loads(fenced.group(1) if fenced else text)
    except ValueError as exc:
        raise SnapshotSchemaError("the answer is not JSON") from exc
    if not isinstance(document, dict) or not set(document) & set(CATEGORIES):
        raise SnapshotSchemaError("the answer is not a snapshot object")
    # extra keys (a model's "notes" or "reasoning") are ignored; the categories must be right
    return Snapshot.from_dict(
        {key: _without_tools(document[key]) for key in CATEGORIES if key in document}
    )


def _without_tools(notes: object) -> object:
    """A category's notes without the "tools" a model may echo from the previous snapshot: tool
    provenance comes from the stored messages a note cites, never from the model."""
    if isinstance(notes, dict):  # a lone goal note
        return {key: value for key, value in notes.items() if key != "tools"}
    if isinstance(notes, list):
        return [_without_tools(note) if isinstance(note, dict) else note for note in notes]
    return notes


class LLMSummarizer:
    """Summaries by a model behind an OpenAI-compatible API, checked, with a safe fallback."""

    prompt_version = PROMPT_VERSION
    inline = False

    def __init__(
        self, config: LLMSummarizerConfig, fallback: ExtractiveSummarizer | None = None
    ) -> None:
        self.config = config
        self.fallback = fallback or ExtractiveSummarizer()
        self._chat = JsonChat(config, "summarizer")

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def summarize(self, previous: Snapshot | None, turns: Sequence[Message]) -> SummaryResult:
        system, user = build_prompt(previous, turns)
        cost = SummaryCost()

        def count(response: ChatCompletion | None, seconds: float) -> None:
            nonlocal cost
            usage = response.usage if response is not None else None
            cost += SummaryCost(
                1, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0,
                seconds,
            )  # fmt: skip

        answer = self._chat.ask(system, user, parse_snapshot, count)
        if answer.value is not None:
            checked = verify_snapshot(answer.value, previous, turns)
            if checked.repaired or checked.dropped:
                log.info(
                    "summary notes failed the verbatim check: %d repaired, %d dropped",
                    checked.repaired,
                    checked.dropped,
                )
            return SummaryResult(checked.snapshot, cost, produced=answer.value)
        log.warning("summarizer fell back to extractive: %s", answer.reason)
        fallback = self.fallback.summarize(previous, turns)
        return SummaryResult(fallback.snapshot, cost, fallback_reason=answer.reason)
