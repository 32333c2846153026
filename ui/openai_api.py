"""An OpenAI-compatible chat endpoint on the page's server: `POST /v1/chat/completions`
(streamed as server-sent events, or not) and `GET /v1/models`.

Models: `papertalk` (ask; "Which papers ...?" becomes a list), `papertalk-compare` and
`papertalk-summarize`. The conversation in `messages` drives follow-ups: earlier user/assistant
pairs are the history, and the papers an earlier reply listed under References are the ones a
follow-up such as "How does it work?" is about. System messages are ignored: PaperTalk answers
only from the papers, by its own rules.

The reply is the cited answer, then a Markdown references list (or the fixed refusal phrase and
the possibly related papers); `choices[0].message.citations` holds the citations as data (in a
stream: `choices[0].delta.citations` of the last chunk), beside `refused` and `refusal_reason`.
While an answer is written, its unchecked draft streams as `delta.reasoning_content` (shown as
"thinking" by clients that know the field); the checked, cited answer then streams as
`delta.content`. Bad requests get OpenAI-style error objects with a 4xx status.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from rag.answer.bibtex import short_authors
from rag.answer.refusal import CANNOT_ANSWER
from rag.errors import PaperTalkError, StoreError
from rag.service import AnswerResult, PaperTalkService, answer_result, failure_message
from rag.text.questions import MAX_QUESTION_CHARS, tidy_question
from ui.api_access import ApiAccess, error_body

MODELS = {"papertalk": "ask", "papertalk-compare": "compare", "papertalk-summarize": "summarize"}
MAX_BODY_BYTES = 1_000_000
MAX_MESSAGES = 200
MAX_HISTORY_TURNS = 10  # the latest turns of `messages` that follow-ups may lean on
REFERENCES = "**References**"
RELATED = "**Possibly related papers**"
PARTIAL = "**What the papers do state of the rest of the question**"
CREATED = int(time.time())
log = logging.getLogger("papertalk.api")
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


class ApiError(Exception):
    """A request the endpoint refuses: an OpenAI-style error object with a 4xx/5xx status."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        type_: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.type = (
            status,
            message,
            param,
            code,
            type_,
        )

    def response(self) -> JSONResponse:
        body = error_body(self.message, self.type, self.param, self.code)
        return JSONResponse(body, status_code=self.status)


@dataclass(frozen=True)
class ChatRequest:
    model: str
    mode: str
    question: str
    history: list[tuple[str, str]] = field(default_factory=list)
    last_reply: str = ""  # the latest assistant message (its references name the papers)
    stream: bool = False


# Requests ---------------------------------------------------------------------------------------
def parse_chat_request(body: bytes) -> ChatRequest:
    """A chat-completions body, checked; raises ApiError (400/404/413) for what cannot be served."""
    if len(body) > MAX_BODY_BYTES:
        raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes", code="request_too_large")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(
            400, f"the body is not valid JSON ({exc.__class__.__name__})", code="invalid_json"
        ) from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object", code="invalid_json")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "you must provide a model parameter", param="model")
    if model not in MODELS:
        raise ApiError(
            404,
            f"the model {model!r} does not exist: use one of {', '.join(MODELS)}",
            param="model",
            code="model_not_found",
        )
    stream = data.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise ApiError(400, "stream must be true or false", param="stream")
    n = data.get("n", 1)
    if n not in (None, 1):
        raise ApiError(400, "only n=1 is supported", param="n")
    texts = _messages(data.get("messages"))
    role, question = texts[-1]
    if role != "user":
        raise ApiError(400, "the last message must come from the user", param="messages")
    if len(question) > MAX_QUESTION_CHARS:
        raise ApiError(
            400,
            f"the question has {len(question)} characters; at most {MAX_QUESTION_CHARS} are "
            "allowed",
            param=f"messages[{len(texts) - 1}].content",
            code="string_above_max_length",
        )
    if not tidy_question(question):
        raise ApiError(
            400,
            "empty question: ask something about the papers",
            param=f"messages[{len(texts) - 1}].content",
        )
    history, last_reply = _history(texts[:-1])
    return ChatRequest(model, MODELS[model], question, history, last_reply, bool(stream))


