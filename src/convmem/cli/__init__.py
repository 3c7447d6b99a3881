"""The ``convmem`` command line: ``main`` (the group and its small commands) and a module per group
of commands, all over ``common`` (opening the database, failing cleanly)."""
