"""Answering modes: one function each, with one signature (`rag.answer.modes.base.Mode`)."""

from __future__ import annotations

from rag.answer.modes import ask, compare, listing, ranked, similar, summarize, topics
from rag.answer.modes.base import Mode

MODES: dict[str, Mode] = {
    "ask": ask.run,
    "list": listing.run,
    "authors": listing.run_author,
    "compare": compare.run,
    "summarize": summarize.run,
    "topics": topics.run,
    "ranked": ranked.run,
    "similar": similar.run,
}
