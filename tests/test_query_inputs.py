"""Hostile questions through the command line: empty, whitespace, control characters, 20,000
characters. Each gets a clear one-line message or a bounded answer, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import CAKE_ID, run_cli

CAKE_Q = "How much does Cake reduce time to first token?"
LONG_Q = (CAKE_Q + " ") * 430  # about 20,000 characters (kept out of failure output below)
# Command-line arguments cannot hold NUL; the chat reads it from stdin (below).
CONTROL_Q = "How much does\x01 Cake\x1b[2J reduce\x07 time to first token?\u202e\r"


@pytest.fixture
def env(bundled_home, onnx_cache) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {"PAPERTALK_HOME": str(bundled_home), "PAPERTALK_CACHE_DIR": str(onnx_cache)}


def one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("question", ["", "   ", "\t\n \r\n", "\x01\x07\x1b", "\u200b\x7f \x0b"])
def test_empty_questions_are_refused_with_one_line(env: dict[str, str], question: str) -> None:
    assert "empty question" in one_line_error(run_cli("ask", question, "--json", env=env))
    assert "empty query" in one_line_error(run_cli("search", question, env=env))


def test_control_characters_are_dropped_and_the_question_answered(env: dict[str, str]) -> None:
    result = run_cli("ask", CONTROL_Q, "--llm", "extractive", "--json", env=env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["citations"][0]["paper_id"] == CAKE_ID and "2.6" in payload["answer"]
    assert all(ch.isprintable() for ch in payload["question"])
    found = run_cli("search", CONTROL_Q, "--json", env=env)
    assert json.loads(found.stdout)["results"][0]["paper_id"] == CAKE_ID


@pytest.mark.parametrize("llm", ["extractive", "local"])
def test_a_20000_character_question_gets_a_bounded_answer(env: dict[str, str], llm: str) -> None:
    assert len(LONG_Q) >= 20_000
    # Bounded: the question is cut to 2,000 characters and the answer to max_answer_tokens.
    result = run_cli("ask", LONG_Q, "--llm", llm, "--json", env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert len(payload["question"]) <= 2000
    assert payload["refused"] or CAKE_ID in [c["paper_id"] for c in payload["citations"]]
    assert len(payload["answer"]) < 4000
    found = run_cli("search", LONG_Q, "--json", env=env)
    assert found.returncode == 0 and json.loads(found.stdout)["results"][0]["paper_id"] == CAKE_ID


def test_chat_survives_nul_empty_and_huge_lines(env: dict[str, str]) -> None:
    full = dict(os.environ, **env)
    script = "\n".join(["\x00\x00", "   ", LONG_Q, CONTROL_Q.replace("\x01", "\x00"), "/quit"])
    result = subprocess.run(
        [sys.executable, "-m", "rag.cli", "chat", "--llm", "extractive"],
        input=script + "\n",
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout.count("2.6") >= 2  # both real questions answered
    assert "empty question" in result.stdout + result.stderr
