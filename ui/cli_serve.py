"""`papertalk serve`: the web UI on http://127.0.0.1:7860 (local only unless told otherwise).

Registered through the `papertalk.commands` entry point (rag never imports ui). gradio is
imported only when the command runs, on purpose: `import gradio` takes ~7 s and `papertalk
--help` must stay fast.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

from rag.answer.llm import check_backend, parse_llm_spec
from rag.cli.common import settings_from_args
from rag.errors import PaperTalkError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    serve = sub.add_parser(
        "serve",
        parents=[common],
        help="serve the web UI (chat with cited papers)",
        description="Serve the PaperTalk web UI. Binds to 127.0.0.1 unless --host says "
        "otherwise; never creates a public share link.",
    )
    serve.add_argument("--host", help=f"interface to bind (default {DEFAULT_HOST})")
    serve.add_argument("--port", type=int, help=f"port (default {DEFAULT_PORT})")
    serve.add_argument(
        "--llm", help="LLM backend: local, extractive, gguf:PATH or openai:MODEL (PAPERTALK_LLM)"
    )
    serve.add_argument("--passages", type=int, help="papers retrieved per question (default 5)")
    serve.add_argument(
        "--auth", metavar="USER:PASS", help="require this login (also PAPERTALK_AUTH)"
    )
    serve.add_argument(
        "--max-upload-mb",
        type=int,
        help="largest paper list the page accepts, in MB (default 50)",
    )
    serve.add_argument(
        "--mcp",
        action="store_true",
        default=None,
        help="also serve the PaperTalk tools over MCP at /mcp (also PAPERTALK_MCP)",
    )
    serve.set_defaults(handler=cmd_serve)


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """'user:pass' -> ('user', 'pass'); None or '' -> None."""
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user.strip() or not password:
        raise PaperTalkError("--auth must be USER:PASS (both non-empty)")
    return user.strip(), password


def check_port_free(host: str, port: int) -> None:
    """Fail fast (before loading anything) when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As the server will: a port held only by closing connections (TIME_WAIT) is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise PaperTalkError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}): pass another --port"
            ) from None


def _setting(settings: Any, name: str) -> Any:
    """A UI setting if `rag.settings` defines it (PAPERTALK_* env), else None."""
    value = getattr(settings, name, None)
    if value is not None and hasattr(value, "get_secret_value"):
        value = value.get_secret_value()
    return value


def cmd_serve(args: argparse.Namespace) -> int:
    args.settings_overrides = {"llm": args.llm, "passages": args.passages}
    settings = settings_from_args(args)
    host = args.host or _setting(settings, "server_host") or DEFAULT_HOST
    port = args.port or _setting(settings, "server_port") or DEFAULT_PORT
    max_upload_mb = args.max_upload_mb or _setting(settings, "max_upload_mb") or 50
    if not 1 <= port <= 65535:
        raise PaperTalkError(f"--port must be between 1 and 65535 (got {port})")
    if not 1 <= max_upload_mb <= 10_000:
        raise PaperTalkError("--max-upload-mb must be between 1 and 10000")
    auth = parse_auth(args.auth or _setting(settings, "auth"))
    if host not in LOCAL_HOSTS and auth is None:
        print(
            f"warning: serving on {host} without --auth: anyone who can reach this machine can "
            "use PaperTalk and add papers to its store",
            file=sys.stderr,
        )
    check_port_free(host, port)

    check_backend(parse_llm_spec(settings.llm))  # a missing GGUF fails now, not at the 1st ask
    from ui.app import build_app, launch  # deferred: `import gradio` takes ~7 s

    demo = build_app(settings, max_upload_mb=max_upload_mb)
    engine = demo.papertalk_engine  # type: ignore[attr-defined]
    try:  # open the store now, so the first answer is quick and a bad store shows at once
        count: int | None = len(engine.searcher().lexical.table.papers)
    except PaperTalkError as exc:
        count = None
        print(
            f"warning: {exc}\n(add papers in the page or run `papertalk ingest`)",
            file=sys.stderr,
        )
    shown = f"[{host}]" if ":" in host else host
    from ui.integrations import serve_programs  # the /v1 API and /mcp on the same server

    app_kwargs, notes = serve_programs(
        settings,
        engine.searcher,
        host=host,
        url=f"http://{shown}:{port}",
        page_login=auth is not None,
        mcp=bool(args.mcp or settings.mcp),
    )
    print(
        f"PaperTalk: http://{shown}:{port} ({count or 0} papers, LLM {settings.llm}); "
        "Ctrl+C to stop",
        *notes,
        sep="\n",
        flush=True,
    )
    launch(
        demo,
        host=host,
        port=port,
        auth=auth,
        max_upload_mb=max_upload_mb,
        quiet=True,
        app_kwargs=app_kwargs,
    )
    return 0
