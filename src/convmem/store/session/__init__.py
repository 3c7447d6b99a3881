"""The session tier: Redis in front of a store, holding each active conversation's request state
for every service process (``convmem.open(url, session="redis://…")``). See ``tier``."""

from __future__ import annotations

from convmem.store.session.client import OUTCOMES, Away, SessionRedis
from convmem.store.session.tier import SessionTier

__all__ = ["OUTCOMES", "Away", "SessionRedis", "SessionTier"]
