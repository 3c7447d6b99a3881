"""Rolling summaries and state snapshots of the turns that left the window.

``Summarizer`` is the extension point; ``ExtractiveSummarizer`` is the deterministic default and
``LLMSummarizer`` calls any OpenAI-compatible endpoint. ``convmem.summarize.rolling`` holds the
pure rules of the rolling chain (keys, hashes, segments).
"""

from convmem.model.snapshot import (
    CATEGORIES,
    Snapshot,
    SnapshotItem,
    SnapshotSchemaError,
    ToolSource,
)
from convmem.model.summary import SummaryCost, SummaryRecord
from convmem.summarize.base import Summarizer, SummaryResult
from convmem.summarize.extractive import ExtractiveSummarizer
from convmem.summarize.llm import LLMSummarizer, LLMSummarizerConfig
from convmem.summarize.render import render_snapshot

__all__ = [
    "CATEGORIES",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "LLMSummarizerConfig",
    "Snapshot",
    "SnapshotItem",
    "SnapshotSchemaError",
    "Summarizer",
    "SummaryCost",
    "SummaryRecord",
    "SummaryResult",
    "ToolSource",
    "render_snapshot",
]
