"""Conversations over HTTP: the tree, assembly and pins, as the Python surface does them."""

from __future__ import annotations

from fastapi.testclient import TestClient

import convmem

from .conftest import Keys, auth


def _new(client: TestClient, headers: dict[str, str], **body: object) -> str:
    made = client.post("/v1/conversations", json=body, headers=headers)
    assert made.status_code == 201, made.text
    conversation_id: str = made.json()["id"]
    return conversation_id


def test_create_list_get_and_delete(client: TestClient, keys: Keys) -> None:
    alice = auth(keys.alice)
    first = _new(client, alice, title="Trip", metadata={"project": "lisbon"})
    second = _new(client, alice, temporary=True)
    listed = client.get("/v1/conversations", headers=alice).json()
    assert [c["id"] for c in listed] == [second, first]
    assert listed[0]["temporary"] is True
    got = client.get(f"/v1/conversations/{first}", headers=alice).json()
    assert got["title"] == "Trip"
    assert got["metadata"] == {"project": "lisbon"}
    page = client.get("/v1/conversations", params={"limit": 1, "offset": 1}, headers=alice)
    assert [c["id"] for c in page.json()] == [first]
    assert client.delete(f"/v1/conversations/{first}", headers=alice).status_code == 204
    assert client.get(f"/v1/conversations/{first}", headers=alice).status_code == 404


