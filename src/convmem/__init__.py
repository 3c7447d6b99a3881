"""convmem: the memory layer for LLM chat applications.

Open a database, act as a principal, keep conversations as message trees, and assemble the next
model request within a token budget::

    import convmem
    mem = convmem.open("convmem.db")
    conv = mem.scope(tenant="acme", user="alice").create_conversation(title="Trip")
    conv.append("user", "I prefer aisle seats.")
    ctx = conv.assemble("What seat do I like?", model=convmem.ModelProfile(context_window=8192))
"""

import importlib
from typing import TYPE_CHECKING, Any

from convmem.errors import (
    BackendUnavailable,
    BudgetExceeded,
    ContentTooLarge,
    ConvmemError,
    InvalidDocument,
    InvalidIdentifier,
    InvalidInput,
    InvalidMessage,
    InvalidQuery,
    NeverStoreViolation,
    NotFound,
    PurposeNotAllowed,
    StoreBusy,
    StoreError,
    TimeLimitExceeded,
    UserError,
    WriteConflict,
)

if TYPE_CHECKING:
    from convmem.config import Config
    from convmem.content.tokens import TokenCounter, get_counter
    from convmem.context.assemble import AssemblyOptions
    from convmem.context.report import AssembledContext, AssemblyReport
    from convmem.domain.memories import Memories
    from convmem.domain.search import SearchOptions
    from convmem.engine import Conversation, Memory, Scope, open
    from convmem.entities.llm import LLMEntityExtractor
    from convmem.entities.recall import EntityRecallOptions
    from convmem.model import (
        AuditEvent,
        ConversationRecord,
        MemoryHit,
        MemoryNotice,
        MemoryRecord,
        Message,
        MessageHit,
        ModelProfile,
        ToolCall,
    )
    from convmem.model.deadline import TimeLimits
    from convmem.model.documents import Document
    from convmem.model.entities import Entity, EntityFact
    from convmem.model.policy import (
        RETENTION_LAYERS,
        SPECIAL_CATEGORIES,
        RetentionPeriods,
        TenantPolicy,
    )
    from convmem.model.purpose import PURPOSES
    from convmem.model.snapshot import Snapshot, SnapshotItem, ToolSource
    from convmem.model.summary import Job, SummaryRecord
    from convmem.retrieval.vector import (
        Embedder,
        HashingEmbedder,
        QueryEmbedder,
        SentenceTransformerEmbedder,
    )
    from convmem.store.base import PinnedInstruction, Store
    from convmem.summarize import (
        ExtractiveSummarizer,
        LLMSummarizer,
        LLMSummarizerConfig,
        Summarizer,
    )

# Everything else is imported on first use (PEP 562): the engine pulls in the never-store
# policy, numpy and the store backends, which a CLI start or `import convmem.errors` need not pay.
_LAZY: dict[str, str] = {
    "AssembledContext": "convmem.context.report",
    "AssemblyOptions": "convmem.context.assemble",
    "AssemblyReport": "convmem.context.report",
    "Config": "convmem.config",
    "Conversation": "convmem.engine",
    "Memory": "convmem.engine",
    "Scope": "convmem.engine",
    "open": "convmem.engine",
    "LLMEntityExtractor": "convmem.entities.llm",
    "EntityRecallOptions": "convmem.entities.recall",
    "Memories": "convmem.domain.memories",
    "AuditEvent": "convmem.model",
    "ConversationRecord": "convmem.model",
    "MemoryHit": "convmem.model",
    "MemoryNotice": "convmem.model",
    "MemoryRecord": "convmem.model",
    "Message": "convmem.model",
    "MessageHit": "convmem.model",
    "ModelProfile": "convmem.model",
    "ToolCall": "convmem.model",
    "TimeLimits": "convmem.model.deadline",
    "Document": "convmem.model.documents",
    "Entity": "convmem.model.entities",
    "EntityFact": "convmem.model.entities",
    "RETENTION_LAYERS": "convmem.model.policy",
    "SPECIAL_CATEGORIES": "convmem.model.policy",
    "RetentionPeriods": "convmem.model.policy",
    "TenantPolicy": "convmem.model.policy",
    "PURPOSES": "convmem.model.purpose",
    "Snapshot": "convmem.model.snapshot",
    "SnapshotItem": "convmem.model.snapshot",
    "ToolSource": "convmem.model.snapshot",
    "Job": "convmem.model.summary",
    "SummaryRecord": "convmem.model.summary",
    "Embedder": "convmem.retrieval.vector",
    "HashingEmbedder": "convmem.retrieval.vector",
    "QueryEmbedder": "convmem.retrieval.vector",
    "SentenceTransformerEmbedder": "convmem.retrieval.vector",
    "SearchOptions": "convmem.domain.search",
    "PinnedInstruction": "convmem.store.base",
    "Store": "convmem.store.base",
    "ExtractiveSummarizer": "convmem.summarize",
    "LLMSummarizer": "convmem.summarize",
    "LLMSummarizerConfig": "convmem.summarize",
    "Summarizer": "convmem.summarize",
    "TokenCounter": "convmem.content.tokens",
    "get_counter": "convmem.content.tokens",
}

__all__ = [
    "AssembledContext",
    "AssemblyOptions",
    "AssemblyReport",
    "AuditEvent",
    "BackendUnavailable",
    "BudgetExceeded",
    "Config",
    "ContentTooLarge",
    "Conversation",
    "ConversationRecord",
    "ConvmemError",
    "Document",
    "Embedder",
    "Entity",
    "EntityFact",
    "EntityRecallOptions",
    "ExtractiveSummarizer",
    "HashingEmbedder",
    "InvalidDocument",
    "InvalidIdentifier",
    "InvalidInput",
    "InvalidMessage",
    "InvalidQuery",
    "Job",
    "LLMEntityExtractor",
    "LLMSummarizer",
    "LLMSummarizerConfig",
    "Memories",
    "Memory",
    "MemoryHit",
    "MemoryNotice",
    "MemoryRecord",
    "Message",
    "MessageHit",
    "ModelProfile",
    "NeverStoreViolation",
    "NotFound",
    "PURPOSES",
    "PinnedInstruction",
    "PurposeNotAllowed",
    "QueryEmbedder",
    "RETENTION_LAYERS",
    "RetentionPeriods",
    "SPECIAL_CATEGORIES",
    "Scope",
    "SearchOptions",
    "SentenceTransformerEmbedder",
    "Snapshot",
    "SnapshotItem",
    "Store",
    "StoreBusy",
    "StoreError",
    "Summarizer",
    "SummaryRecord",
    "TenantPolicy",
    "TimeLimitExceeded",
    "TimeLimits",
    "TokenCounter",
    "ToolCall",
    "ToolSource",
    "UserError",
    "WriteConflict",
    "get_counter",
    "open",
]
__version__ = "0.1.0"


# Hidden from type checkers, which read the imports above instead: a visible module __getattr__
# would make every misspelt `convmem.X` type as Any.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'convmem' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
