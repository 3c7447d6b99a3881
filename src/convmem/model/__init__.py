"""Values: plain frozen dataclasses, no I/O."""

from convmem.model.conversation import ConversationRecord
from convmem.model.messages import (
    ROLES,
    Message,
    MessageNotice,
    NewMessage,
    Role,
    ToolCall,
)
from convmem.model.profile import ModelProfile

__all__ = [
    "ROLES",
    "ConversationRecord",
    "Message",
    "MessageNotice",
    "ModelProfile",
    "NewMessage",
    "Role",
    "ToolCall",
]
