"""PaperTalk's tools over MCP (the official `mcp` SDK): `search_papers`, `ask`, `compare`,
`summarize`, `list_papers`, `get_paper`, `bibtex`.

Each tool is the `rag.service.PaperTalkService` method of that name: its typed parameters and
docstring are the tool's input schema and description, its TypedDict result the structured
output. Served two ways:
- over streamable HTTP at `/mcp` of `papertalk serve --mcp` (ui/integrations.py mounts it);
- over stdio by `papertalk mcp` (ui/cli_mcp.py; for MCP clients that start a command).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from rag.errors import PaperTalkError
from rag.service import PaperTalkService

TOOLS = ("search_papers", "ask", "compare", "summarize", "list_papers", "get_paper", "bibtex")
TITLES = {
    "search_papers": "Search ICML 2025 papers",
    "ask": "Answer with citations",
    "compare": "Compare papers",
    "summarize": "Summarize a topic",
    "list_papers": "List the papers on a topic",
    "get_paper": "Get a paper",
    "bibtex": "BibTeX for papers",
}
INSTRUCTIONS = (
    "PaperTalk answers questions about ICML 2025 papers from their abstracts only. Answers carry "
    "[n] markers resolved by `citations` (paper id, title, authors, URL, supporting passage). "
    "When the papers do not answer, the answer is exactly 'The retrieved papers do not answer "
    "this question.' with `refused` true: report that instead of guessing (`partial`, when not "
    "empty, answers the parts of the question the papers do state). Use search_papers "
    "to find paper ids, get_paper for an abstract, bibtex to cite."
)


def build_mcp_server(service: PaperTalkService) -> MCPServer:
    """An MCP server whose tools are `service`'s methods."""
    server: MCPServer = MCPServer(
        "papertalk", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
    for name in TOOLS:
        server.add_tool(
            _tool(getattr(service, name)), name=name, title=TITLES[name], annotations=read_only
        )
    return server


def _tool(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` as a tool: a user-facing PaperTalkError, or an answer whose LLM backend failed,
    is a tool error with its message (the SDK hides the text of anything else)."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            result = method(*args, **kwargs)
        except PaperTalkError as exc:
            raise ToolError(str(exc)) from None
        if isinstance(result, dict) and result.get("error"):
            related = "; ".join(f"{p['title']} ({p['url']})" for p in result.get("related", []))
            raise ToolError(
                f"{result['error']}" + (f". Retrieved papers: {related}" if related else "")
            )
        return result

    return call
