"""Failure and recovery with real servers: the LLM server (llama_cpp.server) killed mid-answer
or down, the Chroma server (`chroma run`) stopped, hung or restarted mid-session.

Each outage must give a clear one-line error (no traceback, no crash), keep what was retrieved
when only generation failed, and the next question must work once the server is back on the
same port (and the same --path for Chroma) without restarting PaperTalk. The servers are shared
by the module and restarted in place; every test leaves them running.
"""

from __future__ import annotations

import codecs
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.common import wait_for_port
from rag.answer.refusal import CANNOT_ANSWER
from rag.errors import StoreError
from rag.settings import Settings

from .conftest import (
    CAKE_ID,
    REPO,
    _chroma_executable,
    free_port,
    llama_server_command,
    run_cli,
    running_server,
)

pytestmark = pytest.mark.server

CAKE_Q = "How much does Cake reduce time to first token?"
CAKE_TITLE = "Compute or Load KV Cache?"
LLM_LABEL = "openai:smollm2"


class Restartable:
    """A server process that tests stop, kill, pause and start again on the same port."""

    def __init__(self, command: list[str], port: int, log: Path, env: dict[str, str]) -> None:
        self.command, self.port, self.log_path, self.env = command, port, log, env
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self, timeout: float = 60) -> None:
        assert self.proc is None, "already running"
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, env=self.env
            )
        try:
            wait_for_port(self.port, timeout, self.proc)
        except (RuntimeError, TimeoutError) as exc:
            self.stop(kill=True)
            pytest.fail(f"{exc}\n{self.log()[-3000:]}")
        self.starts += 1

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is None:
            return
        os.kill(self.proc.pid, signal.SIGCONT)  # a paused server cannot handle SIGTERM
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def ensure_running(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            return
        self.proc = None
        self.start()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def restartable(command: list[str], port: int, log: Path) -> Iterator[Restartable]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # the log shows requests as they come
    server = Restartable(command, port, log, env)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restartable]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with restartable(llama_server_command(port), port, log) as server:
        yield server


@pytest.fixture
def llm(llama: Restartable) -> Iterator[Restartable]:
    """The module's LLM server, running at the start and at the end of the test."""
    llama.ensure_running()
    yield llama
    llama.ensure_running()


@pytest.fixture(scope="module")
def chroma_store(
    tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path
) -> Iterator[Restartable]:
    """A `chroma run` server holding the bundled corpus (ingested once)."""
    from rag.ingest.pipeline import run_ingest

    root = tmp_path_factory.mktemp("chroma")
    port = free_port()
    command = [_chroma_executable(), "run", "--path", str(root / "data")]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with restartable(command, port, root / "chroma.log") as server:
        settings = Settings(
            home=root / "ingest-home", cache_dir=onnx_cache, chroma_url=chroma_url(server)
        )
        run_ingest(settings, [], progress=False)
        yield server


def chroma_url(server: Restartable) -> str:
    return f"http://127.0.0.1:{server.port}"


@pytest.fixture
def chroma(chroma_store: Restartable) -> Iterator[Restartable]:
    """The module's Chroma server, running at the start and at the end of the test."""
    chroma_store.ensure_running()
    yield chroma_store
    chroma_store.ensure_running()


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def requests_seen(server: Restartable) -> int:
    return server.log().count("POST /v1/chat/completions")


# CLI: papertalk chat / ask against an LLM server ------------------------------------------------
class Reader:
    """Collects a subprocess pipe in a thread, so tests can wait for text while it runs."""

    def __init__(self, stream: Any) -> None:
        self.text = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        while chunk := os.read(stream.fileno(), 4096):
            self.text += self._decoder.decode(chunk)


