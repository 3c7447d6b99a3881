"""Token counting.

A ``TokenCounter`` counts text; ``message_tokens`` adds the chat framing, the same way for every
counter, so a stored count is the cost of one message in an OpenAI chat request. The Anthropic
rendering merges and re-labels messages but never costs more than the sum of the messages it holds
(see ``convmem.formats``), so one stored count per message serves both formats.

Counters:

* ``TiktokenCounter`` — ``o200k_base`` (GPT-4o and later) and ``cl100k_base`` (GPT-4, GPT-3.5).
* ``EstimateCounter`` (name ``estimate``) — splits text the way BPE pre-tokenizers do and
  charges each piece an upper bound: a lower-case or capitalised word one token per four letters
  (other letter runs one per two), digits one per three (tiktoken groups them by three), a
  whitespace run one or two, other ASCII one, non-ASCII one to one and a half per character by
  script (three for emoji), long mixed letter-and-digit runs (keys, hashes, base64) three per four
  characters; plus one per message. Against cl100k_base and o200k_base it over-counts English by
  about 40 %, code and JSON by about 60 %, and did not under-count the scripts, emoji, numbers,
  identifiers and random strings in ``tests/test_tokens.py``: the safety margin for tokenizers we
  cannot run (Anthropic's) and for machines where tiktoken's files cannot be had.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable
from functools import cache
from typing import Protocol, runtime_checkable

from convmem.errors import InvalidInput
from convmem.model.messages import ToolCall

log = logging.getLogger(__name__)

# OpenAI's documented framing: every message costs 3 tokens beside its fields, and every reply
# is primed with 3 more.
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING = 3
# Not documented by OpenAI for tool calls; measured close to this and rounded up.
TOKENS_PER_TOOL_CALL = 8

ESTIMATE = "estimate"
TIKTOKEN_ENCODINGS = ("o200k_base", "cl100k_base")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a piece of text for one tokenizer."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """Exact counts with one of tiktoken's encodings."""

    def __init__(self, encoding: str) -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding(encoding)
        self._name = encoding

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encoding.encode(text, disallowed_special=()))


_PIECES = re.compile(r" ?[A-Za-z]+|[0-9]{1,3}| ?[^\x00-\x7f]+|\s+|[\x00-\x7f]")
_DENSE_RUN = re.compile(r"[A-Za-z0-9+/=]{12,}")


def _char_cost(code_point: int) -> float:
    if code_point > 0xFFFF:  # emoji and other astral characters: up to 4 byte tokens
        return 3.0
    if code_point < 0x0370:  # Latin supplements
        return 1.0
    if code_point < 0x0900:  # Greek, Cyrillic, Hebrew, Arabic …
        return 1.2
    return 1.5  # Indic, CJK and the rest


def _piece_tokens(text: str) -> int:
    total = 0
    for piece in _PIECES.findall(text):
        last = piece[-1]
        if not last.isascii():
            total += math.ceil(sum(_char_cost(ord(ch)) for ch in piece if not ch.isascii()))
        elif last.isalpha():
            word = piece.lstrip(" ")
            plain = word.islower() or word.istitle() or (word.isupper() and len(word) <= 3)
            total += math.ceil(len(word) / (4 if plain else 2))
        elif piece.isspace() and len(piece) > 1:
            total += 2
        else:
            total += 1
    return total


class EstimateCounter:
    """A conservative estimate for tokenizers we cannot run; see the module docstring."""

    name = ESTIMATE

    def count(self, text: str) -> int:
        total, start = 0, 0
        for run in _DENSE_RUN.finditer(text):
            value = run.group()
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                # keys, hashes, base64: BPE finds few merges, about 1.5 characters a token
                total += _piece_tokens(text[start : run.start()]) + math.ceil(len(value) * 0.75)
                start = run.end()
        return total + _piece_tokens(text[start:])


@cache
def _tiktoken_counter(encoding: str) -> TokenCounter | None:
    try:
        return TiktokenCounter(encoding)
    except Exception as exc:  # tiktoken raises plain exceptions when its files cannot be fetched
        # one line, no network detail: the usual cause is an offline machine
        log.warning(
            "tiktoken encoding %s unavailable (%s); using the conservative estimate "
            "(set TIKTOKEN_CACHE_DIR to a folder holding tiktoken's files)",
            encoding, type(exc).__name__,
        )  # fmt: skip
        return None


def get_counter(name: str) -> TokenCounter:
    """The counter for ``name``; the estimate stands in when tiktoken's files cannot be had."""
    if name == ESTIMATE:
        return EstimateCounter()
    if name not in TIKTOKEN_ENCODINGS:
        raise InvalidInput(
            f"unknown tokenizer {name!r}; use one of {', '.join((*TIKTOKEN_ENCODINGS, ESTIMATE))}"
        )
    return _tiktoken_counter(name) or EstimateCounter()


def compact_arguments(arguments: str) -> str:
    """Tool arguments as the Anthropic format re-serialises them (a parsed object, compact)."""
    try:
        return json.dumps(json.loads(arguments), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return arguments


def tool_call_tokens(counter: TokenCounter, call: ToolCall) -> int:
    # Either format may carry the arguments: OpenAI as sent, Anthropic re-serialised. Charge the
    # larger so one stored count bounds both.
    arguments = max(counter.count(call.arguments), counter.count(compact_arguments(call.arguments)))
    return TOKENS_PER_TOOL_CALL + counter.count(call.id) + counter.count(call.name) + arguments


def message_tokens(
    counter: TokenCounter,
    role: str,
    content: str,
    tool_calls: Iterable[ToolCall] = (),
    tool_call_id: str | None = None,
) -> int:
    """Tokens one message costs in a chat request, framing included."""
    total = TOKENS_PER_MESSAGE + counter.count(role) + counter.count(content)
    total += sum(tool_call_tokens(counter, call) for call in tool_calls)
    if tool_call_id is not None:
        total += counter.count(tool_call_id)
    if counter.name == ESTIMATE:
        total += 1
    return total
