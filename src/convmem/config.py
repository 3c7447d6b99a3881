"""Configuration: one frozen value, built by the caller (or the CLI) and passed in."""

from __future__ import annotations

from dataclasses import dataclass, field

from convmem.model.profile import ModelProfile
from convmem.tree import DEFAULT_MAX_CONTENT_BYTES


@dataclass(frozen=True)
class Config:
    """How a ``Memory`` behaves.

    ``tokenizers``: counted for every message at write time (the estimate always is), so assembly
    for these never re-tokenises history. Assembly for another tokenizer counts on the fly.
    """

    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES
    tokenizers: tuple[str, ...] = ("o200k_base", "cl100k_base")
    default_model: ModelProfile = field(default_factory=ModelProfile)
