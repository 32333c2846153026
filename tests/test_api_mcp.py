"""PaperTalk inside other tools: `papertalk serve --mcp` as users run it (a subprocess on a free
127.0.0.1 port, extractive backend, bundled corpus), driven by the official clients: `openai`
for `/v1/chat/completions` and `/v1/models`, `mcp` for the tools at `/mcp`; `papertalk mcp`
over stdio; the request parsing and access rules without a server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from rag.answer.refusal import CANNOT_ANSWER
from rag.text.questions import MAX_QUESTION_CHARS
from ui.api_access import ApiAccess
from ui.openai_api import (
    REFERENCES,
    ApiError,
    answer_text,
    parse_chat_request,
    references_part,
    reply_markdown,
)

from .conftest import CAKE_ID, REPO, serve_ui

pytestmark = pytest.mark.server
KEY = "pt-test-key-0123456789"
AUTH = ("reader", "s3cret-pass")
DFUSION, DREAMDPO = "WVlEwFiDGH", "WIIfdh0GJu"
TOOLS = {"search_papers", "ask", "compare", "summarize", "list_papers", "get_paper", "bibtex"}


@pytest.fixture(scope="module")
def server(bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """No login: the API and MCP are open to loopback clients."""
    logs = tmp_path_factory.mktemp("api")
    yield from serve_ui(bundled_home, onnx_cache, logs, args=["--mcp"])


@pytest.fixture(scope="module")
def locked(bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The page behind a login; the API and MCP behind PAPERTALK_API_KEY."""
    logs = tmp_path_factory.mktemp("api-auth")
    env = {"PAPERTALK_API_KEY": KEY, "PAPERTALK_MCP": "true"}
    yield from serve_ui(bundled_home, onnx_cache, logs, auth=AUTH, extra_env=env)


def openai_client(url: str, key: str = "unused") -> Any:
    from openai import OpenAI

    return OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=120)


def ask(url: str, messages: list[dict[str, str]], model: str = "papertalk") -> Any:
    return openai_client(url).chat.completions.create(model=model, messages=messages)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


# The OpenAI-compatible endpoint -----------------------------------------------------------------
def test_models_are_listed(server: str) -> None:
    models = openai_client(server).models.list()
    assert [m.id for m in models.data] == ["papertalk", "papertalk-compare", "papertalk-summarize"]
    assert openai_client(server).models.retrieve("papertalk-compare").id == "papertalk-compare"


def test_a_non_streamed_answer_carries_citations(server: str) -> None:
    reply = ask(server, [user("How much does Cake reduce time to first token?")])
    message = reply.choices[0].message
    assert reply.object == "chat.completion" and reply.choices[0].finish_reason == "stop"
    assert "2.6" in message.content and "[1]" in message.content
    assert REFERENCES in message.content and f"forum?id={CAKE_ID})" in message.content
    citations = message.citations  # type: ignore[attr-defined]
    assert citations[0]["paper_id"] == CAKE_ID and citations[0]["n"] == 1
    assert citations[0]["passage"] and citations[0]["title"] and citations[0]["authors"]
    assert message.refused is False  # type: ignore[attr-defined]


def test_a_streamed_answer_matches_the_non_streamed_one(server: str) -> None:
    question = [user("How much does Cake reduce time to first token?")]
    stream = openai_client(server).chat.completions.create(
        model="papertalk", messages=question, stream=True
    )
    content, draft, kinds, last = "", "", [], None
    for chunk in stream:
        delta = chunk.choices[0].delta
        extra = delta.model_extra or {}
        if extra.get("reasoning_content"):
            draft += extra["reasoning_content"]
            kinds.append("draft")
        if delta.content:
            content += delta.content
            kinds.append("content")
        if chunk.choices[0].finish_reason is not None:
            last = chunk
    assert kinds[0] == "draft" and "content" in kinds and "2.6" in draft
    assert last is not None and last.choices[0].finish_reason == "stop"
    citations = last.choices[0].delta.model_extra["citations"]
    assert citations[0]["paper_id"] == CAKE_ID
    assert content == ask(server, question).choices[0].message.content


