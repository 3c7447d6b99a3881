"""Identifiers: a kind prefix and a ULID (time-ordered, so ids sort by creation)."""

from __future__ import annotations

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# every pair of characters, by the 10 bits they encode: an id is 13 lookups, not 26 shifts
_PAIRS = tuple(high + low for high in _CROCKFORD for low in _CROCKFORD)


def new_id(prefix: str) -> str:
    """``prefix_`` + 26 Crockford base32 characters: 48 bits of milliseconds, 80 random bits."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return _encode(prefix, value)


def floor_id(prefix: str, at_ms: int) -> str:
    """The smallest id of millisecond ``at_ms``: every id made earlier sorts below it."""
    return _encode(prefix, at_ms << 80)


def _encode(prefix: str, value: int) -> str:
    """``value``'s low 130 bits as 26 characters, most significant first."""
    p = _PAIRS
    return (
        f"{prefix}_{p[value >> 120 & 1023]}{p[value >> 110 & 1023]}{p[value >> 100 & 1023]}"
        f"{p[value >> 90 & 1023]}{p[value >> 80 & 1023]}{p[value >> 70 & 1023]}"
        f"{p[value >> 60 & 1023]}{p[value >> 50 & 1023]}{p[value >> 40 & 1023]}"
        f"{p[value >> 30 & 1023]}{p[value >> 20 & 1023]}{p[value >> 10 & 1023]}{p[value & 1023]}"
    )
