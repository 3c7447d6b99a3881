"""The never-store gate's seal: the token an ``Admitted`` value is made with.

Only ``convmem.memory.gate`` (which seals what it admits) and ``convmem.model.admitted`` (which
checks it) may import this module: the import-linter contract ``gate-seal`` (pyproject) fails
when any other module of convmem does, and ``tests/test_gate_bypass.py`` when any module names
the seal otherwise.
"""

from __future__ import annotations

from typing import Final


class _Seal:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<never-store gate seal>"


GATE_SEAL: Final = _Seal()
