"""How large the store is and how much of its contract each backend writes itself.

Usage::

    PYTHONPATH=src python benchmarks/store_surface.py [--json OUT.json]

Counts, with no database opened:

- lines of ``src/convmem/store`` (every ``.py`` file, blank lines and comments included, as
  ``wc -l`` counts them), split into the shared modules, ``sqlite/`` and ``postgres/``;
- the contract: the public methods (and properties) of the ``WriteTxn`` Protocol, which includes
  ``ReadTxn``, plus those of the ``Store`` Protocol;
- per backend, how many of those methods the backend writes itself: a method counts when the
  class that defines it, first in the backend's MRO, lives in the backend's own package
  (``convmem.store.sqlite`` / ``convmem.store.postgres``); one inherited from shared code (the SQL
  core, or a Protocol's default) does not. Private helpers are listed apart (``helpers``): the
  methods of the backend's own classes whose names start with ``_``.

The PostgreSQL backend is counted only when its extra (psycopg) is installed.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

STORE = Path(__file__).resolve().parent.parent / "src" / "convmem" / "store"


def _lines(folder: Path) -> dict[str, int]:
    counts = {"shared": 0, "sqlite": 0, "postgres": 0}
    for path in sorted(folder.rglob("*.py")):
        part = path.relative_to(folder).parts[0]
        key = part if part in ("sqlite", "postgres") else "shared"
        counts[key] += len(path.read_text(encoding="utf-8").splitlines())
    counts["total"] = sum(counts.values())
    return counts


def _public_members(protocol: type) -> set[str]:
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        names.update(n for n in vars(klass) if not n.startswith("_"))
    return names


def _written_by(cls: type, names: set[str], package: str) -> list[str]:
    """The names among ``names`` whose first definition in ``cls``'s MRO is in ``package``."""
    own = []
    for name in sorted(names):
        for klass in cls.__mro__:
            if name in vars(klass):
                if klass.__module__.startswith(package):
                    own.append(name)
                break
    return own


def _helpers(cls: type, package: str) -> int:
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith(package):
            continue
        seen.update(
            n
            for n, v in vars(klass).items()
            if n.startswith("_") and not n.startswith("__") and inspect.isfunction(v)
        )
    return len(seen)


def measure() -> dict[str, Any]:
    from convmem.store.base import Store, WriteTxn
    from convmem.store.sqlite.store import SQLiteStore, SQLiteTxn

    txn_contract = _public_members(WriteTxn)
    store_contract = _public_members(Store)
    backends: list[tuple[str, type, type, str]] = [
        ("sqlite", SQLiteTxn, SQLiteStore, "convmem.store.sqlite")
    ]
    try:
        from convmem.store.postgres.store import PostgresStore, PostgresTxn
    except ImportError:
        pass
    else:
        backends.append(("postgres", PostgresTxn, PostgresStore, "convmem.store.postgres"))
    result: dict[str, Any] = {
        "lines": _lines(STORE),
        "contract_methods": len(txn_contract) + len(store_contract),
        "backends": {},
    }
    for name, txn, store, package in backends:
        own_txn = _written_by(txn, txn_contract, package)
        own_store = _written_by(store, store_contract, package)
        result["backends"][name] = {
            "writes": len(own_txn) + len(own_store),
            "inherits": len(txn_contract) + len(store_contract) - len(own_txn) - len(own_store),
            "helpers": _helpers(txn, package),
            "methods": own_txn + own_store,
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = measure()
    lines = result["lines"]
    print(f"store/ lines: {lines['total']:,} (shared {lines['shared']:,}, sqlite/ "
          f"{lines['sqlite']:,}, postgres/ {lines['postgres']:,})")  # fmt: skip
    print(f"contract: {result['contract_methods']} methods (WriteTxn + Store)")
    print(f"{'backend':<10} {'writes':>7} {'inherits':>9} {'helpers':>8}")
    for name, figures in result["backends"].items():
        print(f"{name:<10} {figures['writes']:>7} {figures['inherits']:>9} {figures['helpers']:>8}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    json.dump({k: v for k, v in result.items() if k != "backends"}
              | {"backends": {k: {n: v for n, v in b.items() if n != "methods"}
                              for k, b in result["backends"].items()}},
              sys.stdout)  # fmt: skip
    print()


if __name__ == "__main__":
    main()
