"""``Admitted``: a value the never-store gate let through (DESIGN.md principles 9 and 13).

Every store method that keeps user-derived text (memories, summaries, entity names and facts,
pinned instructions, tool documents) takes an ``Admitted[...]`` instead of the bare value, so a
write that did not pass ``convmem.memory.gate.admit`` is a type error (mypy), and fails at run
time too: the constructor refuses any caller without the gate's seal
(``convmem.model.gate_seal``), which only the gate imports (an import-linter contract).
``tests/test_gate_bypass.py`` fails when any other module of ``src/`` names the seal or makes an
``Admitted``, or when a store write method takes a text-bearing value that is not wrapped.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from convmem.model.gate_seal import GATE_SEAL

T_co = TypeVar("T_co", covariant=True)


class Admitted(Generic[T_co]):
    """``value``, checked by the never-store gate (its own text, and the turns it cites)."""

    __slots__ = ("_value",)

    def __init__(self, value: T_co, seal: object) -> None:
        if seal is not GATE_SEAL:
            raise TypeError("only convmem.memory.gate.admit makes an Admitted value")
        self._value = value

    @property
    def value(self) -> T_co:
        return self._value

    def __repr__(self) -> str:  # never the value: it may be refused content's neighbour
        return f"Admitted[{type(self._value).__name__}]"
