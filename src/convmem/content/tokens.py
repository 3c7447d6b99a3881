"""Token counting.

A ``TokenCounter`` counts text; ``message_tokens`` adds the chat framing, the same way for every
counter, so a stored count is the cost of one message in an OpenAI chat request. The Anthropic
rendering merges and re-labels messages but never costs more than the sum of the messages it holds
(see ``convmem.context.formats``), so one stored count per message serves both formats.

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
  cannot run (Anthropic's).

tiktoken fetches its BPE files from the network at first use, which fails on air-gapped and
locked-down machines. The two files convmem counts with ship inside the package
(``convmem/content/tokenizers/``, MIT-licensed data from tiktoken) and are loaded from there,
checked against tiktoken's published sha256, so counting is exact with no network and no setting.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from convmem.errors import InvalidInput
from convmem.model.messages import ToolCall

if TYPE_CHECKING:
    import tiktoken

# OpenAI's documented framing: every message costs 3 tokens beside its fields, and every reply
# is primed with 3 more.
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING = 3
# Not documented by OpenAI for tool calls; measured close to this and rounded up.
TOKENS_PER_TOOL_CALL = 8

ESTIMATE = "estimate"
TIKTOKEN_ENCODINGS = ("o200k_base", "cl100k_base")

# What tiktoken 0.14's own constructors (tiktoken_ext.openai_public) give for these encodings: the
# sha256 of the BPE file, the pre-tokenizer pattern and the special tokens.
# tests/test_tokens.py checks them against the installed tiktoken.
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501
_ENCODING_SPECS: dict[str, tuple[str, str, dict[str, int]]] = {
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a piece of text for one tokenizer."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


@cache
def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's ``o200k_base`` or ``cl100k_base``, from the files packaged with convmem."""
    import tiktoken

    if name not in _ENCODING_SPECS:
        raise InvalidInput(f"unknown tiktoken encoding {name!r}; use one of {TIKTOKEN_ENCODINGS}")
    sha256, pattern, special_tokens = _ENCODING_SPECS[name]
    data = (resources.files("convmem.content") / "tokenizers" / f"{name}.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"convmem's packaged {name}.tiktoken is damaged; reinstall convmem")
    # tiktoken's own file format (tiktoken.load.load_tiktoken_bpe): "base64-token rank" per line.
    # Parsed here because load_tiktoken_bpe also copies a local file into tiktoken's cache folder.
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special_tokens
    )


class _Remembered(dict[str, int]):
    """Counts of short texts, remembered: a lookup is C, counting is not. Texts longer than
    ``max_chars`` are counted each time, and at most ``max_texts`` are kept."""

    def __init__(self, count: Callable[[str], int], max_chars: int, max_texts: int) -> None:
        super().__init__()
        self._count, self._max_chars, self._max_texts = count, max_chars, max_texts

    def __missing__(self, text: str) -> int:
        tokens = self._count(text)
        if len(text) <= self._max_chars and len(self) < self._max_texts:
            self[text] = tokens
        return tokens


class TiktokenCounter:
    """Exact counts with one of tiktoken's encodings."""

    def __init__(self, encoding: str) -> None:
        self._encoding = tiktoken_encoding(encoding)
        self._name = encoding

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        if not text:
            return 0
        # every special token's text counted as plain text, as encode(disallowed_special=())
        # does, without that call's checks for special tokens
        return len(self._encoding.encode_ordinary(text))


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


def _piece_cost(piece: str) -> int:
    last = piece[-1]
    if not last.isascii():
        return math.ceil(sum(_char_cost(ord(ch)) for ch in piece if not ch.isascii()))
    if last.isalpha():
        word = piece.lstrip(" ")
        plain = word.islower() or word.istitle() or (word.isupper() and len(word) <= 3)
        return math.ceil(len(word) / (4 if plain else 2))
    if piece.isspace() and len(piece) > 1:
        return 2
    return 1


def _piece_tokens(text: str, costs: Callable[[str], int]) -> int:
    return sum(map(costs, _PIECES.findall(text)))


class EstimateCounter:
    """A conservative estimate for tokenizers we cannot run; see the module docstring."""

    name = ESTIMATE

    def __init__(self, *, remembering: bool = False) -> None:
        # remembering: each piece's cost looked up once worked out (text repeats its words)
        self._costs = (
            _Remembered(_piece_cost, _PIECE_CHARS, _REMEMBERED).__getitem__
            if remembering
            else _piece_cost
        )

    def count(self, text: str) -> int:
        costs = self._costs
        total, start = 0, 0
        for run in _DENSE_RUN.finditer(text):
            value = run.group()
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                # keys, hashes, base64: BPE finds few merges, about 1.5 characters a token
                total += _piece_tokens(text[start : run.start()], costs)
                total += math.ceil(len(value) * 0.75)
                start = run.end()
        return total + _piece_tokens(text[start:], costs)


class _RememberingCounter:
    """A counter for one batch of messages: the short texts every message repeats (roles, tool
    names and ids) are counted once."""

    def __init__(self, counter: TokenCounter) -> None:
        self.name = counter.name
        self._count = counter.count
        self._short = _Remembered(counter.count, _SHORT_CHARS, _REMEMBERED)

    def count(self, text: str) -> int:
        if len(text) <= _SHORT_CHARS:
            return self._short[text]
        return self._count(text)


# What a batch counter keeps: pieces and texts up to these lengths, this many of each. Kept for
# the batch only (an import's), so no text of it stays in the process after.
_PIECE_CHARS = 24
_SHORT_CHARS = 16
_REMEMBERED = 50_000


def batch_counter(counter: TokenCounter) -> TokenCounter:
    """``counter``, counting the same, for many messages at once (an import): what repeats from
    message to message is worked out once. Drop it with the batch."""
    if counter.name == ESTIMATE and isinstance(counter, EstimateCounter):
        counter = EstimateCounter(remembering=True)
    return _RememberingCounter(counter)


@cache
def _tiktoken_counter(encoding: str) -> TokenCounter:
    return TiktokenCounter(encoding)


def get_counter(name: str) -> TokenCounter:
    """The counter for ``name``: exact for tiktoken's encodings, else the estimate."""
    if name == ESTIMATE:
        return EstimateCounter()
    if name not in TIKTOKEN_ENCODINGS:
        raise InvalidInput(
            f"unknown tokenizer {name!r}; use one of {', '.join((*TIKTOKEN_ENCODINGS, ESTIMATE))}"
        )
    return _tiktoken_counter(name)


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
    if tool_calls:
        total += sum(tool_call_tokens(counter, call) for call in tool_calls)
    if tool_call_id is not None:
        total += counter.count(tool_call_id)
    if counter.name == ESTIMATE:
        total += 1
    return total
