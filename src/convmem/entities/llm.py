"""An optional entity extractor: the LLM summarizer's OpenAI-compatible endpoint reads a turn's
people, places and things and the sentences about them.

Same rules as the LLM summarizer (``convmem.summarize.llm``): failed calls and unusable answers
are retried; when every attempt fails — an HTTP error, a timeout, an answer that is not the JSON
asked for, or one whose every entity fails the checks — the deterministic extractor's result is
used and the reason kept (``last_fallback_reason``), so entities are never lost to a model
outage. What the model says is checked against the turn: a name, alias or fact that does not
occur in the turn's text is dropped (a model may invent; the turn is the evidence), types
outside ``ENTITY_TYPES`` become "thing". Everything kept then goes through the same derive path
as the deterministic extractor's mentions (``convmem.entities.derive.record_mentions``), where
every name, alias and fact passes the never-store policy.

It waits on the network, so it never runs on a request: ``Scope.entities.rebuild(extractor=…)``
runs it, from a job or the command line.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from convmem.entities.extract import MAX_FACT_CHARS, MAX_NAME_CHARS, Extraction, extract
from convmem.entities.names import name_key
from convmem.model.entities import ENTITY_TYPES, EntityType, Mention
from convmem.summarize.chat import JsonChat
from convmem.summarize.llm import MAX_TURN_CHARS, LLMSummarizerConfig

log = logging.getLogger(__name__)

PROMPT_VERSION = "llm-entities-v1"
SYSTEM_PROMPT = """\
You read one turn of a conversation (JSON: its speaker, if named, and its text) and list the
people, animals, places, organisations, projects, works (books, films, songs) and other named
things it mentions, with the sentences of the turn that say something about each. Answer with one
JSON object: {"entities": [{"name": "...", "type": "person|animal|place|organisation|project|
work|thing", "aliases": ["other names the turn uses for it"], "facts": [{"text": "<a sentence
copied exactly from the turn>", "confidence": 0.0-1.0}]}]}.

Rules:
- Copy names and sentences exactly as the turn writes them; never invent, translate or merge.
- "my sister", "my boss": a relation the turn states for a named person is an alias.
- The speaker's own first-person sentences are facts about the speaker, when named.
- No entity for pronouns, greetings, weekdays or months. An empty list if there is none.
- Answer with the JSON object only.
"""

_FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


class EntityOutputError(ValueError):
    """The model's answer is not a usable entity list."""


def build_prompt(text: str, speaker: str | None) -> tuple[str, str]:
    """The system and user message sent to the model (``PROMPT_VERSION`` names this wording)."""
    clipped = text if len(text) <= MAX_TURN_CHARS else text[:MAX_TURN_CHARS] + " […]"
    payload = {"entity_turn": {"speaker": speaker, "text": clipped}}
    return SYSTEM_PROMPT, json.dumps(payload, ensure_ascii=False)


def _said(text: str, folded_turn: str) -> bool:
    return bool(text.strip()) and " ".join(text.split()).casefold() in folded_turn


def parse_entities(answer: str | None, text: str, speaker: str | None) -> Extraction:
    """The model's answer as mentions, each checked against the turn's ``text``;
    ``EntityOutputError`` when it is not the JSON asked for, or nothing in it survives."""
    if not answer:
        raise EntityOutputError("the answer is empty")
    fenced = _FENCED.match(answer)
    try:
        document = json.loads(fenced.group(1) if fenced else answer)
    except ValueError as exc:
        raise EntityOutputError("the answer is not JSON") from exc
    items = document.get("entities") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise EntityOutputError("the answer has no entity list")
    turn = " ".join(text.split()).casefold()
    spoken = name_key(speaker) if speaker else None
    mentions: list[Mention] = []
    for item in items:
        mention = _mention(item, turn, spoken)
        if mention is not None:
            mentions.append(mention)
    if items and not mentions:
        raise EntityOutputError("no entity of the answer occurs in the turn")
    return Extraction(tuple(mentions), ())


def _mention(item: Any, turn: str, speaker_key: str | None) -> Mention | None:
    if not isinstance(item, dict):
        return None
    name = item.get("name")
    if not isinstance(name, str) or not 0 < len(name.strip()) <= MAX_NAME_CHARS:
        return None
    name = " ".join(name.split())
    # the turn's named speaker need not be written in it: the speaker said it
    if not (_said(name, turn) or name_key(name) == speaker_key):
        return None
    kind = item.get("type")
    entity_type: EntityType = kind if kind in ENTITY_TYPES else "thing"
    aliases = tuple(
        dict.fromkeys(
            " ".join(a.split())
            for a in item.get("aliases") or ()
            if isinstance(a, str) and len(a) <= MAX_NAME_CHARS and _said(a, turn)
        )
    )
    facts: dict[str, float] = {}
    for fact in item.get("facts") or ():
        if not isinstance(fact, dict) or not isinstance(fact.get("text"), str):
            continue
        sentence = " ".join(fact["text"].split())
        if len(sentence) > MAX_FACT_CHARS or not _said(sentence, turn):
            continue
        confidence = fact.get("confidence", 0.8)
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            confidence = 0.8
        facts[sentence] = max(0.05, min(1.0, float(confidence)))
    if not facts:
        return None
    return Mention(name, entity_type, aliases, tuple(facts.items()))


class LLMEntityExtractor:
    """Entities by a model behind an OpenAI-compatible API, checked, with the deterministic
    extractor as the fallback. Pass it to ``Scope.entities.rebuild``."""

    def __init__(self, config: LLMSummarizerConfig) -> None:
        self.config = config
        self.last_fallback_reason: str | None = None
        self._chat = JsonChat(config, "entity extractor")

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def extract(self, text: str, speaker: str | None) -> tuple[Extraction, str]:
        """The turn's mentions and the extractor that found them: this model's name, or the
        deterministic extractor's when the model could not be used."""
        from convmem.entities.extract import EXTRACTOR

        system, user = build_prompt(text, speaker)
        answer = self._chat.ask(system, user, lambda reply: parse_entities(reply, text, speaker))
        self.last_fallback_reason = answer.reason
        if answer.value is not None:
            return answer.value, self.name
        return extract(text, speaker), EXTRACTOR
