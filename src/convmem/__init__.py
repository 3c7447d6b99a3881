"""convmem: the memory layer for LLM chat applications.

Open a database, act as a principal, keep conversations as message trees, and assemble the next
model request within a token budget::

    import convmem
    mem = convmem.open("convmem.db")
    conv = mem.scope(tenant="acme", user="alice").create_conversation(title="Trip")
    conv.append("user", "I prefer aisle seats.")
    ctx = conv.assemble("What seat do I like?", model=convmem.ModelProfile(context_window=8192))
"""

from convmem.assemble import AssembledContext, AssemblyOptions, AssemblyReport
from convmem.config import Config
from convmem.engine import Conversation, Memory, Scope, open
from convmem.entities.llm import LLMEntityExtractor
from convmem.entities.recall import EntityRecallOptions
from convmem.errors import (
    BackendUnavailable,
    BudgetExceeded,
    ContentTooLarge,
    ConvmemError,
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
from convmem.memories import Memories
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
from convmem.model.entities import Entity, EntityFact
from convmem.model.policy import RETENTION_LAYERS, RetentionPeriods, TenantPolicy
from convmem.model.purpose import PURPOSES
from convmem.model.snapshot import Snapshot, SnapshotItem, ToolSource
from convmem.model.summary import Job, SummaryRecord
from convmem.retrieval.vector import (
    Embedder,
    HashingEmbedder,
    QueryEmbedder,
    SentenceTransformerEmbedder,
)
from convmem.search import SearchOptions
from convmem.store.base import PinnedInstruction, Store
from convmem.summarize import ExtractiveSummarizer, LLMSummarizer, LLMSummarizerConfig, Summarizer
from convmem.tokens import TokenCounter, get_counter

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
    "Embedder",
    "Entity",
    "EntityFact",
    "EntityRecallOptions",
    "ExtractiveSummarizer",
    "HashingEmbedder",
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