def _messages(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list) or not value:
        raise ApiError(400, "messages must be a non-empty list", param="messages")
    if len(value) > MAX_MESSAGES:
        raise ApiError(400, f"at most {MAX_MESSAGES} messages", param="messages")
    texts = []
    for i, message in enumerate(value):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise ApiError(
                400,
                f"messages[{i}] must be an object with a role ({', '.join(sorted(_ROLES))})",
                param=f"messages[{i}]",
            )
        texts.append((message["role"], _text(message.get("content"), i)))
    return texts


def _text(content: Any, i: int) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise ApiError(
                    400,
                    "only text content is supported",
                    param=f"messages[{i}].content",
                    code="unsupported_content",
                )
            parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    raise ApiError(400, "content must be a string or a list of parts", param=f"messages[{i}]")


def _history(texts: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """(question, answer) pairs of earlier user/assistant turns, and the last assistant text."""
    pairs: list[tuple[str, str]] = []
    asked: str | None = None
    last_reply = ""
    for role, text in texts:
        if role == "user":
            asked = text
        elif role == "assistant" and asked is not None:
            pairs.append((asked, answer_text(text)))
            last_reply, asked = text, None
    return pairs[-MAX_HISTORY_TURNS:], last_reply


def answer_text(reply: str) -> str:
    """A reply without the references or related-papers list this endpoint appends."""
    lists = rf"\n\s*(?:{re.escape(REFERENCES)}|{re.escape(RELATED)})"
    return re.split(lists, reply, maxsplit=1)[0].strip()


def references_part(reply: str) -> str:
    """The References list of a reply of this endpoint ('' when it has none)."""
    _, found, rest = reply.partition(REFERENCES)
    return rest if found else ""


# Replies ----------------------------------------------------------------------------------------
def reply_markdown(result: AnswerResult) -> str:
    """The answer with a Markdown references list, or the refusal with the related papers."""
    if result["refused"]:
        if result.get("partial") and result["citations"]:  # the parts the papers do state
            stated = _with_references(result["partial"], result)
            return "\n".join([CANNOT_ANSWER, "", PARTIAL, "", stated])
        if not result["related"]:
            return CANNOT_ANSWER
        related = [f"- [{_link_text(p['title'])}]({p['url']})" for p in result["related"]]
        return "\n".join([CANNOT_ANSWER, "", RELATED, "", *related])
    if not result["citations"]:
        return result["answer"]
    return _with_references(result["answer"], result)


def _with_references(text: str, result: AnswerResult) -> str:
    """`text`, then the Markdown references list of `result`'s citations."""
    lines = []
    for c in result["citations"]:
        authors = short_authors(c["authors"], limit=3)
        lines.append(
            f"- [{c['n']}] [{_link_text(c['title'])}]({c['url']})"
            + (f" — {authors}" if authors else "")
        )
    return "\n".join([text, "", REFERENCES, "", *lines])


def _link_text(title: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(title.split()))


def completion(request: ChatRequest, result: AnswerResult, completion_id: str) -> dict[str, Any]:
    """A `chat.completion` object for a finished answer."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply_markdown(result),
                    **_extras(result),
                },
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": None,
    }


def _extras(result: AnswerResult) -> dict[str, Any]:
    return {
        "citations": result["citations"],
        "refused": result["refused"],
        "refusal_reason": result["refusal_reason"] or None,
        "partial": result.get("partial") or None,
    }


def _chunk(
    request: ChatRequest,
    completion_id: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
) -> str:
    data = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def stream_events(
    service: PaperTalkService, request: ChatRequest, completion_id: str
) -> Iterator[str]:
    """The server-sent events of one streamed answer, ending with `data: [DONE]`: the draft as
    `reasoning_content`, then the checked answer and its references as `content`, then the
    citations. A failure ends the stream with an error object."""
    yield _chunk(request, completion_id, {"role": "assistant", "content": ""})
    try:
        final = None
        for event in service.stream(
            request.question,
            mode=request.mode,
            history=request.history,
            history_papers=_papers(service, request),
        ):
            if event.kind == "token" and event.text:
                yield _chunk(request, completion_id, {"reasoning_content": event.text})
            elif event.kind == "final":
                final = event.answer
        if final is None:
            raise PaperTalkError("no answer was produced")
        result = answer_result(final)
        if result["error"]:
            raise PaperTalkError(failure_message(result))
        reply, answer = reply_markdown(result), result["answer"]
        yield _chunk(request, completion_id, {"content": answer})
        if reply[len(answer) :]:
            yield _chunk(request, completion_id, {"content": reply[len(answer) :]})
        yield _chunk(request, completion_id, _extras(result), finish_reason="stop")
    except PaperTalkError as exc:
        error = error_body(str(exc), "server_error", None, "answer_failed")
        yield f"data: {json.dumps(error, ensure_ascii=False)}\n\n"
    except Exception as exc:  # the stream must end with an error object, never a traceback
        log.exception("streamed answer failed")
        message = f"internal error: {type(exc).__name__}"
        yield f"data: {json.dumps(error_body(message, 'server_error', None, None))}\n\n"
    yield "data: [DONE]\n\n"


def _papers(service: PaperTalkService, request: ChatRequest) -> list[str]:
    """The papers the conversation's latest reply listed under References."""
    return service.cited_papers(references_part(request.last_reply))


# The router -------------------------------------------------------------------------------------
def openai_router(service: PaperTalkService, access: ApiAccess) -> APIRouter:
    """`/v1/models` and `/v1/chat/completions` over `service`, behind `access`."""
    router = APIRouter(prefix="/v1")

    def refused(request: Request) -> JSONResponse | None:
        refusal = access.check({k.lower(): v for k, v in request.headers.items()})
        if refusal is None:
            return None
        headers = {"WWW-Authenticate": "Bearer"} if refusal.status == 401 else None
        return JSONResponse(refusal.body(), status_code=refusal.status, headers=headers)

    @router.get("/models", include_in_schema=False)
    async def list_models(request: Request) -> Response:
        return refused(request) or JSONResponse(
            {"object": "list", "data": [_model(name) for name in MODELS]}
        )

    @router.get("/models/{name}", include_in_schema=False)
    async def get_model(name: str, request: Request) -> Response:
        if (denied := refused(request)) is not None:
            return denied
        if name not in MODELS:
            return ApiError(
                404, f"the model {name!r} does not exist", param="model", code="model_not_found"
            ).response()
        return JSONResponse(_model(name))

    @router.post("/chat/completions", include_in_schema=False)
    async def chat_completions(request: Request) -> Response:
        if (denied := refused(request)) is not None:
            return denied
        try:
            content_type = request.headers.get("content-type", "")
            if "application/json" not in content_type.lower():
                raise ApiError(400, "Content-Type must be application/json", code="invalid_json")
            chat = parse_chat_request(await request.body())
            completion_id = f"chatcmpl-{uuid.uuid4().hex}"
            if chat.stream:
                await run_in_threadpool(service.searcher)  # a missing store is an error now
                return StreamingResponse(
                    stream_events(service, chat, completion_id),
                    media_type="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                )
            result = await run_in_threadpool(_answer, service, chat)
            if result["error"]:
                raise ApiError(
                    502, failure_message(result), code="answer_failed", type_="server_error"
                )
            return JSONResponse(completion(chat, result, completion_id))
        except ApiError as exc:
            return exc.response()
        except StoreError as exc:
            return ApiError(
                503, str(exc), code="store_unavailable", type_="server_error"
            ).response()
        except PaperTalkError as exc:
            return ApiError(400, str(exc)).response()
        except Exception as exc:  # never a traceback to the client
            log.exception("chat completion failed")
            message = f"internal error: {type(exc).__name__}"
            return ApiError(500, message, type_="server_error").response()

    return router


def _answer(service: PaperTalkService, request: ChatRequest) -> AnswerResult:
    return service.answer(
        request.question,
        mode=request.mode,
        history=request.history,
        history_papers=_papers(service, request),
    )


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": CREATED, "owned_by": "papertalk"}
