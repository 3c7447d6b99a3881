"""The store contract suite, published: what a convmem storage backend must pass."""
