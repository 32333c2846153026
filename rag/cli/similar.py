"""`papertalk similar PAPER_ID_OR_TITLE`: the nearest papers by paper-level embedding."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rag.cli.common import settings_from_args
from rag.errors import PaperTalkError
from rag.explore.similar import find_paper, similar_papers
from rag.explore.topics import load_topics
from rag.explore.vectors import paper_vectors
from rag.retrieve.hybrid import open_searcher


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("similar", parents=[common], help="papers like a given paper")
    parser.add_argument("paper", metavar="PAPER_ID_OR_TITLE")
    parser.add_argument("-k", type=int, default=5, help="number of papers (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=cmd_similar)


def cmd_similar(args: argparse.Namespace) -> int:
    if not 1 <= args.k <= 100:
        raise PaperTalkError("-k must be between 1 and 100")
    settings = settings_from_args(args)
    searcher = open_searcher(settings)
    paper_id = find_paper(searcher, args.paper)
    found = similar_papers(searcher, paper_vectors(searcher), paper_id, args.k)
    topics = load_topics(settings.home, searcher)  # shown when kept; never built here

    def topic(pid: str) -> str:
        t = topics.topic_of(pid) if topics else None
        return t.label if t else ""

    papers = searcher.lexical.table.papers
    if args.json:
        print(
            json.dumps(
                {
                    "paper_id": paper_id,
                    "title": papers[paper_id]["title"],
                    "topic": topic(paper_id),
                    "similar": [
                        {
                            "paper_id": s.paper_id,
                            "title": s.title,
                            "url": s.url,
                            "similarity": round(s.similarity, 4),
                            "topic": topic(s.paper_id),
                            "same_topic": bool(topic(s.paper_id))
                            and topic(s.paper_id) == topic(paper_id),
                        }
                        for s in found
                    ],
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(
        f"Papers like “{papers[paper_id]['title']}”"
        + (f" [{topic(paper_id)}]" if topic(paper_id) else "")
    )
    for rank, s in enumerate(found, start=1):
        shared = " (same topic)" if topics and topic(s.paper_id) == topic(paper_id) else ""
        print(f"{rank}. {s.title} · {s.similarity:.3f}{shared}\n   {s.url}")
    return 0
