"""The programs' side of `papertalk serve`, on the page's own server (one port, one process):
the OpenAI-compatible API at `/v1` and, with `--mcp`, the MCP tools at `/mcp`.

`server_app_kwargs` gives what `ui.app.launch` passes on to Gradio's FastAPI app: a lifespan
that adds the routes when the server starts and runs the MCP session manager while it serves.
Both sit behind `ui.api_access.ApiAccess` (loopback Host check, bearer key).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from rag.retrieve.hybrid import HybridSearcher
from rag.service import PaperTalkService
from rag.settings import Settings
from ui.api_access import ApiAccess, Guarded
from ui.openai_api import MODELS, openai_router

MCP_PATH = "/mcp"


def server_app_kwargs(
    service: PaperTalkService, access: ApiAccess, *, mcp: bool, host: str
) -> dict[str, Any]:
    """`app_kwargs` for Gradio's launch: the API (and MCP) routes, added at startup."""
    return {"lifespan": api_lifespan(service, access, mcp=mcp, host=host)}


def api_lifespan(
    service: PaperTalkService, access: ApiAccess, *, mcp: bool, host: str
) -> Callable[[FastAPI], Any]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.include_router(openai_router(service, access))
        if not mcp:
            yield
            return
        from ui.mcp_server import build_mcp_server  # the mcp SDK only when MCP is served

        server = build_mcp_server(service)
        # DNS-rebinding protection comes from the SDK for loopback hosts; the key from access.
        mcp_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        app.router.routes.append(Route(MCP_PATH, endpoint=Guarded(mcp_app, access)))
        async with server.session_manager.run():
            yield

    return lifespan


def serve_programs(
    settings: Settings,
    searcher: Callable[[], HybridSearcher],
    *,
    host: str,
    url: str,
    page_login: bool,
    mcp: bool,
) -> tuple[dict[str, Any], list[str]]:
    """What `papertalk serve` adds for programs: Gradio's `app_kwargs` and the lines that tell
    where the API and MCP are and how to get in. `searcher` is the page's, so papers added
    through the page are seen by programs too."""
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    access = ApiAccess.for_server(host, api_key=key, page_login=page_login)
    service = PaperTalkService(settings, searcher=searcher)
    lines = [f"OpenAI-compatible API: {url}/v1 (models {', '.join(MODELS)})"]
    if mcp:
        lines.append(f"MCP (streamable HTTP): {url}{MCP_PATH}")
    if access.closed:
        lines.append("the API and MCP are closed: --auth is set but PAPERTALK_API_KEY is not")
    elif access.key is not None:
        lines.append("the API and MCP need 'Authorization: Bearer <PAPERTALK_API_KEY>'")
    return server_app_kwargs(service, access, mcp=mcp, host=host), lines
