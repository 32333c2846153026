"""`papertalk ingest PATH...`: add papers to the store (an upsert; re-ingest is idempotent)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rag.cli.common import settings_from_args
from rag.errors import PaperTalkError
from rag.ingest.pipeline import run_ingest
from rag.settings import Settings
from rag.store.chroma import PaperStore, StoreLayout, describe_location

MAX_VENUE_CHARS = 200


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    ingest = sub.add_parser("ingest", parents=[common], help="add papers to the store")
    ingest.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="JSONL, JSON, CSV or text paper lists (default: bundled corpus)",
    )
    ingest.add_argument(
        "--venue",
        default="",
        metavar="TEXT",
        help="venue of the papers whose records name none, e.g. 'ICML 2025' (BibTeX booktitle, "
        "'When was X published?')",
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


def cmd_ingest(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.if_empty and _store_has_papers(settings):
        print(f"store already has papers at {_location(settings)}: nothing to do")
        return 0
    if len(args.venue) > MAX_VENUE_CHARS:
        raise PaperTalkError(f"--venue is too long: at most {MAX_VENUE_CHARS} characters")
    for path in args.paths:
        if not path.exists():
            raise PaperTalkError(f"file not found: {path}")
    report = run_ingest(
        settings,
        args.paths,
        prune=args.prune,
        strict=args.strict,
        progress=False if args.no_progress else (True if sys.stderr.isatty() else "lines"),
        venue=args.venue,
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


def _store_has_papers(settings: Settings) -> bool:
    try:
        return (
            PaperStore.open(settings, StoreLayout.for_settings(settings), create=False).count() > 0
        )
    except PaperTalkError:
        return False


def _location(settings: Settings) -> str:
    return describe_location(settings)
