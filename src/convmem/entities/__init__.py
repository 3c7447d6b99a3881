"""Entity memory: the people, places and things a user's conversations mention and what was said
about each — derived from messages like summaries (``derive``), read by patterns (``extract``)
or, optionally, by the summarizer's model (``llm``), and found again by name (``lookup``,
``recall``)."""
