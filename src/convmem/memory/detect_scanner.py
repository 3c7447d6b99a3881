"""A maintained secret scanner as one more credential layer: Yelp's ``detect-secrets``.

Its provider plugins (AWS, Azure, GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, Mailchimp, npm,
PyPI, OpenAI, Discord, Telegram, JWTs, private keys, basic auth, IBM, Artifactory, Cloudant ...) are
kept up to date by people who follow those formats, so a token class convmem's own rules were not
written for is still caught. Everything runs offline: no plugin's ``verify`` (which calls the
provider) is ever used.

Left out on purpose: the keyword plugin (convmem's own keyword rules know prose and seven
languages), the generic high-entropy plugins (they fire on hashes, ids and base64 that are not
secrets; convmem's ``looks_random`` next to a credential word does that job) and the public-IP
plugin (an address is not a credential).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

_LEFT_OUT: Final = frozenset(
    {
        "Secret Keyword",
        "Base64 High Entropy String",
        "Hex High Entropy String",
        "Public IP (ipv4)",
    }
)
# Every plugin's pattern needs a run of ten or more token characters with a digit in it, or a PEM
# header; text without one (most memories) skips the scanner entirely. The plugins only ever see a
# window around each such run (a key's name comes before it), so a long input costs linear time
# whatever a plugin's pattern does on it.
_CANDIDATE: Final = re.compile(
    r"(?<![A-Za-z0-9_+/=.:-])(?=[A-Za-z0-9_+/=.:-]{10})[A-Za-z_+/=.:-]*\d[A-Za-z0-9_+/=.:-]*"
    r"|PRIVATE KEY"
)
_BEFORE: Final = 80
_LONGEST: Final = 1000


@lru_cache(maxsize=1)
def _plugins() -> tuple[BasePlugin, ...]:
    # Imported on the first text that has a candidate run: detect-secrets (and the requests and
    # urllib3 it pulls in) costs ~60 ms, which every `import convmem` and CLI start would pay.
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    return tuple(cls() for name, cls in sorted(mapping.items()) if name not in _LEFT_OUT)


def scanner_finds_secret(text: str) -> str | None:
    """The secret type detect-secrets names for ``text`` (e.g. "Slack Token"), or None."""
    for m in _CANDIDATE.finditer(text):
        if m.end() - m.start() < 10:
            continue
        window = text[max(0, m.start() - _BEFORE) : min(m.end(), m.start() + _LONGEST) + 2]
        for plugin in _plugins():
            for _ in plugin.analyze_string(window):
                return str(plugin.secret_type)
    return None