def test_follow_ups_are_resolved_from_messages(server: str) -> None:
    first = ask(server, [user("What is Cake?")]).choices[0].message.content
    follow_up = "How much does it reduce time to first token?"
    conversation = [user("What is Cake?"), {"role": "assistant", "content": first}]
    reply = ask(server, [*conversation, user(follow_up)]).choices[0].message
    assert reply.citations[0]["paper_id"] == CAKE_ID and "2.6" in reply.content  # type: ignore[attr-defined]
    # The same follow-up without the conversation names nothing to answer about.
    alone = ask(server, [user("How does it work?")]).choices[0].message
    assert alone.content.startswith(CANNOT_ANSWER) and alone.refused  # type: ignore[attr-defined]


def test_compare_and_summarize_models(server: str) -> None:
    table = ask(server, [user("D-Fusion and DreamDPO")], model="papertalk-compare")
    message = table.choices[0].message
    assert message.content.startswith("| paper |")
    assert {c["paper_id"] for c in message.citations} == {DFUSION, DREAMDPO}  # type: ignore[attr-defined]
    summary = ask(server, [user("preference optimization")], model="papertalk-summarize")
    assert summary.choices[0].message.citations  # type: ignore[attr-defined]


def test_a_refusal_is_the_fixed_phrase_with_its_reason(server: str) -> None:
    message = ask(server, [user("How many GPUs were used in Cake's experiments?")])
    message = message.choices[0].message
    assert message.content.splitlines()[0] == CANNOT_ANSWER
    assert message.refused is True and message.refusal_reason  # type: ignore[attr-defined]
    assert message.citations == []  # type: ignore[attr-defined]


def test_bad_requests_get_openai_style_errors(server: str) -> None:
    import openai

    client = openai_client(server)
    cases: list[tuple[type[Exception], int, dict[str, Any]]] = [
        (openai.NotFoundError, 404, {"model": "gpt-4o", "messages": [user("What is Cake?")]}),
        (openai.BadRequestError, 400, {"model": "papertalk", "messages": []}),
        (
            openai.BadRequestError,
            400,
            {"model": "papertalk", "messages": [user("x" * (MAX_QUESTION_CHARS + 1))]},
        ),
        (openai.BadRequestError, 400, {"model": "papertalk", "messages": [user(" \x00 ")]}),
        (
            openai.BadRequestError,
            400,
            {"model": "papertalk", "messages": [{"role": "assistant", "content": "Hi"}]},
        ),
    ]
    for error, status, body in cases:
        with pytest.raises(error) as caught:
            client.chat.completions.create(**body)
        assert caught.value.status_code == status  # type: ignore[attr-defined]
        detail = caught.value.body  # type: ignore[attr-defined]
        assert set(detail) == {"message", "type", "param", "code"}, detail
        assert detail["type"] == "invalid_request_error" and "Traceback" not in detail["message"]
    # What the openai client cannot send: a malformed body, the wrong content type.
    url = f"{server}/v1/chat/completions"
    for content, kind in (
        (b'{"model": "papertalk", "messages": [', "application/json"),
        (b"[1, 2]", "application/json"),
        (b'{"model": "papertalk"}', "text/plain"),
    ):
        response = httpx.post(url, content=content, headers={"content-type": kind}, timeout=30)
        assert response.status_code == 400, response.text
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_only_loopback_names_are_served(server: str) -> None:
    """A page that rebinds its own DNS name to 127.0.0.1 cannot use the API or MCP."""
    for path in ("/v1/models", "/mcp"):
        response = httpx.get(f"{server}{path}", headers={"host": "evil.example:80"}, timeout=30)
        assert response.status_code in (403, 421), (path, response.status_code)


