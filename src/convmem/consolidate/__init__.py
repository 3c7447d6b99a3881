"""Consolidation: what the worker does, with the user's consent rule intact, to keep long-term
memory small and current — repeated statements gathered into one proposal with its evidence,
stale proposals expired, a cap on proposals, candidates from a model checked against the turns
they cite. Nothing here confirms a memory: only the user does (``Memories.confirm``)."""
