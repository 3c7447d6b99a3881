"""The SQL core: the statements both SQL backends run alike, written once as mixins of a
backend's transaction and parametrised by its ``Dialect`` (``convmem.store.dialect``). A backend
is its dialect, its connection and transactions, and the methods that truly differ (full text,
vectors, locks taken before a read)."""
