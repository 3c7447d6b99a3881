"""Retrieval: lexical query building (and, later, vectors and fusion)."""
