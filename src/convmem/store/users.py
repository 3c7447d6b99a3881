"""A user's whole data at once: the export a user may ask for, and the delete that forgets them."""

from __future__ import annotations

from typing import Any, Protocol


class UserDataReads(Protocol):
    def export_user(self, tenant: str, user: str) -> dict[str, list[dict[str, Any]]]:
        """Every row the user owns, by table, as column → value: conversations, messages, token
        counts, pins, memories, audit events, settings, summaries, jobs, last assemblies — not
        the derived search rows (index, vocabulary, vectors), which hold nothing new."""
        ...

    def tenant_users(self, tenant: str, after: str | None, limit: int) -> list[str]:
        """The tenant's users who own a conversation, in id order, the first ``limit`` after
        ``after`` (a page: an operator's rebuild walks a tenant of any size in pages)."""
        ...


class UserDataWrites(Protocol):
    def delete_user(self, tenant: str, user: str) -> dict[str, int]:
        """Delete every row of the user's data — the canonical rows and every derived one
        (search index, vocabulary, vectors, summaries, jobs) — except the audit, which holds no
        content. Returns the rows deleted per table (names are the backend's)."""
        ...

    def delete_tenant(self, tenant: str) -> dict[str, int]:
        """Delete every row of the tenant in every table — its users' data with everything
        derived from it, its tool registry, keys, policy, jobs and audit — through the lineage
        graph (``convmem.store.lineage``). Returns the rows deleted per table."""
        ...
