"""The `papertalk` command line: ingest, search, stats (and the commands built on them).

Every command takes the common store/embedding flags; bad input ends with one line on stderr and
a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag.errors import PaperTalkError

EXAMPLE_QUERY = "compute or load KV cache"


def _common_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("store and embeddings (also PAPERTALK_* env vars)")
    group.add_argument("--home", type=Path, help="PaperTalk data directory (PAPERTALK_HOME)")
    group.add_argument("--chroma-url", help="Chroma server URL, e.g. http://127.0.0.1:8000")
    group.add_argument("--embedding-model", help="'bundled' or a local model directory")
    group.add_argument(
        "--embedding-backend", choices=["onnx", "sentence-transformers"], help="default: onnx"
    )
    group.add_argument("--device", choices=["cpu", "cuda"], help="embedding device")
    group.add_argument("--chunk-tokens", type=int, help="chunk size in model tokens")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common_parser()
    parser = argparse.ArgumentParser(
        prog="papertalk",
        description="Citation-grounded question answering over scientific papers.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = sub.add_parser("ingest", parents=[common], help="add papers to the store")
    ingest.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="JSONL, JSON, CSV or text paper lists (default: bundled corpus)",
    )
    ingest.add_argument("--prune", action="store_true", help="remove papers not in the inputs")
    ingest.add_argument("--strict", action="store_true", help="fail on the first bad record")
    ingest.add_argument(
        "--if-empty", action="store_true", help="do nothing when the store already has papers"
    )
    ingest.add_argument(
        "--no-progress", action="store_true", help="no progress bar (or lines, when not a terminal)"
    )
    ingest.set_defaults(handler=cmd_ingest)

    search = sub.add_parser("search", parents=[common], help="find papers for a query")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=None, help="number of papers (default 5)")
    _add_filters(search)
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(handler=cmd_search)

    stats = sub.add_parser("stats", parents=[common], help="what the store holds")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=cmd_stats)

    _register_extra_commands(sub, common)
    return parser


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", choices=["oral", "spotlight", "poster"])
    parser.add_argument("--author", help="author name substring")
    parser.add_argument("--title", help="title keyword")


def _register_extra_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Commands of later stages (answering, UI, evaluation) register themselves here."""
    import importlib

    for module_name in ("rag.cli_answer", "ui.cli_serve", "rag.cli_eval"):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(sub, common)


def settings_from_args(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from pydantic import ValidationError

    from rag.settings import load_settings

    overrides = {
        "home": args.home,
        "chroma_url": args.chroma_url,
        "embedding_model": args.embedding_model,
        "embedding_backend": args.embedding_backend,
        "device": args.device,
        "chunk_tokens": args.chunk_tokens,
    }
    overrides.update(getattr(args, "settings_overrides", {}) or {})
    try:
        return load_settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "settings"
        raise PaperTalkError(f"invalid setting {field}: {first['msg']}") from None


# Commands -------------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from rag.ingest import run_ingest

    settings = settings_from_args(args)
    if args.if_empty and _store_has_papers(settings):
        print(f"store already has papers at {_location(settings)}: nothing to do")
        return 0
    for path in args.paths:
        if not path.exists():
            raise PaperTalkError(f"file not found: {path}")
    report = run_ingest(
        settings,
        args.paths,
        prune=args.prune,
        strict=args.strict,
        progress=False if args.no_progress else (True if sys.stderr.isatty() else "lines"),
    )
    for warning in report.warnings[:5]:
        print(f"warning: {warning}", file=sys.stderr)
    if len(report.warnings) > 5:
        print(f"warning: ... and {len(report.warnings) - 5} more warnings", file=sys.stderr)
    for problem in report.skipped[:5]:
        print(f"skipped {problem}", file=sys.stderr)
    if len(report.skipped) > 5:
        print(f"skipped ... and {len(report.skipped) - 5} more", file=sys.stderr)
    print(report.summary_line())
    return 0


def _store_has_papers(settings: Any) -> bool:
    from rag.ingest import store_layout
    from rag.store import PaperStore

    try:
        return PaperStore.open(settings, store_layout(settings), create=False).count() > 0
    except PaperTalkError:
        return False


def _location(settings: Any) -> str:
    from rag.store import describe_location

    return describe_location(settings)


def cmd_search(args: argparse.Namespace) -> int:
    from rag.questions import clean_question
    from rag.retrieval import SearchFilters, open_searcher

    settings = settings_from_args(args)
    query = clean_question(args.query, what="query")
    if args.k is not None and not 1 <= args.k <= 100:
        raise PaperTalkError("-k must be between 1 and 100")
    filters = SearchFilters(status=args.status, author=args.author, title=args.title)
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


def search_json(query: str, hits: Sequence[Any]) -> dict[str, Any]:
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


def cmd_stats(args: argparse.Namespace) -> int:
    from rag.embeddings import resolve_model_dir
    from rag.ingest import store_layout
    from rag.lexical import open_lexical_index
    from rag.store import PaperStore

    settings = settings_from_args(args)
    store = PaperStore.open(settings, store_layout(settings), create=False)
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
            value = "n/a (server)" if value is None else f"{value / 1e6:.1f} MB"
        print(f"{key.replace('_', ' ')}: {value}")
    return 0


# Entry point ----------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    started = time.perf_counter()
    try:
        return handler(args)
    except PaperTalkError as exc:
        print(f"papertalk: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("papertalk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: one line, never a traceback
        if "--debug" in sys.argv:
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(
            f"papertalk: internal error: {type(exc).__name__}: {first} "
            f"(after {time.perf_counter() - started:.1f} s; rerun with --debug for details)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
