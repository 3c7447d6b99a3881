"""The PostgreSQL backend's own options, read from its URL's query string and taken out of it
before the URL reaches the driver (libpq refuses parameters it does not know):

- ``pool_size=N``: connections pooled per process (default: ``CONVMEM_PG_POOL_SIZE``, else 10);
- ``migrate=0`` / ``migrate=1``: whether opening applies missing migrations (default:
  ``CONVMEM_MIGRATE_ON_OPEN``, else yes). With ``0`` a database that lacks one is refused, for
  deployments that run ``convmem migrate --db URL`` before starting processes.

The environment variables stay as the defaults a URL without the option falls back to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from convmem.errors import InvalidConfig

_DEFAULT_POOL_SIZE = 10
_YES = {"1", "true", "yes", "on"}
_NO = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class PostgresOptions:
    url: str  # the URL the driver is given: the options taken out
    pool_size: int
    migrate: bool


def options_from_url(url: str) -> PostgresOptions:
    parts = urlsplit(url)
    kept: list[tuple[str, str]] = []
    found: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in ("pool_size", "migrate"):
            found[name] = value
        else:
            kept.append((name, value))
    pool = found.get("pool_size", os.environ.get("CONVMEM_PG_POOL_SIZE", ""))
    migrate = found.get("migrate", os.environ.get("CONVMEM_MIGRATE_ON_OPEN", "1"))
    if found:  # (percent-encoded: libpq reads no "+" as a space)
        url = urlunsplit(parts._replace(query=urlencode(kept, quote_via=quote)))
    return PostgresOptions(url, _pool_size(pool), _flag(migrate))


def _pool_size(text: str) -> int:
    if text == "":
        return _DEFAULT_POOL_SIZE
    if not text.isdigit() or int(text) < 1:
        raise InvalidConfig(
            "pool_size", f"the database URL's (or CONVMEM_PG_POOL_SIZE) is {text!r}, not 1 or more"
        )
    return int(text)


def _flag(text: str) -> bool:
    if text.lower() in _YES:
        return True
    if text.lower() in _NO:
        return False
    raise InvalidConfig(
        "migrate", f"the database URL's (or CONVMEM_MIGRATE_ON_OPEN) is {text!r}, not 0 or 1"
    )
