"""`papertalk topics`: the collection's topics (label, size, oral/spotlight/poster counts, top
papers), built from the stored embeddings the first time and kept until the papers change."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rag.cli.common import settings_from_args
from rag.explore.topics import NOISE, topic_map
from rag.retrieve.hybrid import open_searcher


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("topics", parents=[common], help="the topics of all stored papers")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rebuild", action="store_true", help="recompute even if kept")
    parser.add_argument("--top", type=int, default=3, help="top papers shown per topic")
    parser.set_defaults(handler=cmd_topics)


def cmd_topics(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    searcher = open_searcher(settings)
    topics = topic_map(settings.home, searcher, rebuild=args.rebuild)
    papers = searcher.lexical.table.papers
    if args.json:
        print(json.dumps(topics.to_json(), ensure_ascii=False))
        return 0
    unassigned = sum(1 for t in topics.assignment.values() if t == NOISE)
    print(
        f"{len(topics.topics)} topics over {len(topics.assignment)} papers "
        f"({topics.assigned_share:.0%} assigned, {unassigned} in no topic; "
        f"built in {topics.seconds:.0f} s)"
    )
    for topic in topics.topics:
        counts = ", ".join(f"{n} {s}" for s, n in topic.statuses.items() if n)
        print(f"\n[{topic.id}] {topic.label} — {topic.size} papers ({counts})")
        for paper_id in topic.top_papers[: max(0, args.top)]:
            print(f"    - {papers[paper_id]['title']}")
    return 0
