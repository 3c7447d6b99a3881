"""Identifiers: a kind prefix and a ULID (time-ordered, so ids sort by creation)."""

from __future__ import annotations

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(prefix: str) -> str:
    """``prefix_`` + 26 Crockford base32 characters: 48 bits of milliseconds, 80 random bits."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return _encode(prefix, value)


def floor_id(prefix: str, at_ms: int) -> str:
    """The smallest id of millisecond ``at_ms``: every id made earlier sorts below it."""
    return _encode(prefix, at_ms << 80)


def _encode(prefix: str, value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"
