"""Values: plain frozen dataclasses, no I/O."""

from convmem.model.conversation import ConversationRecord
from convmem.model.memory import (
    CATEGORIES,
    STATUSES,
    AuditEvent,
    MemoryHit,
    MemoryNotice,
    MemoryRecord,
)
from convmem.model.messages import (
    ROLES,
    Message,
    NewMessage,
    Role,
    ToolCall,
)
from convmem.model.principal import Principal
from convmem.model.profile import ModelProfile
from convmem.model.search import MessageHit

__all__ = [
    "CATEGORIES",
    "STATUSES",
    "AuditEvent",
    "MemoryHit",
    "MemoryNotice",
    "MemoryRecord",
    "ROLES",
    "ConversationRecord",
    "Message",
    "MessageHit",
    "ModelProfile",
    "NewMessage",
    "Principal",
    "Role",
    "ToolCall",
]
