"""`papertalk stats`: what the store holds."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rag.cli.common import settings_from_args
from rag.embed.base import resolve_model_dir
from rag.store.chroma import PaperStore, StoreLayout
from rag.store.lexical import open_lexical_index


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    stats = sub.add_parser("stats", parents=[common], help="what the store holds")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=cmd_stats)


def cmd_stats(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    store = PaperStore.open(settings, StoreLayout.for_settings(settings), create=False)
    index = open_lexical_index(settings.home, store)
    size = store.size_bytes()
    info = {
        "papers": len(index.table.papers),
        "chunks": store.count(),
        "store": store.location,
        "store_bytes": size,
        "collection": store.name,
        "embedding_model": str(resolve_model_dir(settings.embedding_model)),
        "embedding_backend": settings.embedding_backend,
        "chunk_tokens": settings.chunk_tokens,
    }
    if args.json:
        print(json.dumps(info))
        return 0
    for key, value in info.items():
        if key == "store_bytes":
            value = "n/a (server)" if size is None else f"{size / 1e6:.1f} MB"
        print(f"{key.replace('_', ' ')}: {value}")
    return 0
