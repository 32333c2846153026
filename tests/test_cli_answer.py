"""`papertalk ask` as a user runs it (subprocess, bundled corpus, extractive and local)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import CAKE_ID, REPO, run_cli

CAKE_Q = "How much does Cake reduce time to first token?"


@pytest.fixture
def env(bundled_home, onnx_cache) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {"PAPERTALK_HOME": str(bundled_home), "PAPERTALK_CACHE_DIR": str(onnx_cache)}


def test_ask_json_extractive(env: dict[str, str]) -> None:
    result = run_cli("ask", CAKE_Q, "--llm", "extractive", "--json", env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    payload = json.loads(lines[0])
    assert payload["citations"][0]["paper_id"] == CAKE_ID and "2.6" in payload["answer"]
    assert payload["llm"] == "extractive" and payload["refused"] is False


def test_ask_human_output_is_labelled_and_lists_references(env: dict[str, str]) -> None:
    result = run_cli("ask", CAKE_Q, "--llm", "extractive", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("(extractive answer")
    assert "References:" in result.stdout and "[1] Compute or Load KV Cache?" in result.stdout


def test_ask_refuses_with_related_papers(env: dict[str, str]) -> None:
    for llm in ("extractive", "local"):
        result = run_cli(
            "ask", "How many GPUs were used in Cake's experiments?", "--llm", llm, "--json", env=env
        )
        payload = json.loads(result.stdout)
        assert payload["refused"] is True and payload["citations"] == []
        assert CAKE_ID in [r["paper_id"] for r in payload["related"]]


def test_a_first_question_with_nothing_to_be_about_is_refused(env: dict[str, str]) -> None:
    from rag.answer.refusal import NO_SUBJECT_REASON

    # The command line passes its (empty) filters: they are no subject either.
    for question in ("What does it do?", "Compare", "What is 2+2?"):
        result = run_cli("ask", question, "--llm", "extractive", "--json", env=env)
        payload = json.loads(result.stdout)
        assert payload["refused"] is True and payload["citations"] == [], question
        assert payload["refusal_reason"] == NO_SUBJECT_REASON, question


def test_ask_local_json(env: dict[str, str]) -> None:
    result = run_cli("ask", CAKE_Q, "--json", "--llm", "local", env=env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["llm"].split()[0] == "local"  # "local", or "local (extractive fallback)"
    assert payload["timings_ms"]["first_token"] > 0


def test_ask_with_history_file_and_compare(env: dict[str, str], tmp_path: Path) -> None:
    history = tmp_path / "h.json"
    history.write_text(json.dumps([["What is Cake?", "Cake is a KV cache loading system."]]))
    result = run_cli(
        "ask",
        "How much does it reduce time to first token?",
        "--history",
        str(history),
        "--llm",
        "extractive",
        "--json",
        env=env,
    )
    assert json.loads(result.stdout)["citations"][0]["paper_id"] == CAKE_ID

    compare = run_cli(
        "ask",
        "Compare D-Fusion and DreamDPO",
        "--mode",
        "compare",
        "--llm",
        "extractive",
        "--json",
        env=env,
    )
    payload = json.loads(compare.stdout)
    assert payload["mode"] == "compare" and payload["answer"].startswith("| paper |")
    assert {c["paper_id"] for c in payload["citations"]} == {"WVlEwFiDGH", "WIIfdh0GJu"}

    bib = tmp_path / "refs.bib"
    # Three bundled papers are about causality (only one of them about causal discovery).
    summary = run_cli(
        "ask",
        "causality",
        "--mode",
        "summarize",
        "--llm",
        "extractive",
        "--bibtex",
        str(bib),
        env=env,
    )
    assert summary.returncode == 0, summary.stderr
    assert bib.read_text().count("@inproceedings{") == 3


def test_ask_errors_are_one_line(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not a list")
    cases = [
        run_cli("ask", "   ", env=env),
        run_cli("ask", "x", "--history", str(bad), env=env),
        run_cli("ask", "x", "--history", str(tmp_path / "missing.json"), env=env),
        run_cli("ask", "x", "--llm", "nonsense", env=env),
        run_cli("ask", "x", "--llm", "gguf:/nowhere.gguf", env=env),
    ]
    for result in cases:
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_chat_session(env: dict[str, str]) -> None:
    import os
    import subprocess
    import sys

    full = dict(os.environ, **env)
    script = (
        "\n".join(
            [
                "What is Cake?",
                "How much does it reduce time to first token?",
                "/mode compare",
                "Compare D-Fusion and DreamDPO",
                "/reset",
                "/quit",
            ]
        )
        + "\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "rag.cli", "chat", "--llm", "extractive"],
        input=script,
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "2.6" in out and "(mode: compare)" in out and "| paper |" in out
    assert "(conversation cleared)" in out


def run_in_terminal(*args: str, env: dict[str, str], timeout: float = 300) -> str:
    """Run `papertalk ARGS` with stdin, stdout and stderr on a pseudo-terminal, as in a shell;
    returns everything the terminal received."""
    main, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", *args],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=dict(os.environ, **env),
        cwd=REPO,
        close_fds=True,
    )
    os.close(secondary)
    received = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the program ended and closed the terminal
                break
            if not chunk:
                break
            received += chunk
        assert process.wait(timeout=30) == 0, received.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    return received.decode("utf-8", errors="replace")


@pytest.mark.parametrize("llm", ["extractive", "local"])
def test_compare_in_a_terminal_shows_the_table_once(env: dict[str, str], llm: str) -> None:
    """In a terminal the answer is shown once (a local model's tokens run on a status line
    that the final answer replaces); pipes still get the stream on stderr."""
    shown = run_in_terminal(
        "ask", "Compare D-Fusion and DreamDPO", "--mode", "compare", "--llm", llm, env=env
    )
    header = "| paper | problem | approach |"
    assert shown.count(header) == 1, shown
    assert shown.count("References:") == 1 and "[2] D-Fusion" in shown


def test_refusals_say_why(env: dict[str, str]) -> None:
    result = run_cli(
        "ask", "How many GPUs were used in Cake's experiments?", "--llm", "extractive", env=env
    )
    lines = result.stdout.splitlines()
    phrase = lines.index("The retrieved papers do not answer this question.")
    assert lines[phrase + 1].startswith("Why: ") and "GPU" in lines[phrase + 1]
    assert "Possibly related (what each says closest to the question):" in result.stdout
    related = lines.index("Possibly related (what each says closest to the question):")
    assert "Compute or Load KV Cache" in lines[related + 1]
    assert lines[related + 2].strip().startswith("“")  # what that paper says, quoted


def test_a_refusal_answers_the_parts_the_abstract_states(env: dict[str, str]) -> None:
    question = "What does FIML integrate into one framework, and which datasets is it evaluated on?"
    result = run_cli("ask", question, "--llm", "extractive", env=env)
    lines = result.stdout.splitlines()
    phrase = lines.index("The retrieved papers do not answer this question.")
    assert lines[phrase + 1].startswith("Why: ") and "datasets" in lines[phrase + 1]
    head = lines.index("What the papers do state of the rest of the question:")
    assert "graph partition" in lines[head + 1] and "[1]" in lines[head + 1]
    assert "References:" in result.stdout and "Possibly related" not in result.stdout
    payload = json.loads(run_cli("ask", question, "--llm", "extractive", "--json", env=env).stdout)
    assert payload["refused"] is True and "graph partition" in payload["partial"]
    assert [c["paper_id"] for c in payload["citations"]] == ["WSGpXQRUtH"]


def test_the_terminal_shows_latex_as_a_reader_would_type_it() -> None:
    from rag.cli.answer import render_answer
    from rag.records import Answer, Citation

    title = "Fast $k$-means for {\\em QZR}"
    cited = Citation(1, "p1", title, ["A. Quartz"], "https://x", "", False)
    text = "We study {\\em local QZR} on 50\\% of $\\epsilon$ [1]."
    answer = Answer("q", text, "ask", "x", False)
    answer.citations = [cited]
    shown = render_answer(answer)
    assert "We study *local QZR* on 50% of ε [1]." in shown
    assert "[1] Fast k-means for *QZR* — A. Quartz https://x" in shown
    assert "\\em" not in shown and "$" not in shown
