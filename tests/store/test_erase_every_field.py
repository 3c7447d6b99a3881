"""Erasure probed from outside, on every backend (session 41): a unique marker written into every
field a caller can set — a conversation's title and metadata, a message's metadata (nested), a
tool call's name and arguments, a tool's result, a content part's URL, a memory's subject, a pin,
the idempotency keys of an append and of a remember, a rolling summary's notes — is in some row
before the erase and in no row of any table after it (``Backend.dump``: what a thief of the
database would read), through each erase path: conversation delete, a user's delete-all (the
library's and HTTP's ``DELETE /v1/data``), a tenant's erase. Another user's data stays.

All held when probed; they stay as regression tests for fields and paths added later."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

import convmem
from convmem.model.messages import ToolCall
from convmem.service import create_app
from tests.store.backends import Backend

SMALL = convmem.ModelProfile(context_window=1500, max_output=200, tokenizer="o200k_base")


def _marker() -> str:
    # letters then digits: one token for every tokenizer and full-text index, no stemmer change
    return "zyxqv" + "".join(secrets.choice("0123456789") for _ in range(8))


def _write_everywhere(memory: convmem.Memory, tenant: str, marker: str) -> convmem.Conversation:
    """The marker in every caller-set field of alice's data in ``tenant``."""
    alice = memory.scope(tenant, "alice")
    conv = alice.create_conversation(title=f"trip {marker}", metadata={"tag": marker})
    conv.append("user", "hello there", metadata={"speaker": f"Mx {marker}",
                                                 "nested": {"x": [marker]}})  # fmt: skip
    call = ToolCall("call_1", f"lookup_{marker}", json.dumps({"q": marker}))
    conv.append("assistant", "looking it up", tool_calls=[call])
    conv.append("tool", f"result {marker}", tool_call_id="call_1")
    conv.append("user", [
        {"type": "text", "text": "see this"},
        {"type": "image_url", "image_url": {"url": f"https://example.com/{marker}.png"},
         "width": 10, "height": 10},
    ], idempotency_key=f"append-{marker}")  # fmt: skip
    conv.pin(f"Always greet me as {marker}")
    alice.remember("I like green tea", subject=f"drink {marker}",
                   idempotency_key=f"remember-{marker}")  # fmt: skip
    conv.append("user", f"the secret word is {marker}")
    for i in range(25):
        conv.append("user", f"Turn {i}: tell me something nice about rivers and owls.")
        conv.append("assistant", f"Rivers and owls, note {i}: calm company at dusk.")
    conv.assemble("continue", model=SMALL)  # a rolling summary quotes the marker
    return conv


def _keep_bob(memory: convmem.Memory, tenant: str, marker: str) -> None:
    bob = memory.scope(tenant, "bob")
    bob.remember(f"I prefer tea over coffee {marker}.")
    bob.create_conversation(title=f"bob {marker}").append("user", "the garden shed and tomatoes")


CONVERSATIONS_OWN = ("trip {}", "Mx {}", "lookup_{}", "result {}", "{}.png", "as {}", "is {}")


def _conversation_delete(memory: convmem.Memory, marker: str, backend: Backend) -> None:
    _write_everywhere(memory, "acme", marker).delete()
    dump = backend.dump()
    for form in CONVERSATIONS_OWN:
        assert form.format(marker) not in dump, form
    # what is not the conversation's (the memory, the idempotency keys) goes with the user
    memory.scope("acme", "alice").delete_all()


def _delete_all(memory: convmem.Memory, marker: str, backend: Backend) -> None:
    _write_everywhere(memory, "acme", marker)
    memory.scope("acme", "alice").delete_all()


def _http_delete_data(memory: convmem.Memory, marker: str, backend: Backend) -> None:
    _write_everywhere(memory, "acme", marker)
    token = memory.keys.create("acme", "user", user="alice").token
    with TestClient(create_app(memory)) as client:
        answer = client.delete("/v1/data", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200


def _tenant_erase(memory: convmem.Memory, marker: str, backend: Backend) -> None:
    _write_everywhere(memory, "zeta", marker)
    memory.erase_tenant("zeta")


PATHS: dict[str, Callable[[convmem.Memory, str, Backend], None]] = {
    "conversation delete": _conversation_delete,
    "delete_all": _delete_all,
    "DELETE /v1/data": _http_delete_data,
    "tenant erase": _tenant_erase,
}


@pytest.mark.parametrize("path", list(PATHS))
def test_a_marker_in_every_caller_field_leaves_no_row(
    backend: Backend, memory: convmem.Memory, path: str
) -> None:
    marker, bobs = _marker(), _marker()
    _keep_bob(memory, "acme", bobs)
    PATHS[path](memory, marker, backend)
    dump = backend.dump()
    assert marker not in dump
    assert f"coffee {bobs}" in dump and f"bob {bobs}" in dump  # another user's data stays


def test_the_probe_sees_every_field_before_the_erase(
    backend: Backend, memory: convmem.Memory
) -> None:
    marker = _marker()
    _write_everywhere(memory, "acme", marker)
    dump = backend.dump()
    for form in (*CONVERSATIONS_OWN, "drink {}", "append-{}", "remember-{}"):
        assert form.format(marker) in dump, form
