"""The fields of one language's grammar of memory requests (see :mod:`convmem.memory.phrases`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str
    remember: str
    complementizer: str
    polite: str
    from_now: str
    instruction: str
    first_person: str
    second_person: str
    third_person: str
    forget: str
    forget_what: str
    delete: str
    memory_noun: str
    possessive: str  # first-person possessives that open a noun phrase ("my", "mein", "mon")
    dismissal: str
    future: str  # "I'm going to …": a plan, not a standing fact
    fillers: str
    statement: str  # a plain first-person statement of a standing fact: at most a proposal
    forget_about: str
    memory_place: str
    store: str  # verbs that are a remember imperative only with a memory_place ("add … to memory")
    newer: str
    # A verb-final language's clause is about the speaker when its last word matches this
    # (a first-person verb ending); empty: only the opening word says so.
    first_person_end: str = ""
