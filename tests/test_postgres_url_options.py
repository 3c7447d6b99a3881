"""The PostgreSQL backend's options ride on its URL (``?pool_size=…&migrate=…``), taken out
before the URL reaches libpq; the environment variables are only the defaults."""

from __future__ import annotations

import pytest

import convmem
from convmem.errors import InvalidConfig
from convmem.store.postgres.options import options_from_url


def test_the_options_are_taken_out_of_the_url_and_the_rest_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CONVMEM_PG_POOL_SIZE", raising=False)
    monkeypatch.delenv("CONVMEM_MIGRATE_ON_OPEN", raising=False)
    url = "postgresql://u:p@h/db?pool_size=3&options=-c%20search_path%3Ds1%2Cpublic&migrate=0"
    options = options_from_url(url)
    assert options.pool_size == 3
    assert options.migrate is False
    assert options.url == "postgresql://u:p@h/db?options=-c%20search_path%3Ds1%2Cpublic"
    plain = options_from_url("postgresql://u:p@h/db")
    assert (plain.url, plain.pool_size, plain.migrate) == ("postgresql://u:p@h/db", 10, True)


def test_the_environment_is_the_default_and_the_url_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVMEM_PG_POOL_SIZE", "4")
    monkeypatch.setenv("CONVMEM_MIGRATE_ON_OPEN", "0")
    assert options_from_url("postgresql:///db").pool_size == 4
    assert options_from_url("postgresql:///db").migrate is False
    assert options_from_url("postgresql:///db?pool_size=2&migrate=1").pool_size == 2
    assert options_from_url("postgresql:///db?pool_size=2&migrate=1").migrate is True


@pytest.mark.parametrize(
    ("query", "key"), [("pool_size=0", "pool_size"), ("pool_size=x", "pool_size"),
                       ("migrate=maybe", "migrate")],
)  # fmt: skip
def test_a_bad_option_is_a_config_error_naming_it(query: str, key: str) -> None:
    with pytest.raises(InvalidConfig) as caught:
        convmem.open(f"postgresql://u:secret@h/db?{query}")
    assert caught.value.key == key
    assert "secret" not in str(caught.value)


def test_migrate_0_in_the_url_refuses_a_database_that_lacks_migrations(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONVMEM_MIGRATE_ON_OPEN", raising=False)
    with pytest.raises(convmem.StoreError, match="convmem migrate"):
        convmem.open(postgres_url + "&migrate=0")
    with convmem.open(postgres_url + "&pool_size=2&migrate=1") as memory:
        assert memory.store._pool.max_size == 2  # type: ignore[attr-defined]
        conversation = memory.scope("acme", "alice").create_conversation()
        assert conversation.append("user", "hello").depth == 0
