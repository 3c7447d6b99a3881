"""Which entities a question names: every run of up to ``MAX_NAME_WORDS`` words of it, as a
name key (``convmem.entities.names.name_key``), looked up among the user's names and aliases.
Case does not matter, so "what does caro like?" finds Caroline by her nickname."""

from __future__ import annotations

import re

from convmem.entities.names import NOT_NAMES, WEEKDAYS_AND_MONTHS, name_key

MAX_NAME_WORDS = 6
MAX_KEYS = 512  # a long message is looked up by its first few hundred runs

_TOKEN = re.compile(r"@?[\w'’.-]+", re.U)


def name_keys(text: str) -> list[str]:
    """The name keys ``text`` could be naming (single ordinary words left out)."""
    tokens = [t.rstrip(".'’-") for t in _TOKEN.findall(text)]
    tokens = [t for t in tokens if t]
    keys: dict[str, None] = {}
    for start in range(len(tokens)):
        for width in range(1, MAX_NAME_WORDS + 1):
            if start + width > len(tokens):
                break
            key = name_key(" ".join(tokens[start : start + width]))
            if width == 1 and (key in NOT_NAMES or key in WEEKDAYS_AND_MONTHS or len(key) < 2):
                continue
            if key:
                keys[key] = None
            if len(keys) >= MAX_KEYS:
                return list(keys)
    return list(keys)
