"""How sure a proposal is (issue 36): a number from 0 to 1 stored on each proposal, shown on the
memory page and exported, and the order in which a full queue of proposals gives way
(``TenantPolicy.max_pending_proposals``).

It ranks evidence, it is not a calibrated probability: a statement repeated in more
conversations outranks one said once, and a statement giving a value for a named slot ("I
prefer window seats") outranks a loose one ("I like this"). An application that proposes
through the API may give its own (its model's score, say).
"""

from __future__ import annotations

from typing import Final

from convmem.errors import InvalidInput

# said once, as a plain statement: with a named slot it is a standing fact more clearly
_STATEMENT: Final = 0.4
_SLOT_STATEMENT: Final = 0.6
# a model's extraction, checked against the turns it cites
_MODEL: Final = 0.5
# the application's own proposal when it gives no number
APPLICATION_DEFAULT: Final = 0.5
# repeated statements approach but never reach certainty: only the user confirms
_CEILING: Final = 0.95


def statement_confidence(*, slot: bool) -> float:
    """A plain statement in one turn."""
    return _SLOT_STATEMENT if slot else _STATEMENT


def repeated_confidence(conversations: int) -> float:
    """A statement said in ``conversations`` conversations: 0.75 for two, 0.875 for three ..."""
    return min(_CEILING, 1.0 - 0.5 ** max(1, conversations))


def model_confidence(*, slot: bool) -> float:
    """A model's candidate (a slot named lifts it as it lifts a statement)."""
    return max(_MODEL, statement_confidence(slot=slot))


def check_confidence(value: object) -> float:
    """A caller's confidence: a number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput("a proposal's confidence is a number from 0 to 1")
    return float(value)
