"""The store contract suite: what every convmem backend must pass, written against the public
API and a ``Harness`` only. Run it with ``pytest --pyargs convmem.testing.contract``
(``--convmem-backend=module:Class`` picks the backend; see ``convmem.testing.plugin``)."""
