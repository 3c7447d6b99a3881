"""A small world of alice's data (tenant acme) that the route tests point at."""

from __future__ import annotations

from dataclasses import dataclass

import convmem


@dataclass(frozen=True)
class World:
    conversation: str
    first: str  # alice's first user message (the source of a memory)
    reply: str  # the assistant's reply to it
    memory: str  # a confirmed memory
    proposal: str  # a proposed memory
    user_pin: str
    conversation_pin: str
    tool: str  # a tool of acme's registry
    entity: str  # a person alice mentioned (in a conversation of its own)
    fact: str  # what was said about them


def build_world(memory: convmem.Memory) -> World:
    alice = memory.scope("acme", "alice")
    conv = alice.create_conversation(title="Trip to Lisbon")
    first = conv.append("user", "Remember that I prefer aisle seats.")
    reply = conv.append("assistant", "Noted: aisle seats.")
    saved = first.notices[0].memory
    assert saved is not None
    proposal = alice.propose("Travels to Lisbon often", category="fact").memory
    assert proposal is not None
    user_pin = alice.pin("Answer briefly.")
    conversation_pin = conv.pin("Prices in euros.")
    tool = memory.tools.register(
        "acme", {"name": "get_weather", "description": "Weather for a place."}
    )
    family = alice.create_conversation(title="Family")
    family.append("user", "My sister Ana Lopez moved to Porto last spring.")
    (ana,) = alice.entities.search("Ana Lopez")
    fact = alice.entities.get(ana.id).facts[0]
    return World(
        conversation=conv.id,
        first=first.id,
        reply=reply.id,
        memory=saved.id,
        proposal=proposal.id,
        user_pin=user_pin.id,
        conversation_pin=conversation_pin.id,
        tool=tool.name,
        entity=ana.id,
        fact=fact.id,
    )
