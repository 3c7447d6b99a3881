"""A page session: how an end user reaches their memory page without an API key. Values, no I/O.

An application mints a ``link`` for one of its users; opening it ends the link (single use) and
starts a ``session``, held by the browser in an HttpOnly cookie. Only the SHA-256 of each
token's secret is stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

PageSessionKind = Literal["link", "session"]


@dataclass(frozen=True)
class PageSession:
    """``expires_at``: the absolute end; ``last_seen_at``: the last request (a session idle
    too long ends); ``ended_at``: a link used, or a session signed out."""

    id: str
    tenant_id: str
    user_id: str
    kind: PageSessionKind
    created_at: datetime
    expires_at: datetime
    last_seen_at: datetime
    ended_at: datetime | None = None
