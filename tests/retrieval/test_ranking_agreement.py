"""A word ranking that shares little of its head with the vector ranking's keeps only part of
its weight in that query's fusion (``convmem.retrieval.fusion.agreement_share``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from convmem.domain.search import Candidates, QueryPlan, SearchOptions, fuse_candidates
from convmem.errors import InvalidInput
from convmem.retrieval.fusion import agreement_share
from convmem.store.base import MessageHitRow

REFERENCE = [f"v{i}" for i in range(10)]


def test_a_ranking_sharing_enough_of_the_head_keeps_its_whole_weight() -> None:
    shares_half = [*REFERENCE[:5], *(f"w{i}" for i in range(5))]
    assert agreement_share(shares_half, REFERENCE, head=10, full_at=0.5, floor=0.25) == 1.0
    assert agreement_share(REFERENCE, REFERENCE, head=10, full_at=0.2, floor=0.25) == 1.0


def test_below_the_bar_the_weight_falls_in_proportion_down_to_the_floor() -> None:
    shares_one = ["v0", *(f"w{i}" for i in range(9))]  # 0.1 of the head: half of full_at 0.2
    assert agreement_share(shares_one, REFERENCE, head=10, full_at=0.2, floor=0.25) == 0.5
    nothing = [f"w{i}" for i in range(10)]
    assert agreement_share(nothing, REFERENCE, head=10, full_at=0.2, floor=0.25) == 0.25
    assert agreement_share(nothing, REFERENCE, head=10, full_at=0.2, floor=0.0) == 0.0
    # only the heads count: agreement past them does not restore the weight
    late = [*nothing, *REFERENCE]
    assert agreement_share(late, REFERENCE, head=10, full_at=0.2, floor=0.25) == 0.25


def test_without_a_reference_or_with_the_bar_at_zero_nothing_changes() -> None:
    nothing = [f"w{i}" for i in range(10)]
    assert agreement_share(nothing, [], head=10, full_at=0.2, floor=0.25) == 1.0
    assert agreement_share(nothing, REFERENCE, head=10, full_at=0.0, floor=0.25) == 1.0


def _rows(keys: list[str]) -> list[MessageHitRow]:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    return [MessageHitRow(key, "user", depth, 1.0, at) for depth, key in enumerate(keys)]


def _fused_head(options: SearchOptions) -> list[str]:
    # the word ranking's head is all turns the vector ranking does not hold
    rows = {"lexical": _rows([f"w{i}" for i in range(10)]), "vector": _rows(REFERENCE)}
    candidates = Candidates(QueryPlan((), ("offsite",), "offsite"), rows, with_embedder=True)
    return [f.key for f in fuse_candidates(candidates, options).ranked(5)]


def test_a_disagreeing_word_ranking_no_longer_takes_the_head_of_the_fusion() -> None:
    # vector weight below 1 so that at full weight the word ranking's head would win
    whole = SearchOptions(vector_weight=0.9, neighbour_lift=0.0, agreement_full_at=0.0)
    assert _fused_head(whole)[0] == "w0"
    lowered = SearchOptions(vector_weight=0.9, neighbour_lift=0.0, agreement_full_at=0.2)
    assert _fused_head(lowered)[:3] == ["v0", "v1", "v2"]


@pytest.mark.parametrize("knob", ["agreement_full_at", "agreement_floor"])
@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_the_agreement_knobs_are_shares(knob: str, value: float) -> None:
    with pytest.raises(InvalidInput):
        SearchOptions(**{knob: value})  # type: ignore[arg-type]


def test_the_agreement_head_is_a_positive_whole_number() -> None:
    with pytest.raises(InvalidInput):
        SearchOptions(agreement_head=0)
