"""Adapters for agent frameworks, each a thin interface over the public engine and each behind
its own extra: ``langchain`` (chat message history, budgeted trimming), ``langgraph`` (a
``BaseStore`` on long-term memory), ``agents`` (an OpenAI Agents SDK ``Session``).

``chat`` holds what they share: Chat Completions messages to and from convmem messages.
"""
