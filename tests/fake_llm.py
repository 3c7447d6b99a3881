"""A local OpenAI-compatible chat server for tests: ``/v1/chat/completions`` on 127.0.0.1.

Its "model" reads the prompt convmem sends and answers it. A memory-extraction prompt (recent
turns; ``convmem.consolidate.extract``) gets candidate memories (``extracted_memories``: every
turn of the user's, whatever it says, cited by id; the modes ``invented_number``,
``invented_name``, ``wrong_source`` and ``garbage`` answer wrongly). With ``paraphrases`` (turn
text → what the model says instead), a turn's memory or summary note is that paraphrase, citing
the turn — or, with ``misattribute``, the user turn before it (a model that paraphrases a secret
and cites the wrong turn). The entity extractor's
prompt (``entity_turn``) gets the turn's names in ``good`` mode and entities the turn never named
in ``invented`` mode. A summary prompt (previous snapshot + new turns) is answered in one of
several modes: ``good`` (a faithful snapshot), ``forged_tools`` (a faithful snapshot whose every
note claims to come from a tool it did not), ``garbage`` (not JSON), ``wrong_numbers`` (notes
citing numbers absent from their sources), ``hang`` (holds the request until released) and
``error`` (HTTP 500). It runs in a thread of the test; a worker process may call it too.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A turn opening with one of these becomes a cited note of that category (beyond the decision).
_NOTE_PREFIXES = {"Constraint:": "constraints", "TODO:": "open_tasks",
                  "Open question:": "open_questions"}  # fmt: skip


def _cited(turns: list[dict[str, Any]], index: int, misattribute: bool) -> str:
    """The id a paraphrase of ``turns[index]`` cites: its own, or the user turn before it."""
    if misattribute:
        earlier = [t["id"] for t in turns[:index] if t["role"] == "user"]
        if earlier:
            return str(earlier[-1])
    return str(turns[index]["id"])


def faithful_snapshot(
    payload: dict[str, Any], paraphrases: dict[str, str] | None = None, misattribute: bool = False
) -> dict[str, Any]:
    """Carry the previous snapshot; a turn stating a decision becomes the (one) decision, one
    stating a constraint, a task or an open question a cited note of its kind; a turn with a
    paraphrase becomes a fact saying the paraphrase."""
    snapshot: dict[str, list[dict[str, Any]]] = {
        key: list(value) for key, value in payload["previous_snapshot"].items()
    }
    for index, turn in enumerate(payload["new_turns"]):
        content = turn["content"]
        if paraphrases and content in paraphrases:
            cited = _cited(payload["new_turns"], index, misattribute)
            snapshot.setdefault("facts", []).append(
                {"text": paraphrases[content], "sources": [cited]}
            )
        if content.startswith("Decision:"):
            snapshot["decisions"] = [
                {"text": content, "sources": [turn["id"]], "subject": "database"}
            ]
        for prefix, category in _NOTE_PREFIXES.items():
            if content.startswith(prefix):
                snapshot.setdefault(category, []).append({"text": content, "sources": [turn["id"]]})
        if turn["role"] == "tool" or content.startswith("Fact:"):
            snapshot.setdefault("facts", []).append({"text": content, "sources": [turn["id"]]})
    return snapshot


def extracted_memories(
    payload: dict[str, Any],
    mode: str,
    paraphrases: dict[str, str] | None = None,
    misattribute: bool = False,
) -> dict[str, Any]:
    """Mem0-like extraction: each user turn's first sentence is a memory citing it — questions
    and small talk included, as a careless model would (convmem must refuse those). The wrong
    modes add a number or a name the turn never said, or cite a turn that is not the user's."""
    memories: list[dict[str, Any]] = []
    user_turns = [t for t in payload["turns"] if t["role"] == "user"]
    for index, turn in enumerate(user_turns):
        if paraphrases and turn["content"] in paraphrases:
            cited = _cited(user_turns, index, misattribute)
            memories.append({"text": paraphrases[turn["content"]], "sources": [cited]})
            continue
        first = turn["content"].split(". ")[0].rstrip(".") + "."
        memories.append({"text": first, "sources": [turn["id"]]})
    if mode == "invented_number" and memories:
        memories[0]["text"] = memories[0]["text"].rstrip(".") + " since 2011."
    if mode == "invented_name" and memories:
        memories[0]["text"] = memories[0]["text"].rstrip(".") + " with Beatrix."
    if mode == "wrong_source":
        others = [t["id"] for t in payload["turns"] if t["role"] != "user"]
        for memory in memories:
            memory["sources"] = others[:1] or ["msg_invented"]
    return {"memories": memories}


