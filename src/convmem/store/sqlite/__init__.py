"""The embedded SQLite backend (stdlib ``sqlite3``, WAL), registered for ``sqlite:///path`` URLs
and plain paths."""

from convmem.errors import InvalidInput
from convmem.store.registry import register
from convmem.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore", "open_sqlite"]

_PREFIX = "sqlite:///"


def open_sqlite(url: str) -> SQLiteStore:
    """A path, or ``sqlite:///path`` (``sqlite:////abs/path`` for an absolute one)."""
    if "://" in url:
        if not url.lower().startswith(_PREFIX):
            raise InvalidInput("an SQLite URL is sqlite:///path")
        url = url[len(_PREFIX) :]
    return SQLiteStore(url)


register("", open_sqlite)
register("sqlite", open_sqlite)
