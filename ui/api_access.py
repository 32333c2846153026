"""Who may use the programs' side of `papertalk serve`: the OpenAI-compatible API and MCP.

The same rules as the page: a server bound to loopback answers only requests addressed to a
loopback name (a DNS-rebinding page cannot reach it); with a key (`PAPERTALK_API_KEY`), every
request needs `Authorization: Bearer <key>`; with `--auth` but no key, the API and MCP stay
closed (the page keeps its login). Refusals are OpenAI-style error objects, never tracebacks.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    code: str
    type: str = "invalid_request_error"

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.type, None, self.code)


def error_body(message: str, type_: str, param: str | None, code: str | None) -> dict[str, Any]:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


@dataclass(frozen=True)
class ApiAccess:
    """The access rule of one server."""

    key: str | None = None  # the bearer key every request must carry
    closed: bool = False  # login on the page but no key: the API and MCP refuse everyone
    loopback: bool = True  # bound to a loopback interface: only loopback Host headers

    @classmethod
    def for_server(cls, host: str, *, api_key: str | None, page_login: bool) -> ApiAccess:
        key = api_key or None
        return cls(key=key, closed=page_login and key is None, loopback=host in LOOPBACK_NAMES)

    @property
    def needs_key(self) -> bool:
        return self.key is not None or self.closed

    def check(self, headers: Mapping[str, str]) -> Refusal | None:
        """Why a request with these (lower-case) headers may not be served, or None."""
        if self.loopback and _hostname(headers.get("host", "")) not in LOOPBACK_NAMES:
            return Refusal(
                403, "this server only answers requests to a loopback address", "bad_host"
            )
        if self.closed:
            return Refusal(
                401,
                "the API is closed: the server has a login but no API key (PAPERTALK_API_KEY)",
                "invalid_api_key",
            )
        if self.key is None:
            return None
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), self.key.encode()
        ):
            return Refusal(
                401,
                "missing or incorrect API key: send 'Authorization: Bearer <PAPERTALK_API_KEY>'",
                "invalid_api_key",
            )
        return None


def _hostname(host: str) -> str:
    """'127.0.0.1:7860' -> '127.0.0.1', '[::1]:7860' -> '::1'."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guarded:
    """An ASGI app behind `access`: refused requests get a JSON error (401 with
    `WWW-Authenticate: Bearer`). A class, not a function, so that a Starlette `Route` treats
    it as an ASGI app."""

    def __init__(self, app: ASGIApp, access: ApiAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            refusal = self.access.check(headers)
            if refusal is not None:
                await _send_json(send, refusal.status, refusal.body())
                return
        await self.app(scope, receive, send)


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
