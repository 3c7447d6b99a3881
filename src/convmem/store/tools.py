"""The tool registry: each tenant's tool definitions, by name, and their place in the search index.
Tenant-wide rows an application (or administrator) writes. A tool is found the way memories are:
its ``RegisteredTool.document`` is indexed by the backend's full-text engine (SQLite FTS5 with
porter stemming, PostgreSQL tsvector), and its vector per embedder is stored beside it; ranking
happens at this boundary, and ``convmem.domain.search.rank_tools`` fuses the rankings as search
does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from convmem.model.admitted import Admitted
from convmem.model.tools import RegisteredTool
from convmem.store.search_index import Vector


@dataclass(frozen=True)
class ToolHit:
    """A ranked tool: its name and the engine's score (BM25-shaped, or cosine), higher better."""

    name: str
    score: float


class ToolReads(Protocol):
    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        """The tenant's registered tools, by name."""
        ...

    def search_tool_terms(self, tenant: str, terms: Sequence[str], *, limit: int) -> list[ToolHit]:
        """The tenant's tools whose documents match any of ``terms``, best first."""
        ...

    def nearest_tools(
        self, tenant: str, embedder: str, vector: Vector, *, limit: int
    ) -> list[ToolHit]:
        """The tenant's tools with a vector from ``embedder``, nearest (cosine) first."""
        ...


class ToolWrites(Protocol):
    def put_tool(self, tenant: str, admitted: Admitted[RegisteredTool]) -> None:
        """Register the admitted tool for the tenant, replacing one of the same name (its
        ``created_at`` is kept, ``updated_at`` taken from ``tool``); its document is indexed and
        any vector of the old definition dropped."""
        ...

    def set_tool_vector(self, tenant: str, name: str, embedder: str, vector: Vector) -> None:
        """Store the vector of the tenant's tool ``name`` for ``embedder`` (nothing when the tool
        is gone)."""
        ...

    def delete_tool(self, tenant: str, name: str) -> None:
        """Remove the tenant's tool and its vectors; ``NotFound`` when the tenant has none of
        that name (another tenant's included)."""
        ...
