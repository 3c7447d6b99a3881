"""Ids and the user header are defined for UTF-8, on every backend and surface.

- An identifier is 1 to ``MAX_IDENTIFIER_BYTES`` bytes of UTF-8: every id the library accepts
  works on every path of every backend (PostgreSQL once answered 503 to every memory search when
  a tenant and a user passed ~1,020 bytes), and a longer one is ``InvalidIdentifier`` in the
  library and a 400 over HTTP, with nothing written.
- ``X-Convmem-User`` is ASCII; an id outside it comes percent-encoded as UTF-8. Raw non-ASCII
  bytes, a comma (two merged values) or the header twice are a 400, never another principal.
- The export's download name is RFC 6266 ``filename*`` for a user like ``Łukasz`` (it was a 500).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

import convmem
from convmem.domain.keys import named_user, user_header_value
from convmem.model.tree import MAX_IDENTIFIER_BYTES
from convmem.service import create_app
from convmem.testing.harness import Backend

# (tenant, user) pairs around the limit, in 1-, 2-, 3- and 4-byte characters
AT_LIMIT = {
    "ascii": ("t" * MAX_IDENTIFIER_BYTES, "u" * MAX_IDENTIFIER_BYTES),
    "latin-ext": ("Ł" * (MAX_IDENTIFIER_BYTES // 2), "ż" * (MAX_IDENTIFIER_BYTES // 2)),
    "cjk": ("東" * (MAX_IDENTIFIER_BYTES // 3), "京" * (MAX_IDENTIFIER_BYTES // 3)),
    "emoji": ("😀" * (MAX_IDENTIFIER_BYTES // 4), "🎉" * (MAX_IDENTIFIER_BYTES // 4)),
}
# what the old character limit (256) let through: up to 1,024 bytes each
OVER_LIMIT = {
    "latin-ext": ("Ł" * 256, "ż" * 256),
    "cjk-user": ("acme", "東" * 100),
    "emoji-tenant": ("😀" * 65, "alice"),
    "one byte over": ("acme", "a" * (MAX_IDENTIFIER_BYTES - 1) + "é"),
}


def _every_path(memory: convmem.Memory, tenant: str, user: str) -> None:
    """Write and read through every path that binds the principal's ids into a query."""
    who = memory.scope(tenant, user)
    assert who.remember("I prefer aisle seats on long flights.").status == "saved"
    conv = who.create_conversation(title="Trip")
    conv.append("user", "Plan the aisle seats for Lisbon, please.")
    conv.append("assistant", "Aisle seats noted for Lisbon.")
    assert [h.memory.text for h in who.search_memories("aisle seats", k=5)]
    assert conv.search("Lisbon", k=5)
    profile = convmem.ModelProfile(context_window=4096, max_output=512, tokenizer="o200k_base")
    ctx = conv.assemble("Which seats do I like?", model=profile)
    assert ctx.report.memory_ids
    memory.tools.register(tenant, {"name": "weather", "description": "Forecast for a city."})
    assert json.dumps(who.export())
    who.delete_all()
    assert who.memories.list() == []


@pytest.mark.parametrize("script", list(AT_LIMIT), ids=list(AT_LIMIT))
def test_every_id_the_library_accepts_works_on_every_path(
    memory: convmem.Memory, script: str
) -> None:
    tenant, user = AT_LIMIT[script]
    assert len(tenant.encode()) <= MAX_IDENTIFIER_BYTES >= len(user.encode())
    _every_path(memory, tenant, user)


@pytest.mark.parametrize("case", list(OVER_LIMIT), ids=list(OVER_LIMIT))
def test_a_longer_id_is_refused_clearly_and_writes_nothing(
    memory: convmem.Memory, backend: Backend, case: str
) -> None:
    tenant, user = OVER_LIMIT[case]
    before = backend.fingerprint()
    with pytest.raises(convmem.InvalidIdentifier, match=f"limit is {MAX_IDENTIFIER_BYTES} bytes"):
        _every_path(memory, tenant, user)
    with pytest.raises(convmem.InvalidIdentifier):
        memory.keys.create(tenant if case != "cjk-user" else "acme", "user", user=user)
    assert backend.fingerprint() == before
    assert issubclass(convmem.InvalidIdentifier, convmem.InvalidInput)


# --- over HTTP ------------------------------------------------------------------------------


@pytest.fixture
def client(memory: convmem.Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory), raise_server_exceptions=False) as test_client:
        yield test_client


def _as(token: str, *users: bytes) -> list[tuple[bytes, bytes]]:
    return [
        (b"Authorization", f"Bearer {token}".encode()),
        *((b"X-Convmem-User", u) for u in users),
    ]


def _problem(response: object, status: int, code: str) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == "application/problem+json"  # type: ignore[attr-defined]
    assert response.json()["code"] == code  # type: ignore[attr-defined]


