"""What every command shares: the store/embedding flags, filters, settings from flags."""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from rag.errors import PaperTalkError
from rag.records import STATUSES
from rag.retrieve.hybrid import SearchFilters
from rag.settings import Settings, load_settings


def common_parser() -> argparse.ArgumentParser:
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


def add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", choices=STATUSES)
    parser.add_argument("--author", help="author name substring")
    parser.add_argument("--title", help="title keyword")


def filters_from_args(args: argparse.Namespace) -> SearchFilters:
    return SearchFilters(status=args.status, author=args.author, title=args.title)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from defaults, PAPERTALK_* env vars and these flags, in that order."""
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
