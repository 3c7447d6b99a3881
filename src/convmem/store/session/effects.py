"""What each store write does to the session tier: the one table a write path goes through.

The tier caches, per conversation, what ``request_state`` returns for its active branch: the
conversation record, its pins (the user's and its own), the last assembly and the branch's rows.
Every write method of the store (``WriteTxn`` less ``ReadTxn``) is named here with the reach of
what it changes in that state: ``conversation`` (the one its arguments name), ``user`` (every
conversation of the user), ``tenant`` (every conversation of the tenant) or ``none`` (the tier
holds nothing it changes: memories, summaries, the search index, jobs, keys…). The tier's write
transaction looks each call up here before it reaches the database, so a write path cannot miss
the generation; a method missing here moves the whole tenant's (and
``tests/store/test_session_tier.py`` fails until it is classified).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from convmem.store.session.keys import (
    EVERYTHING,
    Scope,
    conversation_scope,
    tenant_scope,
    user_scope,
)

# the arguments of a call, by parameter name → the scopes it moves
Reach = Callable[[Mapping[str, Any]], list[Scope]]


def _none(_: Mapping[str, Any]) -> list[Scope]:
    return []


def _conversation(args: Mapping[str, Any]) -> list[Scope]:
    return [conversation_scope(args["tenant"], args["conversation_id"])]


def _user(args: Mapping[str, Any]) -> list[Scope]:
    return [user_scope(args["tenant"], args["user"])]


def _tenant(args: Mapping[str, Any]) -> list[Scope]:
    return [tenant_scope(args["tenant"])]


def _rows(args: Mapping[str, Any]) -> list[Scope]:
    conversations = dict.fromkeys(row.message.conversation_id for row in args["rows"])
    return [conversation_scope(args["tenant"], c) for c in conversations]


def _record(args: Mapping[str, Any]) -> list[Scope]:
    return [conversation_scope(args["tenant"], args["record"].conversation_id)]


def _new_conversation(args: Mapping[str, Any]) -> list[Scope]:
    return [conversation_scope(args["tenant"], args["record"].id)]


# write method → (its reach, why)
EFFECTS: Final[Mapping[str, tuple[Reach, str]]] = {
    # the conversation and its branch
    "insert_conversation": (_new_conversation, "a new conversation (nothing cached yet)"),
    "insert_messages": (_rows, "the branch grows (written through when the leaf moves onto it)"),
    "set_active_leaf": (_conversation, "the branch a request reads"),
    "put_last_assembly": (_record, "the last request (written through)"),
    "delete_conversation": (_conversation, "erase: its cached rows go"),
    # which conversations hold a message is not in the call: every one of the tenant's
    "delete_messages": (_tenant, "erase: cached rows of any conversation"),
    # pins: user-wide ones reach every conversation of the user; a delete names no conversation
    "insert_pinned": (_user, "pins (user-wide or the conversation's)"),
    "delete_pinned": (_user, "erase: pins"),
    # everything of a user or a tenant
    "delete_user": (_user, "erase: everything of the user"),
    "delete_tenant": (_tenant, "erase: everything of the tenant"),
    # not in the cached state (the tier caches no memory, summary, index, entity or tool)
    "subtree_ids": (_none, "reads ids"),
    "insert_memory": (_none, "memories are read from the database each request"),
    "set_memory_fields": (_none, "memories are read from the database each request"),
    "delete_memories": (_none, "memories are read from the database each request"),
    "add_memory_evidence": (_none, "memories are read from the database each request"),
    "set_memory_vectors": (_none, "memories are read from the database each request"),
    "set_memory_enabled": (_none, "the memory switch is read from the database each request"),
    "set_tenant_policy": (_none, "the tenant's policy is read from the database each request"),
    "insert_audit": (_none, "the audit"),
    "delete_audit_before": (_none, "the audit"),
    "insert_summary": (_none, "summaries are looked up in the database each request"),
    "delete_summary": (_none, "summaries are looked up in the database each request"),
    "delete_summaries_before": (_none, "summaries are looked up in the database each request"),
    "enqueue_job": (_none, "jobs"),
    "claim_job": (_none, "jobs"),
    "extend_lease": (_none, "jobs"),
    "finish_job": (_none, "jobs"),
    "fail_job": (_none, "jobs"),
    "retry_job": (_none, "jobs"),
    "set_index_context": (_none, "the search index"),
    "index_messages": (_none, "the search index"),
    "retain_terms": (_none, "the search index"),
    "add_terms": (_none, "the search index"),
    "delete_index_rows_before": (_none, "the search index"),
    "set_message_vectors": (_none, "the search index"),
    "set_term_vectors": (_none, "the search index"),
    "index_conversation_step": (_none, "the search index (which turns an HNSW graph holds)"),
    "stage_message_vectors": (_none, "the search index (a new embedder's, not yet serving)"),
    "stage_memory_vectors": (_none, "memories' vectors (a new embedder's, not yet serving)"),
    "begin_embedder_switch": (_none, "the search index (which embedder serves is not cached)"),
    "finish_embedder_switch": (_none, "the search index (which embedder serves is not cached)"),
    "cancel_embedder_switch": (_none, "the search index (which embedder serves is not cached)"),
    "keep_write": (_none, "idempotency records (a replayed write returns what was written)"),
    "forget_kept_writes": (_none, "idempotency records"),
    "insert_api_key": (_none, "keys"),
    "revoke_api_key": (_none, "keys"),
    "insert_page_session": (_none, "the page's sessions"),
    "touch_page_session": (_none, "the page's sessions"),
    "end_page_session": (_none, "the page's sessions"),
    "put_tool": (_none, "the tool registry"),
    "set_tool_vector": (_none, "the tool registry"),
    "delete_tool": (_none, "the tool registry"),
    "put_entity": (_none, "entities"),
    "add_entity_name_sources": (_none, "entities"),
    "add_entity_facts": (_none, "entities"),
    "delete_entity": (_none, "entities"),
    "delete_entity_fact": (_none, "entities"),
    "set_entity_fact_status": (_none, "entities"),
    "delete_user_entities": (_none, "entities"),
    "delete_entity_facts_before": (_none, "entities"),
}


def reach_of(method: str, args: Mapping[str, Any]) -> list[Scope]:
    """The scopes a call of ``method`` moves; an unclassified method moves its tenant's, or
    without a tenant argument everything the tier holds."""
    known = EFFECTS.get(method)
    if known is not None:
        return known[0](args)
    return _tenant(args) if "tenant" in args else [EVERYTHING]
