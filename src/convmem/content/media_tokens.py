"""What a provider charges for an image, by its published rule.

OpenAI (GPT-4o / GPT-4.1 vision guide): ``low`` detail costs a flat 85 tokens. ``high`` (and
``auto``, counted as ``high`` because the provider may choose it) first fits the image inside
2048 x 2048, then scales it so the short side is 768 px (only ever down), and charges 85 plus 170
for every 512-px tile the result covers.

Anthropic (vision guide): tokens = width x height / 750, after the image is scaled down
(aspect kept) so its long edge is at most 1568 px and it is at most about 1.15 megapixels. The
guide's table lists 784 x 1568 as the largest 1:2 image sent unresized, so the pixel cap here is
that image's area: a count never falls below what is charged.
"""

from __future__ import annotations

import math

from convmem.errors import InvalidMessage

OPENAI_LOW_DETAIL = 85
OPENAI_BASE = 85
OPENAI_PER_TILE = 170
OPENAI_TILE = 512
OPENAI_FIT = 2048
OPENAI_SHORT_SIDE = 768

ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 784 * 1568

# Which rule a tokenizer's provider charges by. tiktoken encodings are OpenAI's; the estimate
# counter stands for tokenizers convmem cannot run (Anthropic's), so it takes the larger count.
OPENAI = "openai"
ANTHROPIC = "anthropic"


def check_dimensions(width: object, height: object) -> tuple[int, int]:
    for what, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
            raise InvalidMessage(f"image {what} must be an integer from 1 to 100000 pixels")
    assert isinstance(width, int)
    assert isinstance(height, int)
    return width, height


def openai_image_tokens(width: int, height: int, detail: str = "auto") -> int:
    if detail == "low":
        return OPENAI_LOW_DETAIL
    w, h = float(width), float(height)
    if max(w, h) > OPENAI_FIT:
        scale = OPENAI_FIT / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > OPENAI_SHORT_SIDE:
        scale = OPENAI_SHORT_SIDE / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)
    return OPENAI_BASE + OPENAI_PER_TILE * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    w, h = float(width), float(height)
    scale = min(1.0, ANTHROPIC_MAX_LONG_EDGE / max(w, h), math.sqrt(ANTHROPIC_MAX_PIXELS / (w * h)))
    # Scaled sizes are whole pixels, rounded down, as a resize produces them.
    w, h = max(1, math.floor(w * scale)), max(1, math.floor(h * scale))
    return math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN)


def image_tokens(width: int, height: int, detail: str, provider: str) -> int:
    """What ``provider`` charges (see ``provider_of``); for an unknown provider, the larger rule."""
    if provider == OPENAI:
        return openai_image_tokens(width, height, detail)
    if provider == ANTHROPIC:
        return anthropic_image_tokens(width, height)
    return max(openai_image_tokens(width, height, detail), anthropic_image_tokens(width, height))


def provider_of(counter_name: str) -> str:
    """The provider whose image rule goes with a tokenizer: tiktoken encodings are OpenAI's; any
    other counter (the estimate) takes the larger of both rules."""
    if counter_name in ("o200k_base", "cl100k_base"):
        return OPENAI
    return "any"
