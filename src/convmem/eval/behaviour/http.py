"""The behaviour suite over the HTTP API: the routes an application and the memory page use.

Every case runs in tenants of its own, so the driver needs a key per tenant: it issues an
application key for each (role ``app``, named ``behaviour suite``) in the database the service
serves (``--db``), and acts for the case's users with ``X-Convmem-User``. The one step the API has
no route for — a tenant's retention sweep, which ``convmem worker`` runs — goes through the
engine on that database. A 404 problem is ``NotFound``, as the engine raises it, so the runner
tells refused from returned the same way on both surfaces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from convmem.domain.keys import USER_HEADER, user_header_value
from convmem.engine import Memory
from convmem.errors import ConvmemError, InvalidInput, NotFound
from convmem.eval.behaviour.drivers import (
    Assembled,
    EngineDriver,
    Item,
    Note,
    SummaryRecorder,
    SummaryView,
    Who,
    profile,
)
from convmem.model.messages import ToolCall
from convmem.model.purpose import DEFAULT_PURPOSE
from convmem.model.snapshot import CATEGORIES


class Response(Protocol):
    @property
    def status_code(self) -> int: ...
    @property
    def content(self) -> bytes: ...
    @property
    def text(self) -> str: ...
    def json(self) -> Any: ...


class Client(Protocol):
    """What the driver uses of an HTTP client with its ``base_url`` set: ``httpx.Client``, or
    the test client of the app."""

    def request(
        self, method: str, url: str, *, params: Any = None, json: Any = None,
        headers: Any = None,
    ) -> Response: ...  # fmt: skip


class ServiceRefused(ConvmemError):
    """The service answered a 4xx other than 404 (the problem's code, never content)."""


class HttpDriver:
    name = "http"

    def __init__(self, client: Client, memory: Memory) -> None:
        """``client`` reaches the service (its ``base_url`` set); ``memory`` is the database
        the service serves."""
        self._client = client
        self._engine = EngineDriver(memory)
        self._memory = memory
        self._keys: dict[str, str] = {}

    def _headers(self, who: Who) -> dict[str, str]:
        tenant, user = who
        if tenant not in self._keys:
            issued = self._memory.keys.create(tenant, "app", name="behaviour suite")
            self._keys[tenant] = issued.token
        return {
            "Authorization": f"Bearer {self._keys[tenant]}",
            USER_HEADER: user_header_value(user),
        }

    def _send(self, who: Who, method: str, path: str, **kwargs: Any) -> Response:
        return self._client.request(method, path, headers=self._headers(who), **kwargs)

    def _call(self, who: Who, method: str, path: str, **kwargs: Any) -> Any:
        response = self._send(who, method, path, **kwargs)
        if response.status_code == 401:
            raise InvalidInput("the service refused the suite's key: does it serve --db?")
        if response.status_code == 404:
            raise NotFound("resource", path.rsplit("/", 1)[-1])
        if response.status_code >= 400:
            code = response.json().get("code", "") if response.content else ""
            raise ServiceRefused(f"{response.status_code} {code}")
        return response.json() if response.content else None

    def _read(self, who: Who, path: str, **kwargs: Any) -> Any:
        """A read another principal may not make: ``None`` for a 404."""
        try:
            return self._call(who, "GET", path, **kwargs)
        except NotFound:
            return None

    # --- writes -----------------------------------------------------------------------------

    def remember(
        self, who: Who, text: str, *, proposed: bool, scope: str, subject: str | None,
        expires_at: datetime | None, purpose: str = DEFAULT_PURPOSE,
        source_message_id: str | None = None,
    ) -> str | None:  # fmt: skip
        body: dict[str, Any] = {"text": text, "scope": scope, "purpose": purpose}
        if source_message_id is not None:
            body["source_message_id"] = source_message_id
        if subject is not None:
            body["subject"] = subject
        if expires_at is not None:
            body["expires_at"] = expires_at.isoformat()
        path = "/v1/memories/proposals" if proposed else "/v1/memories"
        try:
            notice = self._call(who, "POST", path, json=body)
        except ServiceRefused:
            return None
        memory = notice.get("memory")
        return str(memory["id"]) if memory else None

    def confirm(self, who: Who, memory_id: str) -> None:
        self._call(who, "POST", f"/v1/memories/{memory_id}/confirm")

    def reject(self, who: Who, memory_id: str) -> None:
        self._call(who, "POST", f"/v1/memories/{memory_id}/reject")

    def restore(self, who: Who, memory_id: str) -> None:
        self._call(who, "POST", f"/v1/memories/{memory_id}/restore")

    def update_memory(self, who: Who, memory_id: str, text: str) -> str | None:
        notice = self._call(who, "PATCH", f"/v1/memories/{memory_id}", json={"text": text})
        memory = notice.get("memory")
        return str(memory["id"]) if memory else None

    def delete_memory(self, who: Who, memory_id: str) -> None:
        self._call(who, "DELETE", f"/v1/memories/{memory_id}")

    def set_memory_enabled(self, who: Who, enabled: bool) -> None:
        self._call(who, "PUT", "/v1/settings", json={"memory_enabled": enabled})

    def create_conversation(self, who: Who, *, project: str | None, temporary: bool) -> str:
        body: dict[str, Any] = {"temporary": temporary}
        if project:
            body["metadata"] = {"project": project}
        return str(self._call(who, "POST", "/v1/conversations", json=body)["id"])

    def append(
        self, who: Who, conv: str, role: str, text: str, *,
        tool_calls: Sequence[ToolCall] = (), tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> tuple[str, list[str]]:  # fmt: skip
        body: dict[str, Any] = {"role": role, "content": text}
        if metadata:
            body["metadata"] = dict(metadata)
        if tool_calls:
            body["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in tool_calls
            ]
        if tool_call_id is not None:
            body["tool_call_id"] = tool_call_id
        out = self._call(who, "POST", f"/v1/conversations/{conv}/messages", json=body)
        saved = [str(n["memory"]["id"]) for n in out.get("notices", []) if n.get("memory")]
        return str(out["id"]), saved

    def edit(self, who: Who, conv: str, message_id: str, text: str) -> str:
        path = f"/v1/conversations/{conv}/messages/{message_id}/edit"
        return str(self._call(who, "POST", path, json={"content": text})["id"])

    def delete_message(self, who: Who, conv: str, message_id: str) -> None:
        self._call(who, "DELETE", f"/v1/conversations/{conv}/messages/{message_id}")

    def delete_conversation(self, who: Who, conv: str) -> None:
        self._call(who, "DELETE", f"/v1/conversations/{conv}")

    def delete_all(self, who: Who) -> None:
        self._call(who, "DELETE", "/v1/data")

    def expire_conversations(self, tenant: str) -> None:
        self._engine.expire_conversations(tenant)  # no route: the worker's sweep, on --db

    def settle(self) -> int:
        return self._engine.settle()  # the worker's jobs, on --db

    def memory_vectors(self, who: Who) -> list[Item] | None:
        return self._engine.memory_vectors(who)  # no route shows vector rows: read --db

    def recording_summaries(self) -> AbstractContextManager[SummaryRecorder]:
        """What the summarizer produces on --db's ``Memory``: the worker's jobs the suite runs,
        and the requests of a service in this process (one elsewhere is not seen)."""
        return self._engine.recording_summaries()

    # --- reads ------------------------------------------------------------------------------

    def assemble(
        self, who: Who, conv: str, query: str | None, *, window: int, format: str,
        purposes: Sequence[str] | None = None,
    ) -> Assembled | None:  # fmt: skip
        model = profile(window)
        body: dict[str, Any] = {
            "model": {"context_window": model.context_window, "max_output": model.max_output,
                      "tokenizer": model.tokenizer},
            "format": format,
        }  # fmt: skip
        if query:
            body["user_message"] = query
        if purposes is not None:
            body["purposes"] = list(purposes)
        try:
            out = self._call(who, "POST", f"/v1/conversations/{conv}/assemble", json=body)
        except NotFound:
            return None
        return Assembled(out["messages"], out.get("system"), out["report"], out.get("tools"))

    def memory_search(
        self, who: Who, query: str, purposes: Sequence[str] | None = None
    ) -> list[Item]:
        params: dict[str, Any] = {"q": query, "k": 10}
        if purposes is not None:
            params["purpose"] = list(purposes)
        hits = self._call(who, "GET", "/v1/memories/search", params=params)
        return [(h["memory"]["id"], h["memory"]["text"]) for h in hits]

    def memory_list(self, who: Who) -> list[Item]:
        return [(m["id"], m["text"]) for m in self._call(who, "GET", "/v1/memories")]

    def memory_get(self, who: Who, memory_id: str) -> Item | None:
        found = self._read(who, f"/v1/memories/{memory_id}")
        return None if found is None else (found["id"], f"{found['status']}: {found['text']}")

    def message_get(self, who: Who, message_id: str) -> Item | None:
        found = self._read(who, f"/v1/messages/{message_id}")
        return None if found is None else (found["id"], str(found.get("content") or ""))

    def conversation_search(self, who: Who, conv: str, query: str) -> list[Item] | None:
        hits = self._read(who, f"/v1/conversations/{conv}/search", params={"q": query, "k": 20})
        if hits is None:
            return None
        return [(h["message"]["id"], str(h["message"].get("content") or "")) for h in hits]

    def conversation_messages(self, who: Who, conv: str) -> list[Item] | None:
        found = self._read(who, f"/v1/conversations/{conv}/messages")
        return None if found is None else [(m["id"], str(m.get("content") or "")) for m in found]

    def conversation_list(self, who: Who) -> list[Item]:
        found = self._call(who, "GET", "/v1/conversations", params={"limit": 500})
        return [(c["id"], c.get("title") or "") for c in found]

    def export(self, who: Who) -> str:
        response = self._send(who, "GET", "/v1/export")
        if response.status_code != 200:
            raise ServiceRefused(f"{response.status_code}")
        return response.text

    def last_assembly(self, who: Who, conv: str) -> Item | None:
        response = self._send(who, "GET", f"/v1/conversations/{conv}/last-assembly")
        if response.status_code == 404:
            kind = response.json().get("kind") if response.content else None
            return ("", "") if kind == "assembly" else None  # none kept, or not theirs
        if response.status_code != 200:
            raise ServiceRefused(f"{response.status_code}")
        return conv, json.dumps(response.json()["report"])

    def summaries(self, who: Who, conv: str) -> list[SummaryView] | None:
        found = self._read(who, f"/v1/conversations/{conv}/summaries")
        if found is None:
            return None
        views = []
        for record in found:
            snapshot = record.get("snapshot") or {}
            notes = []
            for name in CATEGORIES:
                value = snapshot.get(name) or []
                for item in [value] if isinstance(value, dict) else value:
                    notes.append(Note(str(item["text"]), tuple(item.get("sources", ()))))
            views.append(SummaryView(
                str(record["id"]), tuple(notes), str(record.get("summarizer") or ""),
                record.get("fallback_reason") is not None,
            ))  # fmt: skip
        return views
