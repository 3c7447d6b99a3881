"""The facade: ``Memory`` (a database), ``Scope`` (one tenant's user), ``Conversation`` (a handle).

Interfaces call only this. It applies the tree's rules and token counting around the store's
transactions; the algorithms it calls are pure. One module per handle: ``database``, ``scope``,
``conversation``.
"""

from convmem.engine.conversation import Conversation
from convmem.engine.database import Memory, default_path, open
from convmem.engine.scope import Scope

__all__ = ["Conversation", "Memory", "Scope", "default_path", "open"]
