"""Domain logic that runs inside the engine's transactions, given a transaction or a store, never a
handle: memories (consent, supersession, recall), search, indexing, summaries, retention, API
keys and the memory page's sign-in sessions."""