def test_the_tree_append_edit_regenerate_switch_and_delete(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    h = auth(keys.alice)
    cid = _new(client, h)
    base = f"/v1/conversations/{cid}"

    def post(path: str, body: dict[str, object]) -> dict[str, object]:
        response = client.post(base + path, json=body, headers=h)
        assert response.status_code == 201, response.text
        result: dict[str, object] = response.json()
        return result

    question = post("/messages", {"role": "user", "content": "Find flights", "metadata": {"x": 1},
                                  "created_at": "2023-05-08T13:56:00"})  # fmt: skip
    assert question["created_at"] == "2023-05-08T13:56:00Z"
    call = post("/messages", {"role": "assistant", "tool_calls": [
        {"id": "c1", "name": "search", "arguments": '{"to": "LIS"}'}]})  # fmt: skip
    post("/messages", {"role": "tool", "content": "3 flights", "tool_call_id": "c1"})
    answer = post("/messages", {"role": "assistant", "content": "I found three."})
    branch = client.get(base + "/branch", headers=h).json()
    assert [m["role"] for m in branch] == ["user", "assistant", "tool", "assistant"]
    assert branch[1]["tool_calls"] == [{"id": "c1", "name": "search", "arguments": '{"to": "LIS"}'}]

    again = post(f"/messages/{answer['id']}/regenerate", {"content": "Three flights found."})
    assert again["parent_id"] == answer["parent_id"]
    siblings = client.get(f"{base}/messages/{answer['id']}/siblings", headers=h).json()
    assert [m["id"] for m in siblings] == [answer["id"], again["id"]]
    back = client.post(f"{base}/messages/{again['id']}/regenerate", json={}, headers=h)
    assert back.status_code == 201
    assert back.json()["role"] == "tool"  # the leaf moved back to what the reply answered

    edited = post(f"/messages/{question['id']}/edit", {"content": "Find trains"})
    record = client.get(base, headers=h).json()
    assert record["active_leaf_id"] == edited["id"]
    assert client.get(f"{base}/messages/{edited['id']}", headers=h).json()["metadata"] == {"x": 1}

    switched = client.put(f"{base}/active-leaf", json={"leaf_id": answer["id"]}, headers=h)
    assert switched.json()["active_leaf_id"] == answer["id"]
    assert len(client.get(f"{base}/messages", headers=h).json()) == 6
    old_branch = client.get(
        f"{base}/branch", params={"leaf_id": str(edited["id"])}, headers=h
    ).json()
    assert [m["content"] for m in old_branch] == ["Find trains"]

    deleted = client.delete(f"{base}/messages/{call['id']}", headers=h).json()["deleted_ids"]
    assert set(deleted) >= {call["id"], answer["id"], again["id"]}
    assert client.get(f"{base}/messages/{answer['id']}", headers=h).status_code == 404
    conv = memory.scope("acme", "alice").conversation(cid)
    assert {m.id for m in conv.messages()} == {question["id"], edited["id"]}


def test_assemble_returns_provider_messages_and_keeps_the_report(
    client: TestClient, keys: Keys
) -> None:
    h = auth(keys.alice)
    cid = _new(client, h)
    base = f"/v1/conversations/{cid}"
    client.post(f"{base}/messages", json={"role": "user", "content": "I live in Porto."},
                headers=h)  # fmt: skip
    client.post(f"{base}/messages", json={"role": "assistant", "content": "Nice city."},
                headers=h)  # fmt: skip
    client.post(f"{base}/pins", json={"text": "Answer in English."}, headers=h)
    assert client.get(f"{base}/last-assembly", headers=h).status_code == 404

    body = {
        "user_message": "Where do I live?",
        "model": {"context_window": 4096, "max_output": 512, "tokenizer": "cl100k_base"},
        "format": "anthropic",
        "system": "You are helpful.",
        "options": {"memory_k": 0},
    }
    response = client.post(f"{base}/assemble", json=body, headers=h)
    assert response.status_code == 200, response.text
    out = response.json()
    assert out["messages"][-1]["role"] == "user"
    assert "Where do I live?" in str(out["messages"][-1])
    assert out["system"]
    assert out["report"]["tokenizer"] == "cl100k_base"
    assert out["report"]["sections"]["pinned"] > 0
    openai = client.post(f"{base}/assemble", json={"user_message": "Again?"}, headers=h).json()
    assert openai["system"] is None
    assert openai["messages"][-1] == {"role": "user", "content": "Again?"}

    kept = client.get(f"{base}/last-assembly", headers=h).json()
    assert kept["report"] == openai["report"]
    assert "Porto" not in str(kept)  # ids and counts only

    schema = {"type": "object", "properties": {"to": {"type": "string"}}}
    tool = {"name": "find_train", "description": "Find trains.", "input_schema": schema}
    for format, shape in (
        ("openai", "function"),
        ("responses", "name"),
        ("anthropic", "input_schema"),
    ):
        with_tools = client.post(
            f"{base}/assemble",
            json={"user_message": "Trains?", "format": format, "tools": [tool],
                  "model": {"name": "claude-sonnet-4-5"}},
            headers=h,
        )  # fmt: skip
        assert with_tools.status_code == 200, with_tools.text
        out = with_tools.json()
        assert len(out["tools"]) == 1 and shape in out["tools"][0]
        assert out["report"]["sections"]["tools"] > 0
        assert out["report"]["tools_offered"] == ["find_train"]
    bad_tool = {"user_message": "x", "tools": [{"name": "no spaces allowed"}]}
    refused_tool = client.post(f"{base}/assemble", json=bad_tool, headers=h)
    assert refused_tool.status_code == 422
    assert "tool 0: name" in refused_tool.json()["detail"]

    too_small = {"user_message": "x " * 400, "model": {"context_window": 300, "max_output": 100}}
    refused = client.post(f"{base}/assemble", json=too_small, headers=h)
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["code"] == "budget_exceeded"
    assert problem["needed"] > problem["available"]

    bad_model = {"user_message": "x", "model": {"context_window": 100, "max_output": 100}}
    assert client.post(f"{base}/assemble", json=bad_model, headers=h).status_code == 422
    empty = _new(client, h)
    nothing = client.post(f"/v1/conversations/{empty}/assemble", json={}, headers=h)
    assert nothing.status_code == 422


def test_pins_for_the_user_and_for_a_conversation(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = _new(client, h)
    user_pin = client.post("/v1/pins", json={"text": "Be brief."}, headers=h).json()
    conv_pin = client.post(f"/v1/conversations/{cid}/pins", json={"text": "Use euros."},
                           headers=h).json()  # fmt: skip
    assert [p["text"] for p in client.get("/v1/pins", headers=h).json()] == ["Be brief."]
    both = client.get(f"/v1/conversations/{cid}/pins", headers=h).json()
    assert [p["id"] for p in both] == [user_pin["id"], conv_pin["id"]]
    assert client.delete(f"/v1/pins/{user_pin['id']}", headers=h).status_code == 204
    assert client.delete(f"/v1/pins/{user_pin['id']}", headers=h).status_code == 404
    assert client.post("/v1/pins", json={"text": "  "}, headers=h).status_code == 422


def test_a_message_by_id_alone_for_the_memory_page(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = _new(client, h)
    sent = client.post(f"/v1/conversations/{cid}/messages",
                       json={"role": "user", "content": "hello"}, headers=h).json()  # fmt: skip
    found = client.get(f"/v1/messages/{sent['id']}", headers=h).json()
    assert found["conversation_id"] == cid
    assert client.get(f"/v1/messages/{sent['id']}", headers=auth(keys.bob)).status_code == 404


def test_a_long_branch_and_the_tree_are_read_a_page_at_a_time(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    h = auth(keys.alice)
    conv = memory.scope("acme", "alice").create_conversation()
    first = conv.append("user", "v1")
    conv.edit(first.id, "v2")
    ids = [conv.branch()[0].id] + [conv.append("user", f"m{n}").id for n in range(24)]
    base = f"/v1/conversations/{conv.id}"
    newest = client.get(f"{base}/branch", params={"limit": 10}, headers=h).json()
    assert [m["id"] for m in newest] == ids[-10:]
    assert {(m["version"], m["versions"]) for m in newest} == {(1, 1)}
    seen, page = [m["id"] for m in newest], newest
    while page[0]["parent_id"]:  # the page before ends at the oldest one's parent
        params = {"limit": 10, "leaf_id": page[0]["parent_id"]}
        page = client.get(f"{base}/branch", params=params, headers=h).json()
        seen = [m["id"] for m in page] + seen
    assert seen == ids
    whole = client.get(f"{base}/branch", headers=h).json()
    assert [m["id"] for m in whole] == ids
    assert (whole[0]["version"], whole[0]["versions"]) == (2, 2)
    assert client.get(f"{base}/branch", params={"limit": 0}, headers=h).status_code == 422

    # every message of the tree (the first version too), a page at a time
    everything = [m["id"] for m in client.get(f"{base}/messages", headers=h).json()]
    assert len(everything) == 26
    paged: list[str] = []
    after: dict[str, str | int] = {"limit": 7}
    while batch := client.get(f"{base}/messages", params=after, headers=h).json():
        assert len(batch) <= 7
        paged += [m["id"] for m in batch]
        after = {"limit": 7, "after": batch[-1]["id"]}
    assert paged == everything
    missing = client.get(f"{base}/messages", params={"after": "msg_nope"}, headers=h)
    assert missing.status_code == 404
    # another user's conversation is not found, paged or not
    bob = auth(keys.bob)
    assert client.get(f"{base}/branch", params={"limit": 5}, headers=bob).status_code == 404
    assert client.get(f"{base}/messages", params={"limit": 5}, headers=bob).status_code == 404


def test_the_branch_through_another_version_runs_down_to_its_newest_leaf(
    client: TestClient, keys: Keys, memory: convmem.Memory
) -> None:
    conv = memory.scope("acme", "alice").create_conversation()
    question = conv.append("user", "Plan for May?")
    old_reply = conv.append("assistant", "May plan.")
    old_next = conv.append("user", "And the budget?")
    edited = conv.edit(question.id, "Plan for June?")
    new_reply = conv.append("assistant", "June plan.")
    h, base = auth(keys.alice), f"/v1/conversations/{conv.id}/branch"
    other = client.get(base, params={"through": question.id, "limit": 10}, headers=h).json()
    assert [m["id"] for m in other] == [question.id, old_reply.id, old_next.id]
    assert (other[0]["version"], other[0]["versions"]) == (1, 2)
    active = client.get(base, params={"through": edited.id}, headers=h).json()
    assert [m["id"] for m in active] == [edited.id, new_reply.id]
    both = client.get(base, params={"through": edited.id, "leaf_id": edited.id}, headers=h)
    assert both.status_code == 422
    assert client.get(base, params={"through": "msg_x"}, headers=h).status_code == 404
    bob = auth(keys.bob)
    assert client.get(base, params={"through": question.id}, headers=bob).status_code == 404
