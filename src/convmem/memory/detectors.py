"""The never-store content detectors, gathered for ``policy.py`` (see ``detect_common`` for the
conventions they share)."""

from convmem.memory.detect_common import (
    Category,
    Finding,
    Prepared,
    aba_routing_valid,
    iban_valid,
    luhn_valid,
    prepare,
)
from convmem.memory.detect_ids import detect_government_id
from convmem.memory.detect_secrets import (
    detect_bank_account,
    detect_credential,
    detect_payment_card,
)
from convmem.memory.detect_sensitive import (
    detect_health,
    detect_inferred_trait,
    detect_sensitive_category,
)

__all__ = [
    "Category",
    "Finding",
    "Prepared",
    "aba_routing_valid",
    "detect_bank_account",
    "detect_credential",
    "detect_government_id",
    "detect_health",
    "detect_inferred_trait",
    "detect_payment_card",
    "detect_sensitive_category",
    "iban_valid",
    "luhn_valid",
    "prepare",
]