def test_the_readme_snippet_runs_as_written(server: str, tmp_path: Path) -> None:
    import re
    import subprocess

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"<!-- openai-snippet -->\n```python\n(.*?)```\n<!-- /openai-snippet -->", readme, re.S
    )
    assert found, "the README has the OpenAI snippet between its markers"
    script = tmp_path / "snippet.py"
    script.write_text(found.group(1).replace("http://127.0.0.1:7860", server), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, cited, follow_up = done.stdout.partition(f"forum?id={CAKE_ID}\n")
    assert REFERENCES in first and cited and "1 Compute or Load KV Cache?" in first
    assert "2.6" in follow_up and REFERENCES in follow_up  # the follow-up's streamed answer


# MCP -------------------------------------------------------------------------------------------
async def _mcp_calls(session: Any) -> dict[str, Any]:
    """List the tools and call each one; returns what came back, by name."""
    await session.initialize()
    listed = await session.list_tools()
    got: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}
    calls = {
        "search_papers": {"query": "KV cache loading", "k": 3, "status": "poster"},
        "ask": {"question": "How much does Cake reduce time to first token?"},
        "refusal": {"question": "How many GPUs were used in Cake's experiments?"},
        "compare": {"papers_or_question": [DFUSION, DREAMDPO]},
        "summarize": {"topic": "preference optimization"},
        "list_papers": {"topic": "causal discovery"},
        "get_paper": {"id": CAKE_ID},
        "bibtex": {"ids": [CAKE_ID, DREAMDPO]},
        "missing": {"id": "no-such-paper"},
        "bad": {"question": "What is Cake?", "mode": "debate"},
    }
    tool = {"refusal": "ask", "missing": "get_paper", "bad": "ask"}
    for name, arguments in calls.items():
        got[name] = await session.call_tool(tool.get(name, name), arguments)
    return got


