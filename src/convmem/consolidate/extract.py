"""Candidate memories from a model, the way Mem0 extracts them — but checked, and only ever
proposals.

The model reads a conversation's recent turns (JSON, each with its id and role) and answers with
``{"memories": [{"text": …, "sources": [<turn id>, …]}]}``. A candidate is kept only when:

- its text is a short statement (no question) and it cites at least one turn, every cited turn
  being one of the user's own turns given (never the assistant's, a tool's, or an invented id);
- no cited turn is small talk: a turn that recalls a shared moment ("Remember when we…?
  That was fun.") or only asks questions states no standing fact;
- every number, identifier and code span of the text occurs verbatim in the cited turns, and
  every capitalised word (a name: "Ana", "Lisbon", "Acme") occurs in them too — a model that
  invents a number or a name is caught here;
- it then passes the never-store policy like any memory (``save_memory``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from convmem.model.messages import Message
from convmem.summarize.text import literals

PROMPT_VERSION = "llm-memories-v1"
MAX_TURN_CHARS = 2000
MAX_CANDIDATE_CHARS = 300
MAX_CANDIDATES = 20

SYSTEM_PROMPT = """\
You read the recent turns of a conversation (JSON, oldest first, each with its id and role) and
list the standing facts the user stated about themselves that would help in later
conversations: preferences, profile facts, constraints, decisions. Answer with one JSON object:
{"memories": [{"text": "...", "sources": ["<turn id>", ...]}]}.

Rules:
- Only what the user said about themselves, in their own turns (role "user"); never what the
  assistant said, never guesses, never small talk, questions or recollections of past chats.
- One short first-person statement per memory, in the user's words ("I prefer aisle seats.").
- Copy names, numbers, dates and identifiers exactly as written.
- "sources" lists the ids of the user turns a memory comes from. Never invent ids.
- Nothing sensitive: no secrets, credentials, payment data, government ids, health.
- No memories: {"memories": []}. Answer with the JSON object only.
"""


class ExtractionError(ValueError):
    """The model's answer is not the JSON asked for (the reason is a code, never its text)."""


@dataclass(frozen=True)
class Candidate:
    text: str
    sources: tuple[str, ...]


def build_prompt(turns: Sequence[Message]) -> tuple[str, str]:
    """The system prompt and the turns, as the model reads them (memory is data: the turns go
    as JSON strings, so nothing in them is an instruction to the model)."""
    payload = [
        {"id": m.id, "role": m.role, "content": m.content[:MAX_TURN_CHARS]}
        for m in turns
        if m.role in ("user", "assistant") and m.content.strip()
    ]
    return SYSTEM_PROMPT, json.dumps({"turns": payload}, ensure_ascii=False)


_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse_candidates(text: str | None) -> list[Candidate]:
    """The candidates of a model's answer; ``ExtractionError`` when it is not the JSON asked for."""
    if not text or not text.strip():
        raise ExtractionError("empty answer")
    body = text.strip()
    fenced = _FENCED.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        raise ExtractionError("not JSON") from None
    items = value.get("memories") if isinstance(value, dict) else None
    if not isinstance(items, list):
        raise ExtractionError("no memories list")
    found: list[Candidate] = []
    for item in items[:MAX_CANDIDATES]:
        if not isinstance(item, dict):
            continue
        said, sources = item.get("text"), item.get("sources")
        if not isinstance(said, str) or not isinstance(sources, list):
            continue
        found.append(
            Candidate(" ".join(said.split()), tuple(s for s in sources if isinstance(s, str)))
        )
    return found


# "Remember when we …", "do you remember the time …" and their kin: a recollection, not a fact
_RECOLLECTION = re.compile(
    r"^\W*(?:(?:do|did) you (?:still )?remember|remember (?:when|the time|that time|how)|"
    r"te acuerdas|(?:tu te |vous vous )?souviens|weißt du noch|erinnerst du dich|"
    r"ricordi quando|ti ricordi|lembras|você se lembra|weet je nog)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# capitalised words of the candidate: names must come from the cited turns
_CAPITALISED = re.compile(r"(?<![\w'\u2019-])[^\W\d_][\w'\u2019-]*")
_FIRST_PERSON = frozenset(
    {"i", "i'm", "i've", "i'd", "i'll"} | {f"i\u2019{end}" for end in ("m", "ve", "d", "ll")}
)


def is_small_talk(turn: Message) -> bool:
    """Whether a turn is small talk: it recalls a shared moment ("Remember when we…?" — the
    whole turn is then about that moment), or it only asks."""
    sentences = [s.strip() for s in _SENTENCE.split(turn.content.strip()) if s.strip()]
    if any(_RECOLLECTION.match(sentence) for sentence in sentences):
        return True
    return all(sentence.endswith("?") for sentence in sentences)


def _words_of(text: str) -> set[str]:
    return {w.casefold() for w in _CAPITALISED.findall(text)}


def refusal(candidate: Candidate, turns: Mapping[str, Message]) -> str | None:
    """Why the candidate is not kept (a reason code), or None when it passes every check
    (before the never-store policy, which ``save_memory`` applies)."""
    text = candidate.text
    if not text or len(text) > MAX_CANDIDATE_CHARS or text.rstrip().endswith("?"):
        return "not_a_statement"
    if not candidate.sources:
        return "cites_nothing"
    cited = [turns.get(source) for source in candidate.sources]
    if any(turn is None or turn.role != "user" for turn in cited):
        return "cites_no_user_turn"
    said = [turn for turn in cited if turn is not None]
    if any(is_small_talk(turn) for turn in said):
        return "small_talk"
    corpus = "\n".join(turn.content for turn in said)
    if any(literal not in corpus for literal in literals(text)):
        return "number_not_in_sources"
    spoken = _words_of(corpus)
    for word in _CAPITALISED.findall(text):
        if word[0].isupper() and word.casefold() not in _FIRST_PERSON | spoken:
            return "name_not_in_sources"
    return None
