"""The session tier's key names: tenant, user and conversation by a hash of their ids, never a
name or text (a key name shows in ``SCAN``, ``MONITOR`` and slow logs; values hold the text and
are deleted with it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

PREFIX = "cm"


def digest(value: str) -> str:
    """A short stable hash of an id (the same in every process, 96 bits)."""
    return hashlib.blake2b(value.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class Scope:
    """One generation's reach: a tenant, a user of it, or a conversation of it. Each has a
    generation key (a random token replaced by every write in its reach) and a writers key
    (how many write transactions in its reach are open: readers bypass the tier meanwhile)."""

    kind: str  # "tenant" | "user" | "conversation"
    base: str  # the key prefix

    @property
    def generation(self) -> str:
        return f"{self.base}:g"

    @property
    def writers(self) -> str:
        return f"{self.base}:w"


# what a write the tier cannot place moves: every key it holds
EVERYTHING = Scope("everything", PREFIX)


def tenant_scope(tenant: str) -> Scope:
    return Scope("tenant", f"{PREFIX}:{digest(tenant)}")


def user_scope(tenant: str, user: str) -> Scope:
    return Scope("user", f"{PREFIX}:{digest(tenant)}:u:{digest(user)}")


def conversation_scope(tenant: str, conversation_id: str) -> Scope:
    return Scope("conversation", f"{PREFIX}:{digest(tenant)}:c:{digest(conversation_id)}")


def entry_key(tenant: str, conversation_id: str) -> str:
    """The conversation's cached request state: a hash with one field per tokenizer."""
    return f"{conversation_scope(tenant, conversation_id).base}:s"


def entries_of(scope: Scope) -> str:
    """The set naming the entry keys filled under a user or a tenant (what their erase
    deletes)."""
    return f"{scope.base}:k"


def tenant_pattern(tenant: str) -> str:
    """Every key of a tenant (``SCAN MATCH``)."""
    return f"{PREFIX}:{digest(tenant)}*"
