"""Image counts against the providers' own worked examples.

OpenAI, vision guide, "Calculating costs" (GPT-4o, GPT-4.1, o-series):
  1024 x 1024, detail high -> 765; 2048 x 4096, detail high -> 1105; 4096 x 8192, detail low -> 85.
Anthropic, vision guide, "Calculate image costs": 200 x 200 -> ~54; 1000 x 1000 -> ~1334;
1092 x 1092 -> ~1590; and the largest sizes per aspect ratio sent without resizing.
"""

from __future__ import annotations

import math

import pytest

from convmem.content.media_tokens import (
    anthropic_image_tokens,
    check_dimensions,
    image_tokens,
    openai_image_tokens,
    provider_of,
)
from convmem.errors import InvalidMessage


@pytest.mark.parametrize(
    ("width", "height", "detail", "tokens"),
    [
        (1024, 1024, "high", 765),  # 768 x 768 after scaling the short side: 4 tiles
        (2048, 4096, "high", 1105),  # 1024 x 2048 in the 2048 square, then 768 x 1536: 6 tiles
        (4096, 8192, "low", 85),  # low detail is flat, whatever the size
    ],
)
def test_openai_published_examples(width: int, height: int, detail: str, tokens: int) -> None:
    assert openai_image_tokens(width, height, detail) == tokens


def test_openai_small_images_are_not_scaled_up() -> None:
    # 512 x 512 is one tile: 85 + 170. Scaling its short side up to 768 would make it four.
    assert openai_image_tokens(512, 512, "high") == 255
    # auto is counted as high: the provider may choose high, and a budget must hold then too.
    assert openai_image_tokens(1024, 1024, "auto") == 765


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [(200, 200, 54), (1000, 1000, 1334), (1092, 1092, 1590)],
)
def test_anthropic_published_examples(width: int, height: int, tokens: int) -> None:
    assert anthropic_image_tokens(width, height) == tokens


@pytest.mark.parametrize(
    ("width", "height"), [(1092, 1092), (951, 1268), (896, 1344), (819, 1456), (784, 1568)]
)
def test_anthropic_largest_unresized_sizes_are_counted_whole(width: int, height: int) -> None:
    assert anthropic_image_tokens(width, height) == math.ceil(width * height / 750)


def test_anthropic_resizes_long_edge_and_area_first() -> None:
    # 3136 x 1568 halves to 1568 x 784: the long-edge limit alone.
    assert anthropic_image_tokens(3136, 1568) == math.ceil(1568 * 784 / 750)
    # A 4000 x 4000 photo is charged like the largest square, never by its raw area (21334).
    big = anthropic_image_tokens(4000, 4000)
    assert big <= math.ceil(784 * 1568 / 750)
    assert big >= 1590


def test_estimate_counter_takes_the_larger_rule() -> None:
    assert provider_of("o200k_base") == "openai"
    assert provider_of("estimate") == "any"
    # Tall thin image: Anthropic charges more than OpenAI's low detail.
    assert image_tokens(1000, 1000, "low", "any") == 1334
    assert image_tokens(1000, 1000, "high", "any") == max(
        openai_image_tokens(1000, 1000, "high"), 1334
    )


@pytest.mark.parametrize(
    ("width", "height"), [(0, 10), (10, -1), (True, 10), (1.5, 10), (10**6, 1)]
)
def test_dimensions_are_checked(width: object, height: object) -> None:
    with pytest.raises(InvalidMessage):
        check_dimensions(width, height)