def _check_mcp(got: dict[str, Any]) -> None:
    tools = got["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema, tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), (tool.name, name)
    assert list(tools["search_papers"].input_schema["properties"]) == [
        "query",
        "k",
        "status",
        "author",
    ]
    assert set(tools["ask"].input_schema["properties"]["mode"]["enum"]) == {
        "ask",
        "list",
        "compare",
        "summarize",
    }
    for name in ("search_papers", "ask", "refusal", "compare", "summarize", "list_papers"):
        assert not got[name].is_error, (name, got[name].content)
    found = got["search_papers"].structured_content["papers"]
    assert found[0]["paper_id"] == CAKE_ID and all(p["status"] == "poster" for p in found)
    answer = got["ask"].structured_content
    assert "2.6" in answer["answer"] and answer["citations"][0]["paper_id"] == CAKE_ID
    assert answer["citations"][0]["passage"] and answer["citations"][0]["url"]
    refusal = got["refusal"].structured_content
    assert refusal["answer"] == CANNOT_ANSWER and refusal["refused"] and refusal["refusal_reason"]
    compared = got["compare"].structured_content
    assert {c["paper_id"] for c in compared["citations"]} == {DFUSION, DREAMDPO}
    assert got["summarize"].structured_content["citations"]
    assert got["list_papers"].structured_content["citations"]
    assert "2.6" in got["get_paper"].structured_content["abstract"]
    assert got["bibtex"].structured_content["bibtex"].count("@") == 2
    for name, expected in (("missing", "no paper with id"), ("bad", "mode")):
        assert got[name].is_error and expected in got[name].content[0].text, name
    # The text content (what a model reads) is the same result as JSON.
    assert json.loads(got["ask"].content[0].text)["answer"] == answer["answer"]


def _run_http(url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            return await _mcp_calls(session)

    return asyncio.run(main())


def test_mcp_tools_over_http(server: str) -> None:
    _check_mcp(_run_http(server))


def test_mcp_tools_over_stdio(bundled_home: Path, onnx_cache: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(PAPERTALK_HOME=str(bundled_home), PAPERTALK_CACHE_DIR=str(onnx_cache))
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rag.cli", "mcp", "--llm", "extractive"],
        env=env,
        cwd=str(REPO),
    )

    async def main() -> dict[str, Any]:
        with open(os.devnull, "w") as quiet:  # the server's log lines
            async with (
                stdio_client(command, errlog=quiet) as streams,
                ClientSession(streams[0], streams[1]) as session,
            ):
                return await _mcp_calls(session)

    _check_mcp(asyncio.run(main()))


# With --auth and PAPERTALK_API_KEY -------------------------------------------------------------
def test_the_api_needs_the_key(locked: str) -> None:
    import openai

    for key in ("unused", KEY[:-1] + "x"):
        with pytest.raises(openai.AuthenticationError) as caught:
            openai_client(locked, key).chat.completions.create(
                model="papertalk", messages=[user("What is Cake?")]
            )
        assert caught.value.status_code == 401
        assert caught.value.body["code"] == "invalid_api_key"  # type: ignore[index]
    assert httpx.get(f"{locked}/v1/models", timeout=30).status_code == 401
    reply = openai_client(locked, KEY).chat.completions.create(
        model="papertalk", messages=[user("How much does Cake reduce time to first token?")]
    )
    assert reply.choices[0].message.citations[0]["paper_id"] == CAKE_ID  # type: ignore[attr-defined]


def test_mcp_needs_the_key_and_the_page_keeps_its_login(locked: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    response = httpx.post(f"{locked}/mcp", json=initialize, headers=headers, timeout=30)
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "invalid_api_key"
    tools = asyncio.run(_list_tools(locked, {"Authorization": f"Bearer {KEY}"}))
    assert set(tools) == TOOLS
    # The API key is not a way into the page, and the page's login still guards it.
    page = httpx.get(f"{locked}/config", headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    assert page.status_code == 401


async def _list_tools(url: str, headers: dict[str, str]) -> list[str]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return [t.name for t in (await session.list_tools()).tools]


# Without a server --------------------------------------------------------------------------------
def _body(**fields: Any) -> bytes:
    return json.dumps({"model": "papertalk", **fields}).encode()


def test_history_comes_from_user_and_assistant_pairs() -> None:
    reply = f"Cake loads KV caches [1].\n\n{REFERENCES}\n\n- [1] [Cake](https://o/forum?id=A)"
    request = parse_chat_request(
        _body(
            messages=[
                {"role": "system", "content": "Be brief."},
                user("What is Cake?"),
                {"role": "assistant", "content": reply},
                {"role": "user", "content": [{"type": "text", "text": "How does it work?"}]},
            ],
            stream=True,
        )
    )
    assert request.question == "How does it work?" and request.stream and request.mode == "ask"
    assert request.history == [("What is Cake?", "Cake loads KV caches [1].")]
    assert references_part(request.last_reply).strip().endswith("(https://o/forum?id=A)")
    compare = parse_chat_request(
        json.dumps({"model": "papertalk-compare", "messages": [user("A and B")]}).encode()
    )
    assert compare.mode == "compare" and compare.history == [] and not compare.stream


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        (b"not json", 400, None),
        (b'"a string"', 400, None),
        (json.dumps({"messages": [user("x")]}).encode(), 400, "model"),
        (_body(model="nope", messages=[user("x")]), 404, "model"),
        (_body(messages="What is Cake?"), 400, "messages"),
        (_body(messages=[{"content": "x"}]), 400, "messages[0]"),
        (_body(messages=[{"role": "user", "content": [{"type": "image_url"}]}]), 400, None),
        (_body(messages=[user("x")], stream="yes"), 400, "stream"),
        (_body(messages=[user("x")], n=2), 400, "n"),
        (_body(messages=[user("a"), {"role": "assistant", "content": "b"}]), 400, "messages"),
        (_body(messages=[user("x" * 2001)]), 400, "messages[0].content"),
        (b" " * 1_000_001, 413, None),
    ],
)
def test_bad_bodies(body: bytes, status: int, param: str | None) -> None:
    with pytest.raises(ApiError) as caught:
        parse_chat_request(body)
    assert caught.value.status == status
    if param is not None:
        assert caught.value.param == param


def test_reply_markdown_round_trips() -> None:
    result: Any = {
        "answer": "Cake cuts TTFT [1].",
        "refused": False,
        "citations": [
            {"n": 1, "title": "Compute [or] Load", "url": "https://o/forum?id=A", "authors": []}
        ],
        "related": [],
    }
    text = reply_markdown(result)
    assert text.startswith("Cake cuts TTFT [1].\n\n**References**")
    assert r"[Compute \[or\] Load](https://o/forum?id=A)" in text
    assert answer_text(text) == "Cake cuts TTFT [1]."
    refused: Any = {
        "refused": True,
        "related": [{"title": "Cake", "url": "https://o/forum?id=A"}],
        "citations": [],
    }
    assert reply_markdown(refused).startswith(CANNOT_ANSWER + "\n\n**Possibly related papers**")
    assert references_part(reply_markdown(refused)) == ""
    # A refusal that answers the parts the papers state: that answer, with its references.
    partial: Any = {**refused, "partial": "Cake balances both [1].", **result}
    partial["refused"] = True
    text = reply_markdown(partial)
    assert text.startswith(CANNOT_ANSWER + "\n\n**What the papers do state")
    assert "Cake balances both [1].\n\n**References**" in text
    assert "(https://o/forum?id=A)" in references_part(text)


def test_access_rules() -> None:
    local = {"host": "127.0.0.1:7860"}
    assert ApiAccess.for_server("127.0.0.1", api_key=None, page_login=False).check(local) is None
    rebound = ApiAccess().check({"host": "evil.example"})
    assert rebound is not None and rebound.status == 403
    assert ApiAccess().check({"host": "[::1]:7860"}) is None
    keyed = ApiAccess.for_server("127.0.0.1", api_key=KEY, page_login=True)
    assert keyed.check({**local, "authorization": f"Bearer {KEY}"}) is None
    for header in ("", KEY, f"Basic {KEY}", f"Bearer {KEY}x"):
        refusal = keyed.check({**local, "authorization": header})
        assert refusal is not None and refusal.status == 401
    closed = ApiAccess.for_server("0.0.0.0", api_key=None, page_login=True)
    assert closed.closed and not closed.loopback
    refusal = closed.check({"host": "example.org", "authorization": "Bearer anything"})
    assert refusal is not None and refusal.status == 401
    open_lan = ApiAccess.for_server("0.0.0.0", api_key=None, page_login=False)
    assert open_lan.check({"host": "example.org"}) is None


def test_backend_failures_and_a_missing_store_are_error_objects(
    bundled_home: Path, onnx_cache: Path, tmp_path: Path
) -> None:
    """In process (FastAPI's test client): an LLM backend that is down gives 502 (or an error
    event ending the stream) naming the retrieved papers; no store gives 503."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from rag.service import PaperTalkService
    from rag.settings import Settings
    from ui.openai_api import openai_router

    def client(settings: Settings) -> TestClient:
        app = FastAPI()
        app.include_router(openai_router(PaperTalkService(settings), ApiAccess(loopback=False)))
        return TestClient(app)

    down = Settings(
        home=bundled_home,
        cache_dir=onnx_cache,
        llm="openai:smollm2",
        openai_base_url="http://127.0.0.1:9/v1",  # nothing listens on the discard port
        llm_timeout_s=5,
    )
    body = {"model": "papertalk", "messages": [user("How does Cake load KV caches?")]}
    response = client(down).post("/v1/chat/completions", json=body)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["type"] == "server_error" and "Retrieved papers" in error["message"]
    assert CAKE_ID in error["message"]
    with client(down).stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert (
        events[-1] == "[DONE]" and "Retrieved papers" in json.loads(events[-2])["error"]["message"]
    )

    empty = Settings(home=tmp_path / "no-store", cache_dir=onnx_cache, llm="extractive")
    for stream in (False, True):
        response = client(empty).post("/v1/chat/completions", json={**body, "stream": stream})
        assert (
            response.status_code == 503 and response.json()["error"]["code"] == "store_unavailable"
        )