def _chat_env(bundled_home: Path, onnx_cache: Path, llm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(
        PAPERTALK_HOME=str(bundled_home),
        PAPERTALK_CACHE_DIR=str(onnx_cache),
        OPENAI_BASE_URL=llm_url,
        PAPERTALK_LLM_TIMEOUT_S="60",
        PYTHONUNBUFFERED="1",
        HF_HUB_OFFLINE="1",
    )
    return env


@pytest.mark.slow
def test_chat_llm_killed_mid_answer_then_back(
    llm: Restartable, bundled_home: Path, onnx_cache: Path
) -> None:
    env = _chat_env(bundled_home, onnx_cache, f"http://127.0.0.1:{llm.port}/v1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", "chat", "--llm", LLM_LABEL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    assert proc.stdin is not None
    out, err = Reader(proc.stdout), Reader(proc.stderr)

    def prompts(n: int, timeout: float = 180) -> None:
        wait_until(
            lambda: out.text.count("you> ") >= n or proc.poll() is not None,
            timeout,
            f"chat prompt #{n}; stdout: {out.text[-2000:]!r} stderr: {err.text[-2000:]!r}",
        )
        assert out.text.count("you> ") >= n, f"chat ended: {out.text!r} {err.text!r}"

    def ask(question: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(question.encode() + b"\n")
        proc.stdin.flush()

    try:
        prompts(1)
        ask(CAKE_Q)
        # Tokens stream to stderr after "… ": kill the server on the first of them.
        wait_until(lambda: re.search(r"… \S", err.text), 180, f"a streamed token: {err.text!r}")
        answered = out.text.count("you> ") > 1
        llm.stop(kill=True)
        assert not answered, "the answer ended before the server was killed"
        prompts(2)
        first = out.text.split("you> ")[1]
        errors = [line for line in first.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"the LLM backend {LLM_LABEL}" in errors[0], first
        assert "Retrieved papers" in first and CAKE_TITLE in first, first

        llm.start()  # same port: the same chat session answers the next question
        ask(CAKE_Q)
        prompts(3)
        second = out.text.split("you> ")[2]
        assert not [line for line in second.splitlines() if line.startswith("error:")], second
        assert "References:" in second and CAKE_TITLE in second, second

        ask("/quit")
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err.text and "Traceback" not in out.text, err.text


def test_ask_with_the_llm_down_lists_the_retrieved_papers(
    bundled_home: Path, onnx_cache: Path
) -> None:
    """One error line on stderr, the retrieved papers on stdout, exit code 1 (not 2: the
    question was fine and retrieval worked); the same in --json, with an "error" field."""
    env = _chat_env(bundled_home, onnx_cache, f"http://127.0.0.1:{free_port()}/v1")
    env["PAPERTALK_LLM_TIMEOUT_S"] = "5"
    plain = run_cli("ask", CAKE_Q, "--llm", LLM_LABEL, env=env)
    assert plain.returncode == 1, plain.stderr
    lines = plain.stderr.strip().splitlines()
    assert len(lines) == 1, plain.stderr
    assert lines[0].startswith(f"papertalk: error: the LLM backend {LLM_LABEL} is unreachable")
    assert "Retrieved papers" in plain.stdout and CAKE_TITLE in plain.stdout

    as_json = run_cli("ask", CAKE_Q, "--llm", LLM_LABEL, "--json", env=env)
    assert as_json.returncode == 1 and len(as_json.stderr.strip().splitlines()) == 1
    import json

    data = json.loads(as_json.stdout)
    assert "unreachable" in data["error"] and data["answer"] == ""
    assert CAKE_ID in [paper["paper_id"] for paper in data["related"]]


@pytest.mark.slow
def test_llm_server_hanging_times_out_then_back(
    llm: Restartable, bundled_settings: Settings
) -> None:
    """A server that accepts the request but never answers (paused): the answer ends with a
    "timed out" error after about the timeout, keeping the retrieved papers; once the server
    runs again the same Answerer answers."""
    from rag.answer.chain import Answerer

    settings = bundled_settings.with_overrides(openai_base_url=f"http://127.0.0.1:{llm.port}/v1")
    # A first (short) answer with a generous timeout puts the prompt in the server's KV cache,
    # so a healthy answer starts well within the short timeout used below, even on a busy
    # machine.
    warm = Answerer(
        settings.with_overrides(llm_timeout_s=120, max_answer_tokens=16), llm_spec=LLM_LABEL
    )
    assert warm.answer(CAKE_Q).error is None
    answerer = Answerer(
        settings.with_overrides(llm_timeout_s=4), searcher=warm.searcher, llm_spec=LLM_LABEL
    )
    llm.pause()
    try:
        started = time.monotonic()
        down = answerer.answer(CAKE_Q)
        waited = time.monotonic() - started
    finally:
        llm.resume()
    assert down.error == f"the LLM backend {LLM_LABEL} timed out", down.error
    assert CAKE_ID in [h.paper_id for h in down.related]
    assert waited < 30  # one retry at most: 2 x 4 s, not the server's whole pause
    back = answerer.answer(CAKE_Q)
    assert back.error is None and CAKE_ID in back.cited_paper_ids


# Chroma server --------------------------------------------------------------------------------
def _chroma_settings(server: Restartable, home: Path, cache: Path, **overrides: Any) -> Settings:
    return Settings(
        home=home, cache_dir=cache, chroma_url=chroma_url(server), llm="extractive", **overrides
    )


def test_cli_with_the_chroma_server_down(chroma: Restartable, onnx_cache: Path) -> None:
    url = chroma_url(chroma)
    chroma.stop()
    env = {"PAPERTALK_CACHE_DIR": str(onnx_cache), "PAPERTALK_CHROMA_URL": url}
    search = run_cli("search", "compute or load KV cache", env=env)
    ask = run_cli("ask", CAKE_Q, "--llm", "extractive", env=env)
    for result in (search, ask):
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"papertalk: error: cannot reach the Chroma server at {url}")
        assert "check that it is running" in lines[0]
    chroma.start()
    back = run_cli("search", "compute or load KV cache", "--json", env=env)
    assert back.returncode == 0, back.stderr
    assert f'"paper_id": "{CAKE_ID}"' in back.stdout


def test_one_process_survives_chroma_stops_and_restarts(
    chroma: Restartable, tmp_path: Path, onnx_cache: Path
) -> None:
    """An Answerer (and its searcher) kept across outages: stopped, killed, hung, restarted."""
    from rag.answer.chain import Answerer
    from rag.store import chroma as store

    settings = _chroma_settings(chroma, tmp_path / "home", onnx_cache)
    answerer = Answerer(settings)
    url = chroma_url(chroma)

    def cited() -> list[str]:
        answer = answerer.answer(CAKE_Q)
        assert answer.error is None
        return [c.paper_id for c in answer.citations]

    assert cited() == [CAKE_ID]
    for kill in (False, True):
        chroma.stop(kill=kill)
        with pytest.raises(StoreError, match=f"cannot reach the Chroma server at {url}"):
            answerer.answer(CAKE_Q)
        with pytest.raises(StoreError, match="cannot reach"):  # still down: still clear
            answerer.searcher.search("KV cache")
        chroma.start()
        assert cited() == [CAKE_ID]

    # A server that accepts connections but never answers: a timeout, not a hang.
    old = store.SERVER_TIMEOUT_S
    store.SERVER_TIMEOUT_S = 3.0
    try:
        hung = Answerer(_chroma_settings(chroma, tmp_path / "home", onnx_cache))
    finally:
        store.SERVER_TIMEOUT_S = old
    chroma.pause()
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match=f"the Chroma server at {url} did not answer in time"):
            hung.answer(CAKE_Q)
        assert time.monotonic() - started < 15
    finally:
        chroma.resume()
    assert [c.paper_id for c in hung.answer(CAKE_Q).citations] == [CAKE_ID]


def test_a_rebuilt_collection_is_found_again(
    chroma: Restartable, tmp_path: Path, onnx_cache: Path
) -> None:
    """The store behind a running searcher is deleted and ingested again (new collection id):
    the searcher looks its collection up again by name instead of failing forever."""
    from rag.ingest.pipeline import run_ingest
    from rag.retrieve.hybrid import open_searcher
    from rag.store.chroma import make_client

    settings = _chroma_settings(chroma, tmp_path / "home", onnx_cache)
    searcher = open_searcher(settings)
    assert searcher.search(CAKE_Q)[0].paper_id == CAKE_ID
    make_client(settings).delete_collection(searcher.store.name)
    with pytest.raises(StoreError, match="failed"):
        searcher.search(CAKE_Q)
    run_ingest(settings, [], progress=False, embedder=searcher.embedder)
    assert searcher.search(CAKE_Q)[0].paper_id == CAKE_ID


# Web UI: papertalk serve driven through gradio_client ------------------------------------------
@pytest.fixture(scope="module")
def ui(
    llama: Restartable,
    chroma_store: Restartable,
    onnx_cache: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """`papertalk serve` on the Chroma server's store, answering with the LLM server."""
    logs = tmp_path_factory.mktemp("serve")
    llama.ensure_running()
    chroma_store.ensure_running()
    port = free_port()
    env = _chat_env(logs / "home", onnx_cache, f"http://127.0.0.1:{llama.port}/v1")
    env.update(PAPERTALK_CHROMA_URL=chroma_url(chroma_store), GRADIO_TEMP_DIR=str(logs / "tmp"))
    command = [sys.executable, "-m", "rag.cli", "serve", "--llm", LLM_LABEL, "--port", str(port)]
    with running_server(command, port, logs / "serve.log", timeout=120, env=env, cwd=REPO):
        yield f"http://127.0.0.1:{port}"


def _client(url: str) -> Any:
    from gradio_client import Client

    return Client(url, verbose=False)


def _assert_cited(result: tuple[str, list[dict[str, Any]]]) -> None:
    text, citations = result
    assert text and text != CANNOT_ANSWER, text
    assert CAKE_ID in [c["paper_id"] for c in citations], citations


@pytest.mark.slow
def test_ui_llm_killed_mid_answer_then_back(ui: str, llm: Restartable) -> None:
    from gradio_client.exceptions import AppError

    session = _client(ui)
    before = requests_seen(llm)
    job = session.submit(CAKE_Q, api_name="/ask")
    wait_until(lambda: requests_seen(llm) > before, 120, "the UI's request to the LLM server")
    llm.stop(kill=True)
    with pytest.raises(AppError, match=f"the LLM backend {LLM_LABEL} (failed|is unreachable)"):
        job.result(timeout=120)
    with pytest.raises(AppError, match=f"the LLM backend {LLM_LABEL} is unreachable") as down:
        session.predict(CAKE_Q, api_name="/ask")
    # The retrieval results still reach the client: the papers found before generation failed.
    retrieved = str(down.value).split("Retrieved papers: ", 1)[1]
    assert retrieved.startswith(f"[1] {CAKE_TITLE}") and f"forum?id={CAKE_ID})" in retrieved
    llm.start()
    _assert_cited(session.predict(CAKE_Q, api_name="/ask"))


@pytest.mark.slow
def test_ui_chroma_restarted_mid_session(ui: str, chroma: Restartable, llm: Restartable) -> None:
    from gradio_client.exceptions import AppError

    session = _client(ui)
    chroma.stop(kill=True)
    url = re.escape(chroma_url(chroma))
    with pytest.raises(AppError, match=f"cannot reach the Chroma server at {url}"):
        session.predict(CAKE_Q, api_name="/ask")
    chroma.start()
    _assert_cited(session.predict(CAKE_Q, api_name="/ask"))
