"""Which entities a question names: every run of up to ``MAX_NAME_WORDS`` words of it, as a
name key (``convmem.entities.names.name_key``), looked up among the user's names and aliases.
Case does not matter, so "what does caro like?" finds Caroline by her nickname.

Every token is normalised once (``names.fold``); a run's key is then its tokens' folded forms
joined, with only the run's two ends trimmed as ``name_key`` trims them — the same key, without
normalising each of a question's ~6 runs per word again."""

from __future__ import annotations

import re

from convmem.entities.names import (
    NOT_NAMES,
    WEEKDAYS_AND_MONTHS,
    fold,
    name_key,
    trim_end,
    trim_start,
)

MAX_NAME_WORDS = 6
MAX_KEYS = 512  # a long message is looked up by its first few hundred runs

_TOKEN = re.compile(r"@?[\w'’.-]+", re.U)


def name_keys(text: str) -> list[str]:
    """The name keys ``text`` could be naming (single ordinary words left out)."""
    return list(name_runs(text))


def name_runs(text: str) -> dict[str, bool]:
    """``name_keys``, each with whether some run of ``text`` it keys starts with a capital (or
    an @): the form entity recall reads a question's names in (``convmem.entities.recall``)."""
    tokens = [t for t in (t.rstrip(".'’-") for t in _TOKEN.findall(text)) if t]
    capital = [t[0].isupper() or t.startswith("@") for t in tokens]
    folded = [fold(t) for t in tokens]
    starts = [trim_start(f) for f in folded]
    ends = [trim_end(f) for f in folded]
    keys: dict[str, bool] = {}
    for start in range(len(folded)):
        for width in range(1, MAX_NAME_WORDS + 1):
            last = start + width - 1
            if last >= len(folded):
                break
            if width == 1:
                key = trim_start(ends[start])
                if key in NOT_NAMES or key in WEEKDAYS_AND_MONTHS or len(key) < 2:
                    continue
            elif starts[start] and ends[last]:
                key = " ".join((starts[start], *folded[start + 1 : last], ends[last]))
            else:  # an end that trims away entirely: trimming goes on into the next word
                key = name_key(" ".join(folded[start : last + 1]))
            if key:
                keys[key] = keys.get(key, False) or capital[start]
            if len(keys) >= MAX_KEYS:
                return keys
    return keys
