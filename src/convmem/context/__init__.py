"""Context assembly, the hot path (pure functions): the window's units, the sections' shares of the
budget, the provider formats and the prompt-cache estimate."""