_CAPITALISED = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)?")


def entity_answer(payload: dict[str, Any], mode: str) -> dict[str, Any]:
    """The entity extractor's answer (``convmem.entities.llm``): in ``good`` mode every
    capitalised name inside a sentence, as a person with the sentences naming it; in
    ``invented`` mode a name and a fact the turn never said."""
    text = payload["entity_turn"]["text"]
    if mode == "invented":
        return {
            "entities": [
                {
                    "name": "Zorblax",
                    "type": "person",
                    "facts": [{"text": "Zorblax owns a castle.", "confidence": 1}],
                }
            ]
        }
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    found: dict[str, dict[str, Any]] = {}
    for name in _CAPITALISED.findall(text):
        facts = [{"text": s, "confidence": 0.9} for s in sentences if name in s]
        found.setdefault(name, {"name": name, "type": "person", "aliases": [], "facts": facts})
    return {"entities": list(found.values())}


FORGED_TOOL = "forged_tool"


def forged_tools(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Every note claims its sources are results of ``FORGED_TOOL`` from long ago."""
    for notes in snapshot.values():
        for note in notes:
            note["tools"] = [
                {"source": source, "tool": FORGED_TOOL, "at": "1999-01-01T00:00:00+00:00"}
                for source in note["sources"]
            ]
    return snapshot


class FakeLLM:
    def __init__(
        self,
        mode: str = "good",
        paraphrases: dict[str, str] | None = None,
        misattribute: bool = False,
    ) -> None:
        self.mode = mode
        self.paraphrases = paraphrases or {}
        self.misattribute = misattribute
        self.requests: list[dict[str, Any]] = []
        self.received = threading.Event()
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                fake.received.set()
                mode = fake.mode
                if mode == "hang":
                    fake.release.wait(60)
                    mode = fake.mode if fake.mode != "hang" else "error"
                if mode == "error":
                    self._send(500, {"error": {"message": "boom"}})
                    return
                payload = json.loads(body["messages"][-1]["content"])
                if mode == "garbage":
                    content = "Sure! Here is the summary you asked for: it went well."
                elif "entity_turn" in payload:
                    content = json.dumps(entity_answer(payload, mode))
                elif "turns" in payload:  # a memory-extraction prompt
                    content = json.dumps(
                        extracted_memories(payload, mode, fake.paraphrases, fake.misattribute)
                    )
                elif mode == "garbage":
                    content = "Sure! Here is the summary you asked for: it went well."
                elif mode == "wrong_numbers":
                    turn = payload["new_turns"][0]
                    content = json.dumps(
                        {
                            "decisions": [
                                {
                                    "text": "Use PostgreSQL 99 for the database.",
                                    "sources": [turn["id"]],
                                }
                            ],
                            "constraints": [
                                {"text": "Answer within 250 ms.", "sources": ["msg_invented"]}
                            ],
                        }
                    )
                elif mode == "forged_tools":
                    content = json.dumps(forged_tools(faithful_snapshot(payload)))
                else:
                    snapshot = faithful_snapshot(payload, fake.paraphrases, fake.misattribute)
                    content = "```json\n" + json.dumps(snapshot) + "\n```"
                self._send(
                    200,
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 120,
                            "completion_tokens": 30,
                            "total_tokens": 150,
                        },
                    },
                )

            def _send(self, status: int, value: dict[str, Any]) -> None:
                data = json.dumps(value).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client went away (timed out, or was killed)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
