"""`papertalk serve` as users run it (a subprocess on a free 127.0.0.1 port), driven through
`gradio_client`: cited answers, refusals, follow-ups, and sessions that don't share history."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.answer.refusal import CANNOT_ANSWER

from .conftest import CAKE_ID, run_cli, serve_ui

pytestmark = pytest.mark.server
AUTH = ("reader", "s3cret-pass")


@pytest.fixture(scope="module")
def server(bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The UI on the bundled corpus with the extractive backend, behind a login."""
    yield from _serve(bundled_home, onnx_cache, tmp_path_factory.mktemp("serve"), auth=AUTH)


def _serve(
    home: Path, cache: Path, logs: Path, *, auth: tuple[str, str] | None = None
) -> Iterator[str]:
    yield from serve_ui(home, cache, logs, auth=auth)


def client(url: str, auth: tuple[str, str] | None = AUTH):  # type: ignore[no-untyped-def]
    from gradio_client import Client

    return Client(url, auth=auth, verbose=False)


def test_ask_returns_a_cited_answer(server: str) -> None:
    text, citations = client(server).predict(
        "How much does Cake reduce time to first token?", api_name="/ask"
    )
    assert "2.6" in text and "[1]" in text
    assert citations[0]["paper_id"] == CAKE_ID and citations[0]["n"] == 1
    assert citations[0]["url"] == f"https://openreview.net/forum?id={CAKE_ID}"
    assert citations[0]["passage"] and citations[0]["supporting"]


def test_compare_mode_through_the_api(server: str) -> None:
    text, citations = client(server).predict(
        "Compare D-Fusion and DreamDPO", "compare", api_name="/ask"
    )
    assert text.startswith("| paper |") and len(citations) == 2


def test_refusal(server: str) -> None:
    text, citations = client(server).predict(
        "How many GPUs were used in Cake's experiments?", api_name="/ask"
    )
    assert text == CANNOT_ANSWER and citations == []
    # The parts the abstract does state are answered after the refusal, cited.
    text, citations = client(server).predict(
        "What does FIML integrate into one framework, and which datasets is it evaluated on?",
        api_name="/ask",
    )
    assert text.startswith(CANNOT_ANSWER + "\n\nWhat the papers do state")
    assert "graph partition" in text and "[1]" in text
    assert [c["paper_id"] for c in citations] == ["WSGpXQRUtH"]


def test_follow_up_in_the_same_session(server: str) -> None:
    session = client(server)
    session.predict("What is Cake?", api_name="/ask")
    text, citations = session.predict(
        "How much does it reduce time to first token?", api_name="/ask"
    )
    assert citations[0]["paper_id"] == CAKE_ID and "2.6" in text


def test_two_sessions_do_not_share_history(server: str) -> None:
    cake, dream = client(server), client(server)
    cake.predict("What is Cake?", api_name="/ask")
    dream.predict("What is DreamDPO?", api_name="/ask")
    _, cake_refs = cake.predict("How does it work?", api_name="/ask")
    _, dream_refs = dream.predict("How does it work?", api_name="/ask")
    assert [c["paper_id"] for c in cake_refs] == [CAKE_ID]
    assert dream_refs and CAKE_ID not in [c["paper_id"] for c in dream_refs]
    # A new session has no history at all: the bare follow-up names nothing to answer about.
    text, refs = client(server).predict("How does it work?", api_name="/ask")
    assert text == CANNOT_ANSWER and refs == []


def test_errors_reach_the_client_as_messages(server: str) -> None:
    from gradio_client.exceptions import AppError

    session = client(server)
    for blank in ("   ", "\t\n", "\x00\x07\x1b"):
        with pytest.raises(AppError, match="empty question"):
            session.predict(blank, api_name="/ask")
    # Control characters are dropped; a 20,000-character question is cut, then answered.
    text, refs = session.predict(
        "How much does\x00 Cake\x1b[2J reduce time to first token?\u202e", api_name="/ask"
    )
    assert "2.6" in text and refs[0]["paper_id"] == CAKE_ID
    huge = "How much does Cake reduce time to first token? " * 430
    text, refs = session.predict(huge, api_name="/ask")
    assert refs[0]["paper_id"] == CAKE_ID and len(text) < 4000
    asked = [turn["question"] for turn in session.predict(api_name="/history")]
    assert len(asked[-1]) <= 2000 and all(q.isprintable() for q in asked)


def test_the_api_is_documented_and_needs_the_login(server: str) -> None:
    info = client(server).view_api(print_info=False, return_format="dict")
    assert list(info["named_endpoints"]) == ["/ask", "/history"]
    params = [p["parameter_name"] for p in info["named_endpoints"]["/ask"]["parameters"]]
    assert params == ["question", "mode"]
    assert info["named_endpoints"]["/history"]["parameters"] == []
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do; gradio_client's varies
        client(server, auth=None).predict("What is Cake?", api_name="/ask")


def test_concurrent_requests_all_complete(server: str) -> None:
    """The queue keeps every request (answering runs one at a time, nothing is dropped)."""
    jobs = [
        client(server).submit("How much does Cake reduce time to first token?", api_name="/ask")
        for _ in range(4)
    ]
    results = [job.result(timeout=120) for job in jobs]
    assert all(refs and refs[0]["paper_id"] == CAKE_ID for _, refs in results)


def test_answering_shares_one_queue_slot(bundled_settings) -> None:  # type: ignore[no-untyped-def]
    """Every event that may run the LLM is in concurrency group "answer" with limit 1."""
    from ui.app import build_app

    demo = build_app(bundled_settings.with_overrides(llm="extractive"))
    answering = [fn for fn in demo.fns.values() if fn.name in ("answer", "ask")]
    assert len(answering) == 4  # submit, send, example, API
    assert {(fn.concurrency_id, fn.concurrency_limit) for fn in answering} == {("answer", 1)}
    public = [fn.api_name for fn in demo.fns.values() if fn.api_visibility == "public"]
    assert public == ["ask", "history"]
    reading = [fn for fn in demo.fns.values() if fn.name == "history"]
    assert [fn.concurrency_id for fn in reading] == ["history"]  # never waits behind answers


# The command line --------------------------------------------------------------------------
def test_serve_refuses_a_taken_port_and_warns_about_open_binding(bundled_home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--home", str(bundled_home), "--port", str(port), timeout=60)
        assert result.returncode == 2
        assert "cannot listen on 127.0.0.1" in result.stderr and "warning" not in result.stderr
        result = run_cli(
            "serve", "--home", str(bundled_home), "--host", "0.0.0.0", "--port", str(port)
        )
        assert "warning: serving on 0.0.0.0 without --auth" in result.stderr


def test_serve_rejects_a_malformed_login(bundled_home: Path) -> None:
    result = run_cli("serve", "--home", str(bundled_home), "--auth", "nopassword", timeout=60)
    assert result.returncode == 2 and "--auth must be USER:PASS" in result.stderr


def test_serve_help_lists_its_flags() -> None:
    result = run_cli("serve", "--help", timeout=60)
    assert result.returncode == 0
    for flag in ("--host", "--port", "--llm", "--auth", "--max-upload-mb"):
        assert flag in result.stdout
