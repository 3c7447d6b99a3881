"""Content parts over HTTP: appended, edited, read back and assembled; bad parts are a problem
response and write nothing."""

from __future__ import annotations

from fastapi.testclient import TestClient

from .conftest import Keys, auth

SHOT = "https://app.example/u/screenshot.png"
IMAGE = {"type": "image_url", "image_url": {"url": SHOT}, "width": 1280, "height": 720,
         "name": "screenshot.png", "caption": "a red banner"}  # fmt: skip


def test_parts_are_appended_read_back_and_assembled(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    base = f"/v1/conversations/{cid}"
    sent = client.post(f"{base}/messages", headers=h, json={
        "role": "user", "content": [{"type": "text", "text": "What is this?"}, IMAGE]})  # fmt: skip
    assert sent.status_code == 201, sent.text
    body = sent.json()
    assert body["parts"][1]["url"] == SHOT and body["parts"][1]["width"] == 1280
    assert "a red banner" in body["content"] and SHOT not in body["content"]
    listed = client.get(f"{base}/messages", headers=h).json()
    assert listed[0]["parts"] == body["parts"]

    assembled = client.post(f"{base}/assemble", headers=h, json={"format": "anthropic"})
    assert assembled.status_code == 200, assembled.text
    out = assembled.json()
    image = {"type": "image", "source": {"type": "url", "url": SHOT}}
    assert out["messages"][-1]["content"][1] == image
    assert out["report"]["media_tokens"]["user"] > 0

    again = {"content": [{"type": "text", "text": "And this?"}, IMAGE]}
    edited = client.post(f"{base}/messages/{body['id']}/edit", headers=h, json=again)
    assert edited.status_code == 201, edited.text
    assert edited.json()["parts"][0] == {"type": "text", "text": "And this?"}


def test_bad_parts_are_a_problem_and_write_nothing(client: TestClient, keys: Keys) -> None:
    h = auth(keys.alice)
    cid = client.post("/v1/conversations", json={}, headers=h).json()["id"]
    base = f"/v1/conversations/{cid}"
    no_size = {"type": "image_url", "image_url": {"url": SHOT}}
    for content in ([{"type": "video", "url": SHOT}], [no_size], []):
        refused = client.post(f"{base}/messages", headers=h,
                              json={"role": "user", "content": content})  # fmt: skip
        assert refused.status_code in (400, 422), refused.text
        assert SHOT not in refused.text
    assert client.get(f"{base}/messages", headers=h).json() == []
