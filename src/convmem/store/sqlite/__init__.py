"""The embedded SQLite backend (stdlib ``sqlite3``, WAL)."""

from convmem.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
