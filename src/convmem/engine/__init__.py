"""The facade: ``Memory`` (a database), ``Scope`` (one tenant's user), ``Conversation`` (a handle).

Interfaces call only this. It applies the tree's rules and token counting around the store's
transactions; the algorithms it calls are pure. One module per handle — ``database``, ``scope``,
``conversation`` — with ``handles`` naming what each uses of its parent, ``request`` the steps of
``Conversation.assemble``, and ``pins`` the pinned instructions.
"""

from convmem.engine.conversation import Conversation
from convmem.engine.database import Memory, default_path, migrate_database, open
from convmem.engine.scope import Scope

__all__ = ["Conversation", "Memory", "Scope", "default_path", "migrate_database", "open"]
