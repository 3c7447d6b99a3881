"""The SQLite row of an API key: the secret's SHA-256, never the secret. (Moved from
``tests/test_keys.py``; on every backend: ``tests/store/test_keys.py``.)"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import convmem
from convmem.keys import parse_token


def test_a_key_authenticates_and_is_stored_only_as_a_hash(
    memory: convmem.Memory, db_path: Path
) -> None:
    issued = memory.keys.create("acme", "user", user="alice", name="alice's page")
    key = memory.keys.authenticate(issued.token)
    assert key is not None
    assert (key.id, key.tenant_id, key.role, key.user_id) == (
        issued.key.id,
        "acme",
        "user",
        "alice",
    )
    parsed = parse_token(issued.token)
    assert parsed is not None
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT * FROM api_keys").fetchall()
    stored = " ".join(str(v) for v in rows[0])
    assert parsed[1] not in stored
    assert hashlib.sha256(parsed[1].encode()).hexdigest() in stored