def test_a_percent_encoded_utf8_user_is_that_user(
    memory: convmem.Memory, client: TestClient
) -> None:
    app_key = memory.keys.create("acme", "app").token
    named = _as(app_key, b"%C5%81ukasz")
    assert client.get("/v1/me", headers=named).json()["user"] == "Łukasz"
    saved = client.post("/v1/memories", json={"text": "I like trains."}, headers=named)
    assert saved.status_code == 201, saved.text
    assert [m.text for m in memory.scope("acme", "Łukasz").memories.list()] == ["I like trains."]
    # a literal % and a comma travel escaped
    escaped = _as(app_key, b"50%25%2Coff")
    assert client.get("/v1/me", headers=escaped).json()["user"] == "50%,off"


@pytest.mark.parametrize(
    "values",
    [
        ["Łukasz".encode()],  # raw UTF-8: a Latin-1 reader made it "Å\x81ukasz"
        [b"\xff\xfeukasz"],  # not even UTF-8
        ["José".encode("latin-1")],
        [b"%C5ukasz"],  # an escape that is not UTF-8
        [b"alice", b"bob"],  # twice: the service took the first, MCP the last
        [b"alice", b"alice"],
        [b"alice, bob"],  # two values a proxy merged
    ],
    ids=["utf8-raw", "bytes-raw", "latin1-raw", "bad-escape", "twice", "twice-same", "merged"],
)
def test_a_user_header_read_two_ways_is_refused(
    memory: convmem.Memory, backend: Backend, client: TestClient, values: list[bytes]
) -> None:
    app_key = memory.keys.create("acme", "app").token
    alice_key = memory.keys.create("acme", "user", user="alice").token
    before = backend.fingerprint()
    for token in (app_key, alice_key):
        headers = _as(token, *values)
        _problem(client.post("/v1/memories", json={"text": "I like tea."}, headers=headers),
                 400, "invalid_user_header")  # fmt: skip
        _problem(client.get("/v1/me", headers=headers), 400, "invalid_user_header") if (
            token == app_key
        ) else None
    assert backend.fingerprint() == before


def test_a_long_user_header_is_a_clear_400(
    memory: convmem.Memory, backend: Backend, client: TestClient
) -> None:
    app_key = memory.keys.create("acme", "app").token
    before = backend.fingerprint()
    for user in ("Ł" * 200, "a" * (MAX_IDENTIFIER_BYTES + 1), "😀" * 256):
        encoded = user_header_value(user).encode()
        for path in ("/v1/memories", "/v1/memories/search?q=aisle"):
            _problem(client.get(path, headers=_as(app_key, encoded)), 400, "invalid_identifier")
    # at the limit, the search that answered 503 on PostgreSQL answers
    at_limit = "Ł" * (MAX_IDENTIFIER_BYTES // 2)
    encoded = user_header_value(at_limit).encode()
    assert (
        client.get("/v1/memories/search?q=aisle", headers=_as(app_key, encoded)).status_code == 200
    )
    assert backend.fingerprint() == before


def test_a_key_for_a_long_user_is_refused_and_writes_nothing(
    memory: convmem.Memory, backend: Backend, client: TestClient
) -> None:
    """A user key could carry a principal no request may name: it is refused like any other
    malformed field of a body (422), with the limit in the message."""
    admin = {"Authorization": f"Bearer {memory.keys.create('acme', 'admin').token}"}
    before = backend.fingerprint()
    made = client.post("/v1/keys", json={"role": "user", "user": "Ł" * 200}, headers=admin)
    _problem(made, 422, "invalid_input")
    assert f"the limit is {MAX_IDENTIFIER_BYTES} bytes" in made.json()["detail"]
    assert backend.fingerprint() == before


@pytest.mark.parametrize("user", ["Łukasz", "東京", "ali/ce", 'o\'brien "x"'])
def test_the_export_downloads_for_any_user(
    memory: convmem.Memory, client: TestClient, user: str
) -> None:
    token = memory.keys.create("acme", "user", user=user).token
    memory.scope("acme", user).remember("I prefer aisle seats.")
    response = client.get("/v1/export", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    disposition = response.headers["content-disposition"]
    assert disposition.isascii()
    plain = disposition.split('filename="', 1)[1].split('"', 1)[0]
    assert plain.isascii() and "/" not in plain and '"' not in plain
    exact = unquote(disposition.split("filename*=UTF-8''", 1)[1], errors="strict")
    assert exact == f"convmem-export-acme-{user.replace('/', '_')}.json"
    assert response.json()["data"]["memories"][0]["text"] == "I prefer aisle seats."
    assert datetime.fromisoformat(response.json()["exported_at"])


@given(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=80))
def test_the_header_value_a_client_makes_reads_back_as_the_same_user(user: str) -> None:
    value = user_header_value(user)
    assert value.isascii() and "," not in value
    assert named_user([(b"x-convmem-user", value.encode("ascii"))]) == user
