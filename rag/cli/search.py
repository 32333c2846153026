"""`papertalk search QUERY`: the papers hybrid retrieval finds, with their best passages."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rag.cli.common import add_filters, filters_from_args, settings_from_args
from rag.errors import PaperTalkError
from rag.records import PaperHit
from rag.retrieve.hybrid import open_searcher
from rag.text.questions import clean_question


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    search = sub.add_parser("search", parents=[common], help="find papers for a query")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=None, help="number of papers (default 5)")
    add_filters(search)
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(handler=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    query = clean_question(args.query, what="query")
    if args.k is not None and not 1 <= args.k <= 100:
        raise PaperTalkError("-k must be between 1 and 100")
    filters = filters_from_args(args)
    searcher = open_searcher(settings)
    hits = searcher.search(query, args.k, filters)
    if args.json:
        print(json.dumps(search_json(query, hits), ensure_ascii=False))
        return 0
    if not hits:
        print("no matching papers")
    for rank, hit in enumerate(hits, start=1):
        authors = ", ".join(hit.authors[:4]) + (" et al." if len(hit.authors) > 4 else "")
        print(f"{rank}. {hit.title}")
        print(f"   {authors or 'unknown authors'} · {hit.status or 'n/a'} · score {hit.score:.4f}")
        if hit.passages:
            print(f"   “{_shorten(hit.passages[0].text, 300)}”")
        print(f"   {hit.url}")
    return 0


def search_json(query: str, hits: Sequence[PaperHit]) -> dict[str, Any]:
    return {
        "query": query,
        "results": [
            {
                "rank": rank,
                "paper_id": hit.paper_id,
                "title": hit.title,
                "authors": hit.authors,
                "url": hit.url,
                "status": hit.status,
                "score": round(hit.score, 6),
                "passages": [
                    {"text": p.text, "start": p.start, "end": p.end} for p in hit.passages
                ],
            }
            for rank, hit in enumerate(hits, start=1)
        ],
    }


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
