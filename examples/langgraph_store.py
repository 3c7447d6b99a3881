"""A LangGraph graph whose long-term memory is convmem: ConvmemStore as the graph's store.

    python examples/langgraph_store.py

A node saves what the user says as a memory of theirs (namespace (user,)); a credential is
refused by convmem's never-store policy with its reason, and nothing is stored. The graph's
writes are proposals on the user's memory page until the user confirms them.
"""

from __future__ import annotations

import os
import tempfile
from typing import TypedDict

try:
    from langgraph.graph import END, START, StateGraph
    from langgraph.store.base import BaseStore
except ModuleNotFoundError as missing:  # say which extra, not only which module
    raise SystemExit(
        f"this example needs the langgraph extra: pip install -e '.[langgraph]' ({missing})"
    ) from missing

import convmem
from convmem.integrations.langgraph import ConvmemStore


class State(TypedDict):
    user: str
    key: str
    text: str
    outcome: str


def save(state: State, *, store: BaseStore) -> dict[str, str]:
    try:
        store.put((state["user"],), state["key"], {"text": state["text"]})
    except convmem.NeverStoreViolation as refused:
        return {"outcome": f"blocked: {refused.reason}"}
    return {"outcome": "stored"}


def main(db: str) -> None:
    with convmem.open(db) as mem:
        graph = StateGraph(State)
        graph.add_node("save", save)
        graph.add_edge(START, "save")
        graph.add_edge("save", END)
        app = graph.compile(store=ConvmemStore(mem, tenant="acme"))
        secret = "My key is sk-proj-4f9Qz7LmB2xR8tYp1VwK3nJ6hD0sGcE5aUoI"
        for key, text in [("seat", "I prefer aisle seats."), ("openai", secret)]:
            result = app.invoke({"user": "alice", "key": key, "text": text, "outcome": ""})
            print(f"put {key!r} -> {result['outcome']}")
        alice = mem.scope(tenant="acme", user="alice")
        print("memory page:", [(m.status, m.text) for m in alice.memories.list()])
        found = ConvmemStore(mem, tenant="acme").search(("alice",), query="seat")
        print("search before the user confirms:", found)
        alice.memories.confirm(alice.memories.list()[0].id)  # as on the memory page
        found = ConvmemStore(mem, tenant="acme").search(("alice",), query="seat")
        print("search after:", [(hit.key, hit.value["text"]) for hit in found])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(os.path.join(folder, "langgraph.db"))
