"""`papertalk mcp`: PaperTalk's tools (ui/mcp_server.py) over MCP on stdin/stdout, for MCP
clients that start a command. `papertalk serve --mcp` serves the same tools over HTTP.

Registered through the `papertalk.commands` entry point; the mcp SDK is imported only when the
command runs, so `papertalk --help` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from rag.answer.llm import check_backend, parse_llm_spec
from rag.cli.common import settings_from_args
from rag.service import PaperTalkService


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    mcp = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the PaperTalk tools to an MCP client over stdio",
        description="Serve search_papers, ask, compare, summarize, list_papers, get_paper and "
        "bibtex over MCP on stdin/stdout (for clients that start a command). `papertalk serve "
        "--mcp` serves them over HTTP instead.",
    )
    mcp.add_argument(
        "--llm", help="LLM backend: local, extractive, gguf:PATH or openai:MODEL (PAPERTALK_LLM)"
    )
    mcp.add_argument("--passages", type=int, help="papers retrieved per question (default 5)")
    mcp.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    args.settings_overrides = {"llm": args.llm, "passages": args.passages}
    settings = settings_from_args(args)
    check_backend(parse_llm_spec(settings.llm))
    service = PaperTalkService(settings)
    service.searcher()  # a missing store fails now, with one line, not at the first call
    from ui.mcp_server import build_mcp_server  # deferred: the mcp SDK takes ~1 s to import

    build_mcp_server(service).run("stdio")
    return 0
