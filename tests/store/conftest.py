"""The contract suite's fixtures (``convmem.testing.fixtures``) for the tests of this folder that
are convmem's own (they read a backend's tables or internals): every test here runs once per
backend of pyproject's ``convmem_backends``, like the published suite in
``convmem.testing.contract``. ``memory`` — and through it the shared ``alice`` and ``bob`` — is
opened on the test's ``backend``.
"""

from convmem.testing.fixtures import backend, harness, memory, pytest_generate_tests

__all__ = ["backend", "harness", "memory", "pytest_generate_tests"]
