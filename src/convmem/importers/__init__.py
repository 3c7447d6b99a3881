"""Imports: a ChatGPT data export (``openai_chat``) and a Mem0 export (``mem0``), through the
bulk write path (``bulk``). ``convmem import …`` runs them."""
