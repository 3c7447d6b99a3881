"""The development data's explicit splits: every retrieval choice is made on split A and
confirmed on split B (then measured from outside on conversations the project never sees).

By conversation, never by question: questions about one conversation share its people, words and
evidence turns, so a split inside a conversation would confirm a choice on the data it was made on.
"""

from __future__ import annotations

from collections.abc import Sequence

from convmem.errors import InvalidInput

SPLITS: dict[str, dict[str, tuple[str, ...]]] = {
    # ../shared/data/locomo/locomo-dev.json: its two conversations
    "locomo": {"A": ("conv-26",), "B": ("conv-30",)},
    # ../shared/data/realtalk: three chats; B holds two (one speaker of each is also in A's)
    "realtalk": {"A": ("Chat_1_Emi_Elise",), "B": ("Chat_2_Kevin_Elise", "Chat_3_Kevin_Paola")},
    # ../shared/data/beam/100K: five chats by folder
    "beam": {"A": ("1", "2"), "B": ("3", "4", "5")},
}


def split_samples(dataset: str, split: str) -> Sequence[str]:
    """The sample ids of ``split`` (``A`` or ``B``) of ``dataset``."""
    try:
        return SPLITS[dataset][split.upper()]
    except KeyError:
        raise InvalidInput(f"no split {split!r} for {dataset} (A or B)") from None
