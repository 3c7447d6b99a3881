"""Ids: Crockford base32 of the value, most significant character first, time-ordered."""

from __future__ import annotations

import random
import time

from convmem.ids import floor_id, new_id

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def decoded(identifier: str) -> int:
    value = 0
    for char in identifier.split("_", 1)[1]:
        value = value * 32 + CROCKFORD.index(char)
    return value


def test_an_id_is_its_value_in_crockford_base32() -> None:
    rng = random.Random(3)
    for at_ms in [0, 1, 2**48 - 1, *(rng.getrandbits(48) for _ in range(2000))]:
        identifier = floor_id("msg", at_ms)
        assert identifier.startswith("msg_") and len(identifier) == 4 + 26
        assert decoded(identifier) == at_ms << 80


def test_new_ids_carry_the_time_and_sort_by_it() -> None:
    before = time.time_ns() // 1_000_000
    identifier = new_id("conv")
    after = time.time_ns() // 1_000_000
    assert before <= decoded(identifier) >> 80 <= after
    assert floor_id("conv", before) <= identifier < floor_id("conv", after + 1)
    assert len({new_id("m") for _ in range(1000)}) == 1000
