"""How much of a request a provider's prompt cache would serve, estimated from its prefix.

Providers cache the prefix of the requests they see and serve the part of a new request that
repeats a recent one from it, at a fraction of the price. convmem cannot see the provider's
cache, so it estimates: a request's parts in order (the leading sections, the history messages,
the trailing sections, the user message) are chained into digests — the i-th digest covers the
format and the first i parts, as Chat Completions messages — and the tokens of the leading parts
whose digests equal the previous request's are the cached tokens. Only digests are kept (in the
report, which ``Conversation.record_assembly`` stores beside the conversation), never content.

The previous request is the conversation's last recorded one (``record_assembly``: the service
records each request it assembles). The digests compare content, not branches: a request on
another branch of the conversation shares what it really shares (system prompt, memories, the
common history), as the provider's cache would.

Limits of the estimate: it works at the granularity of parts, where providers cache in token
blocks (OpenAI from 1024 tokens in 128-token steps; Anthropic up to a ``cache_control``
breakpoint, from 1024 or 2048 tokens by model), so short requests count as cached where a
provider caches nothing and a part that differs late counts as wholly missed; it assumes the
previous request was sent, to the same provider and model, and that the cache kept it for
``PROMPT_CACHE_TTL`` (providers evict earlier under load, and keep longer on request); requests
the service did not record (a library caller that never calls ``record_assembly``) and requests
of other conversations sharing a system prompt are not seen, so those count as misses.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

# How long a provider keeps a prefix cached after its last use (Anthropic's default five
# minutes; OpenAI keeps prompts five to ten minutes idle): an older previous request is cold.
PROMPT_CACHE_TTL = timedelta(minutes=5)
# 64 bits of each digest: enough to tell two prefixes apart, short in the stored report
DIGEST_CHARS = 16


def prefix_chain(format: str, parts: Iterable[Mapping[str, Any]]) -> list[str]:
    """The chained digests of a request's parts in order: the i-th covers ``format`` and the
    first i + 1 parts, so two requests share a prefix of n parts exactly when their first n
    digests are equal."""
    running = hashlib.sha256(format.encode())
    chain: list[str] = []
    for part in parts:
        # canonical JSON escapes NUL, so the separator cannot occur inside a part
        running.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode() + b"\0")
        chain.append(running.copy().hexdigest()[:DIGEST_CHARS])
    return chain


def shared_prefix(previous: Sequence[object], current: Sequence[object]) -> int:
    """How many leading elements of ``current`` equal those of ``previous``."""
    count = 0
    for before, now in zip(previous, current, strict=False):
        if before != now:
            break
        count += 1
    return count


def cached_tokens(previous: Sequence[str], chain: Sequence[str], costs: Sequence[int]) -> int:
    """The tokens of the leading parts (``costs``, in the order of ``chain``) that the previous
    request's chain already held."""
    return sum(costs[: shared_prefix(previous, chain)])


def previous_prefix(
    report: Mapping[str, Any] | None, at: datetime | None, now: datetime
) -> list[str]:
    """The digest chain of the previous request (a stored report, recorded ``at``), or none when
    there is none, it is older than the cache keeps prefixes, or it predates the digests."""
    if report is None or at is None or now - at > PROMPT_CACHE_TTL:
        return []
    chain = report.get("prefix_digests")
    if not isinstance(chain, list) or not all(isinstance(d, str) for d in chain):
        return []
    return chain
