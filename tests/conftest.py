"""Shared fixtures: an isolated PaperTalk home per test, a session ONNX cache, real stores."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench import common
from bench.common import free_port

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FULL_CORPUS = SHARED / "data" / "icml2025" / "papers.jsonl"
DEV_QA = SHARED / "eval" / "dev_qa.jsonl"
BUNDLED = REPO / "data" / "papers.jsonl"
CAKE_ID = "WOyOtaO6lQ"


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache dir per test session, so the ONNX export happens once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, onnx_cache: Path) -> Path:
    """Every test gets its own PaperTalk home; no test touches the user's store."""
    for name in list(os.environ):
        if name.startswith("PAPERTALK_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("PAPERTALK_HOME", str(home))
    monkeypatch.setenv("PAPERTALK_CACHE_DIR", str(onnx_cache))
    return home


@pytest.fixture(scope="session")
def bundled_home(tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path) -> Path:
    """A home with the bundled corpus ingested once per session (read-only for tests)."""
    from rag.ingest.pipeline import run_ingest
    from rag.settings import Settings

    home = tmp_path_factory.mktemp("bundled-home")
    settings = Settings(home=home, cache_dir=onnx_cache)
    run_ingest(settings, [], progress=False)
    return home


@pytest.fixture(scope="session")
def full_home(tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path) -> Path:
    """A home with all ICML 2025 papers of ../shared ingested once per session (read-only for
    tests); skipped when the corpus is absent."""
    from rag.ingest.pipeline import run_ingest
    from rag.settings import Settings

    if not FULL_CORPUS.exists():
        pytest.skip(f"full corpus not found: {FULL_CORPUS}")
    home = tmp_path_factory.mktemp("full-home")
    run_ingest(Settings(home=home, cache_dir=onnx_cache), [FULL_CORPUS], progress=False)
    return home


@pytest.fixture
def bundled_settings(bundled_home: Path, onnx_cache: Path):  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return Settings(home=bundled_home, cache_dir=onnx_cache)


def _chroma_executable() -> str:
    candidate = Path(sys.executable).with_name("chroma")
    return str(candidate) if candidate.exists() else (shutil.which("chroma") or "chroma")


@contextmanager
def running_server(
    command: list[str], port: int, log_path: Path, *, timeout: float = 60, **popen: Any
) -> Iterator[subprocess.Popen]:
    """`bench.common.running_server`; a server that fails to start fails the test."""
    try:
        server = common.running_server(command, port, log_path, timeout=timeout, **popen)
        proc = server.__enter__()
    except common.ServerFailed as exc:
        pytest.fail(str(exc))
    try:
        yield proc
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    """A real `chroma run` server on a free 127.0.0.1 port; yields its URL."""
    port = free_port()
    command = [
        _chroma_executable(),
        "run",
        "--path",
        str(tmp_path / "chroma-server"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with running_server(command, port, tmp_path / "chroma.log", timeout=30):
        yield f"http://127.0.0.1:{port}"


def llama_server_command(port: int) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server for the bundled GGUF on 127.0.0.1:`port`."""
    from rag.answer.llm import bundled_gguf

    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(bundled_gguf()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "2",
        "--model_alias",
        "smollm2",
    ]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """Run `papertalk` in a subprocess (as a user would) and return the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "rag.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=REPO,
    )


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The bundled GGUF behind an OpenAI-compatible server; yields its base URL (.../v1)."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    with running_server(llama_server_command(port), port, log_path):
        yield f"http://127.0.0.1:{port}/v1"


def serve_ui(
    home: Path,
    cache: Path,
    logs: Path,
    *,
    llm: str = "extractive",
    auth: tuple[str, str] | None = None,
    timeout: float = 90,
    extra_env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[str]:
    """`papertalk serve --llm LLM` over `home` in a subprocess on a free 127.0.0.1 port (as
    users run it); yields its URL and stops it after. Its log is `logs`/serve.log."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(
        PAPERTALK_HOME=str(home),
        PAPERTALK_CACHE_DIR=str(cache),
        GRADIO_TEMP_DIR=str(logs / "gradio"),
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
    )
    env.update(extra_env or {})
    command = [sys.executable, "-m", "rag.cli", "serve", "--llm", llm, *args]
    command += ["--port", str(port)] + (["--auth", ":".join(auth)] if auth else [])
    with running_server(command, port, logs / "serve.log", timeout=timeout, env=env, cwd=REPO):
        yield f"http://127.0.0.1:{port}"
